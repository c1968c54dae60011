"""The tuner's own warnings during a run, as the run's lines (:class:`LibraryWarnings`)."""

from __future__ import annotations

import logging


class LibraryWarnings:
    """While a run shows its progress (``with LibraryWarnings(view):``), a warning the tuner's own
    layers log (``logging.getLogger("tuner...")``: the launcher's, the orphan cleanup's, the GPU
    checks') is one of the run's lines, ``[0m05s] warning: ...``, among the others; without it
    Python's last-resort handler printed the bare message on stderr between them (QA, qa222: `server
    record not updated with the group's members (...)` on a full disk). Records still reach the
    root logger's handlers (a test's ``caplog``) as before."""

    def __init__(self, view):  # a tuner.cli.progress.RunView: its line() prints the run's lines
        class ToView(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                try:
                    view.line(f"warning: {record.getMessage()}")
                except Exception:  # noqa: BLE001 - a warning never stops a run
                    self.handleError(record)

        self._logger = logging.getLogger("tuner")
        self._handler = ToView(level=logging.WARNING)

    def __enter__(self) -> "LibraryWarnings":
        self._logger.addHandler(self._handler)
        return self

    def __exit__(self, *exc) -> None:
        self._logger.removeHandler(self._handler)
