"""A database server that does not answer, asked once before a run and the answer reused.

QA (qa106): against a PostgreSQL that takes connections and never answers them (a postmaster
frozen, a paused VM), `tuner study run` asked seven times before it opened its storage patiently
(the tables three times, the table-creation lock twice, the write probe), each attempt waiting out
the connect timeout (:func:`tuner.engine.urls.connect_args`), with no line: 49 s of silence at
``TUNER_STORAGE_PATIENCE_S=6``, about 70 s at the defaults. Now the run's checks
(:func:`tuner.engine.preflight.preflight` with ``launching``) first :func:`ask_storage` once; the
checks after it that would connect (:func:`tuner.engine.study.made_without_decision`, the write
probe :func:`tuner.engine.storage_probe.sql_writable`) reuse that answer instead of asking again,
and the patient open (:func:`tuner.engine.patience.open_patiently`, handed the answer by
:func:`take_silence`) says the outage before it tries (the run's first line), its patience counted
from the first silence.

Contracts: only :func:`ask_storage` remembers a silence, per URL, for this process; the patient
open takes it (forgotten then), an answer forgets it, and it is stale after the patience
(:func:`tuner.engine.patience.patience_s`). A command that never asks (the read commands, `tuner
doctor`) connects as it always did. Only transient errors (:func:`tuner.engine.patience.is_transient`:
a timeout, a refusal, a server starting up) are remembered; a wrong password or a missing database
is left to the checks that say it. Nothing here raises but :func:`raise_if_silent` (the remembered
driver's error, as the check that met it would have).
"""

from __future__ import annotations

import time

#: url -> (monotonic time it was seen not answering, the driver's error then)
_SILENT: dict[str, tuple[float, BaseException]] = {}


def silent(url: str) -> bool:
    """Whether the storage at ``url`` did not answer :func:`ask_storage` within the patience."""
    from .patience import patience_s

    seen = _SILENT.get(url)
    if seen is not None and time.monotonic() - seen[0] >= patience_s():
        del _SILENT[url]
    return url in _SILENT


def raise_if_silent(url: str) -> None:
    """Raise the driver's error the storage at ``url`` did not answer with, when :func:`silent`."""
    if silent(url):
        raise _SILENT[url][1]


def take_silence(url: str) -> tuple[float, BaseException] | None:
    """When (``time.monotonic()``) and with what error the storage at ``url`` did not answer, when
    :func:`silent`; forgotten then (the patient open rides the outage from there)."""
    return _SILENT.pop(url) if silent(url) else None


def ask_storage(url: str) -> None:
    """Connect once to the database server at ``url`` (PostgreSQL; nothing for SQLite, whose locks
    the checks wait out themselves) and run ``SELECT 1``; remember a transient failure (see the
    module docstring), forget an earlier one when it answers. Never raises: any other error (no
    driver, a bad URL, a wrong password) is left to the checks after it."""
    import sqlalchemy as sa

    from .patience import is_transient, patience_s
    from .urls import connect_args, driver_url, is_postgres

    if not is_postgres(url):
        return
    try:
        engine = sa.create_engine(driver_url(url), poolclass=sa.pool.NullPool,
                                  connect_args=connect_args(url, patience_s()))
        try:
            with engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        finally:
            engine.dispose()
    except Exception as exc:  # noqa: BLE001 - see the docstring
        if is_transient(exc):
            _SILENT[url] = (time.monotonic(), exc)
        return
    _SILENT.pop(url, None)
