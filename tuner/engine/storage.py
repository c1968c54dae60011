"""Where studies live: Optuna's RDB storage (an SQLite file by default, PostgreSQL for many nodes).

The URL may come from ``--storage``, from the study file, or from the environment: a value of the form
``${VAR}`` (or ``$VAR``) is read from that variable, and ``TUNER_STORAGE`` is the default variable, so a
PostgreSQL password never has to be written in a file or on a command line. Passwords are never
printed: every place that shows a URL uses :func:`redact`, and errors from the database driver are
scrubbed of the URL and the password before they are raised.

Several workers (nodes) may open the same fresh PostgreSQL database at the same instant. Optuna's
``RDBStorage`` creates its tables on first use, and two concurrent ``CREATE TABLE`` on PostgreSQL
crash one of them (``UniqueViolation ... pg_type_typname_nsp_index``, reproduced by
tests/engine/test_distributed_storage.py). :func:`open_storage` therefore builds the storage under a
PostgreSQL advisory lock (one at a time per database; it takes milliseconds), and on any database
retries a construction that lost a table-creation race.
"""

from __future__ import annotations

import os
import random
import re
import time
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

from ..config.study import STORAGE_ENV_VAR
from ..config.yamlfile import ConfigError


def _seconds_from_env(var: str, default: int) -> int:
    """A whole number of seconds from ``$var`` (tests shorten the heartbeat), else ``default``."""
    raw = os.environ.get(var)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError("environment", var, f"{raw!r} is not a whole number of seconds > 0; "
                          f"unset it for the default ({default})")
    return value


#: Heartbeat of running trials (seconds). A trial whose heartbeat is older than the grace period
#: belongs to a dead worker; it is failed and its parameters are queued again. Both may be set from
#: the environment (``TUNER_HEARTBEAT_INTERVAL_S``, ``TUNER_HEARTBEAT_GRACE_S``; the same on every
#: worker), e.g. to keep tests short; the grace period must exceed the interval.
HEARTBEAT_INTERVAL_S = _seconds_from_env("TUNER_HEARTBEAT_INTERVAL_S", 10)
HEARTBEAT_GRACE_S = _seconds_from_env("TUNER_HEARTBEAT_GRACE_S", 4 * HEARTBEAT_INTERVAL_S)
if HEARTBEAT_GRACE_S <= HEARTBEAT_INTERVAL_S:
    raise ConfigError("environment", "TUNER_HEARTBEAT_GRACE_S",
                      f"{HEARTBEAT_GRACE_S} s must exceed the heartbeat interval ({HEARTBEAT_INTERVAL_S} s), "
                      "or every running trial looks dead")
#: How often one configuration is re-queued after its worker died.
MAX_RETRY = 3

#: PostgreSQL advisory-lock key held while a worker builds its storage (creates tables); any fixed
#: 64-bit number unlikely to clash with an application's own keys ("tuner-db" in ASCII).
_SCHEMA_LOCK_KEY = 0x74756E65722D6462
#: How long a worker waits for another to finish creating the tables.
SCHEMA_LOCK_TIMEOUT_S = 120.0
#: Attempts at building the storage when a table-creation race is lost anyway (non-PostgreSQL).
_CREATE_ATTEMPTS = 5


def redact(url: str | None) -> str | None:
    """The URL with any password replaced by ``***`` (safe to print, log and store)."""
    if not url or not isinstance(url, str):
        return url if not url else f"<{type(url).__name__}>"
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))


def resolve_url(url: str | None, source: str = "--storage") -> str:
    """Expand ``${VAR}`` / ``$VAR``; with no URL at all, use ``$TUNER_STORAGE``.

    Raises :class:`ConfigError` naming the variable when it is unset.
    """
    if url is None:
        url = f"${{{STORAGE_ENV_VAR}}}"
    m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", url.strip())
    if m:
        var = m.group(1)
        value = os.environ.get(var)
        if not value:
            raise ConfigError(source, "storage", f"environment variable {var} is not set; export it "
                              f"(e.g. {var}=postgresql://user:password@host/db) or pass --storage URL")
        url = value
    if "://" not in url:
        raise ConfigError(source, "storage", f"{redact(url)!r} is not a storage URL; expected e.g. "
                          "sqlite:///studies/NAME.db or postgresql://user@host/db")
    return url


def is_postgres(url: str) -> bool:
    return urlsplit(url).scheme.split("+", 1)[0] in ("postgresql", "postgres")


