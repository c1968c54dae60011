"""The progress bar of ``tuner bench``, drawn so that a failure to draw it never fails the suite."""

from __future__ import annotations

from rich.progress import Progress


class BarStream:
    """What the progress bar writes to: ``stream`` (stdout) until a write to it fails, then nothing.

    Why: the bar is a view of the suite, never worth the suite. A terminal gone mid-suite (`tuner
    bench ... --json r.json & disown`, the window closed: every write EIO) failed the bar's last
    redraw as it stopped, and the suite's result went with it, --json not saved (QA, qa172). Now the
    bar stops drawing, the result is saved, and the tables' own write says the one error line."""

    def __init__(self, stream):
        self.stream = stream
        self.failed = False

    def write(self, text: str) -> int:
        if not self.failed:
            try:
                self.stream.write(text)
            except OSError:
                self.failed = True
        return len(text)

    def flush(self) -> None:
        if not self.failed:
            try:
                self.stream.flush()
            except OSError:
                self.failed = True

    def __getattr__(self, name):  # isatty, fileno, encoding: the terminal's, for rich's choices
        return getattr(self.stream, name)


class GuardedProgress(Progress):
    """rich's Progress, its console writing through :class:`BarStream` while the bar is shown."""

    def start(self) -> None:
        # the console's own file (None: it follows sys.stdout), put back when the bar stops, so the
        # tables after it are written as before and a failure of theirs is said
        self._plain_file = getattr(self.console, "_file", None)
        self.console.file = BarStream(self.console.file)
        super().start()

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            self.console.file = self._plain_file
