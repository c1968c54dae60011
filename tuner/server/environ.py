"""The environment a server is launched with: the tuner's own, ``server.env`` over it, and what the
launch itself needs (:func:`server_environment`).

Loopback past any HTTP proxy. SGLang 0.5.23 sends itself requests while it starts, through
``requests``, which honours ``http_proxy`` / ``HTTPS_PROXY`` / ``ALL_PROXY`` and bypasses them only for
hosts ``no_proxy`` names (loopback included: nothing is bypassed by default): the warmup's
``GET /model_info`` then ``POST /generate`` on ``server_args.url()`` (``entrypoints/http_server.py``,
``_execute_server_warmup``; ``127.0.0.1`` for a wildcard bind, ``ServerArgs.url`` in ``server_args.py``)
and ``/freeze_gc``. On a node whose environment sets a proxy (many clusters do, for the Hub), those
requests go to the proxy, which cannot reach the node's loopback: after 120 failed tries SGLang logs
"Initialization failed. warmup error" and kills its own process tree, at every launch, the baseline's
first. The tuner's own probes never saw it (aiohttp ignores proxy variables). So where any proxy
variable is set, the server's host and the loopback names are added to ``no_proxy`` and ``NO_PROXY``,
both set to the same list (the entries either held are kept): only the server's requests to itself
change route.

The tuner's storage credentials stay with the tuner. Every variable of the environment reaches the
server, and a server runs code the tuner does not (SGLang, a model's remote code) and shows its
environment to whoever may read ``/proc/PID/environ``: so ``TUNER_STORAGE``, libpq's secrets
(:data:`CREDENTIAL_VARS`) and any variable holding a database URL with a password (a study's
``storage: ${MY_DB}``) are left out of what the server inherits (QA, qa190: a simulated server's
environment held ``TUNER_STORAGE=postgresql://tuner:PW@...`` and ``PGPASSWORD``). What
``server.env`` sets is the user's own choice and is kept.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

from ..config.study import STORAGE_ENV_VAR

#: Inherited variables that hold the storage's credentials (the tuner's, libpq's: its documented
#: environment variables, "Environment Variables" in PostgreSQL's libpq manual).
CREDENTIAL_VARS = frozenset({STORAGE_ENV_VAR, "PGPASSWORD", "PGSSLPASSWORD"})
#: A database URL with a password (SQLAlchemy's dialect[+driver]://user:password@...), as a value.
_DB_URL_WITH_PASSWORD = re.compile(
    r"^\s*(postgres|postgresql|mysql|mariadb|oracle|mssql|cockroachdb)(\+\w+)?://[^/@\s]*:[^@\s]*@", re.I)

#: The variables ``requests`` (urllib's ``getproxies``) reads a proxy from, either case.
PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _no_proxy_hosts(host: str) -> list[str]:
    """The names a server bound to ``host`` reaches itself by (SGLang's ``ServerArgs.url``: loopback
    for a wildcard bind), loopback always."""
    own = [] if host in ("", "0.0.0.0", "::") else [host]
    return own + [h for h in LOOPBACK if h != host]


def server_environment(extra: Mapping[str, str], host: str, base: Mapping[str, str] | None = None
                       ) -> dict[str, str]:
    """``base`` (default: this process's environment) less the storage's credentials (see the module
    docstring: :func:`_credential`) with ``extra`` over it, ``PYTHONUNBUFFERED=1``
    beneath ``extra``, and, when a proxy variable is set (non-empty), the server's own host and
    loopback appended to ``no_proxy`` and ``NO_PROXY`` (see the module docstring)."""
    inherited = {k: v for k, v in (os.environ if base is None else base).items() if not _credential(k, v)}
    env = {**inherited, "PYTHONUNBUFFERED": "1", **extra}
    if not any(env.get(var) for var in PROXY_VARS):
        return env
    # One list in both spellings: urllib reads the lowercase one first, so a NO_PROXY of the user's
    # must not be hidden behind a no_proxy that holds only ours.
    have: list[str] = []
    for var in ("no_proxy", "NO_PROXY"):
        have += [h.strip() for h in env.get(var, "").split(",") if h.strip() and h.strip() not in have]
    env["no_proxy"] = env["NO_PROXY"] = ",".join(have + [h for h in _no_proxy_hosts(host) if h not in have])
    return env


def _credential(name: str, value: str) -> bool:
    """Whether an inherited variable holds the storage's credentials: one of :data:`CREDENTIAL_VARS`
    (``TUNER_STORAGE_PATIENCE_S`` and the like are not), or a database URL with a password."""
    return name in CREDENTIAL_VARS or bool(_DB_URL_WITH_PASSWORD.match(value or ""))