def driver_url(url: str) -> str:
    """``url`` with an installed PostgreSQL driver named.

    SQLAlchemy 2.1 reads a bare ``postgresql://`` as psycopg 3; the project installs psycopg2
    (``pip install 'sglang-spec-tuner[postgres]'``), so a bare URL uses psycopg2 unless psycopg 3 is present.
    ``postgres://`` (Heroku-style) is accepted too. A URL naming its driver is left alone.
    """
    scheme, sep, rest = url.partition("://")
    if scheme not in ("postgresql", "postgres"):
        return url
    try:
        import psycopg  # noqa: F401
        driver = "psycopg"
    except ImportError:
        driver = "psycopg2"
    return f"postgresql+{driver}{sep}{rest}"


def open_storage(url):
    """An Optuna ``RDBStorage`` with heartbeats and retry of dead workers' trials.

    An Optuna storage object is returned as it is (benchmarks pass an ``InMemoryStorage``).

    SQLite gets a long lock timeout so several local workers can share one file; PostgreSQL gets
    ``pool_pre_ping`` so a worker survives a database restart overnight, and is built under an
    advisory lock so workers starting together on a fresh database do not race to create tables.
    Raises :class:`ConfigError` (URL redacted, password scrubbed) when the storage cannot be opened.
    """
    import optuna
    from optuna.storages import BaseStorage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if isinstance(url, BaseStorage):
        return url
    if url.startswith("$"):
        url = resolve_url(url)
    try:
        if is_postgres(url):
            with _schema_lock(driver_url(url)):
                return _build(url)
        return _build_with_retry(url)
    except ConfigError:
        raise
    except ModuleNotFoundError as exc:
        # No PostgreSQL driver: say how to install it, from the index or from a clone.
        raise ConfigError("storage", redact(url) or "", f"cannot open: no module {exc.name!r}; install the "
                          f"driver: pip install 'sglang-spec-tuner[postgres]' (from a clone: pip install -e "
                          f"'.[postgres]')") from None
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy/driver errors carry the URL; never show it
        raise ConfigError("storage", redact(url) or "", f"cannot open: {type(exc).__name__}: "
                          f"{_scrub(_first_line(exc), url)}") from None


def _build(url: str):
    import warnings

    from optuna.exceptions import ExperimentalWarning
    from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback

    engine_kwargs: dict = {}
    if url.startswith("sqlite"):
        engine_kwargs["connect_args"] = {"timeout": 60}
    else:
        engine_kwargs["pool_pre_ping"] = True
    # Heartbeats and the retry callback are "experimental" in Optuna 5; users need not hear it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        return RDBStorage(
            driver_url(url),
            engine_kwargs=engine_kwargs,
            heartbeat_interval=HEARTBEAT_INTERVAL_S,
            grace_period=HEARTBEAT_GRACE_S,
            heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY),
        )


def _build_with_retry(url: str):
    """Build the storage, retrying with backoff when another process won a table-creation race."""
    from sqlalchemy.exc import DBAPIError

    for attempt in range(_CREATE_ATTEMPTS):
        try:
            return _build(url)
        except DBAPIError as exc:
            msg = str(exc).lower()
            racing = any(s in msg for s in ("already exists", "duplicate", "unique", "locked"))
            if not racing or attempt == _CREATE_ATTEMPTS - 1:
                raise
            time.sleep(random.uniform(0.1, 0.5) * (attempt + 1))
    raise AssertionError("unreachable")


@contextmanager
def _schema_lock(url: str):
    """Hold a PostgreSQL session advisory lock (per database) while the block runs.

    A second worker waits (polling ``pg_try_advisory_lock``, up to :data:`SCHEMA_LOCK_TIMEOUT_S`)
    until the first has created the tables. The lock dies with its connection, so a worker killed
    while holding it blocks nobody.
    """
    import sqlalchemy as sa

    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            deadline = time.monotonic() + SCHEMA_LOCK_TIMEOUT_S
            while not conn.execute(sa.text("SELECT pg_try_advisory_lock(:k)"), {"k": _SCHEMA_LOCK_KEY}).scalar():
                conn.rollback()
                if time.monotonic() > deadline:
                    raise ConfigError("storage", redact(url) or "", f"another worker has held the table-creation "
                                      f"lock for over {SCHEMA_LOCK_TIMEOUT_S:.0f} s; is a tuner process hung?")
                time.sleep(random.uniform(0.05, 0.2))
            conn.commit()
            try:
                yield
            finally:
                conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": _SCHEMA_LOCK_KEY})
                conn.commit()
    finally:
        engine.dispose()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def _scrub(text: str, url: str) -> str:
    """Remove the password from an error message that may quote the URL."""
    password = urlsplit(url).password
    text = text.replace(url, redact(url) or "")
    text = text.replace(driver_url(url), redact(driver_url(url)) or "")
    return text.replace(password, "***") if password else text
