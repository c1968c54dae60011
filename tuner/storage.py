"""Where studies live: Optuna's RDB storage (an SQLite file by default, PostgreSQL for many nodes).

The URL may come from ``--storage``, from the study file, or from the environment: a value of the form
``${VAR}`` (or ``$VAR``) is read from that variable, and ``TUNER_STORAGE`` is the default variable, so a
PostgreSQL password never has to be written in a file or on a command line. Passwords are never
printed: every place that shows a URL uses :func:`redact`.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit, urlunsplit

from .yamlfile import ConfigError

ENV_VAR = "TUNER_STORAGE"

#: Heartbeat of running trials (seconds). A trial whose heartbeat is older than the grace period
#: belongs to a dead worker; it is failed and its parameters are queued again.
HEARTBEAT_INTERVAL_S = 10
HEARTBEAT_GRACE_S = 40
#: How often one configuration is re-queued after its worker died.
MAX_RETRY = 3


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
        url = f"${{{ENV_VAR}}}"
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


def open_storage(url):
    """An Optuna ``RDBStorage`` with heartbeats and retry of dead workers' trials.

    An Optuna storage object is returned as it is (benchmarks pass an ``InMemoryStorage``).

    SQLite gets a long lock timeout so several local workers can share one file; PostgreSQL gets
    ``pool_pre_ping`` so a worker survives a database restart overnight.
    """
    import optuna
    from optuna.storages import BaseStorage, RDBStorage, RetryHeartbeatStaleTrialCallback

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if isinstance(url, BaseStorage):
        return url
    engine_kwargs: dict = {}
    if url.startswith("sqlite"):
        engine_kwargs["connect_args"] = {"timeout": 60}
    else:
        engine_kwargs["pool_pre_ping"] = True
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        return RDBStorage(
            url,
            engine_kwargs=engine_kwargs,
            heartbeat_interval=HEARTBEAT_INTERVAL_S,
            grace_period=HEARTBEAT_GRACE_S,
            heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=MAX_RETRY),
        )
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy/driver errors carry the URL; never show it
        raise ConfigError("storage", redact(url) or "", f"cannot open: {type(exc).__name__}: "
                          f"{_scrub(str(exc), url)}") from None


def _scrub(text: str, url: str) -> str:
    """Remove the password from an error message that may quote the URL."""
    password = urlsplit(url).password
    text = text.replace(url, redact(url) or "")
    return text.replace(password, "***") if password else text
