"""Storage URLs: read from the environment, parsed, shown without the password, and errors scrubbed.

Every URL is parsed and rendered with SQLAlchemy's ``URL`` object (``make_url``,
``render_as_string(hide_password=True)``), never by hand, so the password is hidden whatever
characters it holds (``/``, ``#``, ``?``, ``@``, ``%``, unicode): :func:`redact` is what every
command shows and stores, :func:`scrub` what an error message from the driver goes through (the
password removed as written, decoded and percent-encoded), :func:`driver_url` what the driver gets.

Why one module of over 400 lines: how a URL is read (where its credentials end), what of it may be
shown, which URLs are refused before anything connects, and what of a driver's error is scrubbed
are one reading of the same text; split, each part would have to parse the URL its own way again.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from pathlib import Path

from ..config.study import STORAGE_ENV_VAR
from ..config.yamlfile import ConfigError


def _split_credentials(url: str) -> tuple[str, str, bool, str, str] | None:
    """``(scheme, user, has_password, password_text, location)`` of a network URL, the
    credentials ending at the LAST ``@`` (a password may hold ``@``, ``/``, ``#``, ``?``); None when
    the URL has no credentials. The texts are as written (still percent-encoded)."""
    scheme, sep, rest = url.partition("://")
    if not sep:  # not a URL (a mistyped --storage): still find what would be the password
        scheme, rest = "", url
    if "@" not in rest or (scheme.split("+", 1)[0] == "sqlite" and (not rest or rest.startswith("/"))):
        return None  # an SQLite file path (sqlite:///file) holds no credentials, even with an @
    userinfo, _, location = rest.rpartition("@")
    user, colon, password = userinfo.partition(":")
    return scheme, user, bool(colon), password, location


def _credentials_last_at(url: str):
    """The URL read with its credentials ending at the last ``@`` (see :func:`_split_credentials`)."""
    from urllib.parse import unquote

    from sqlalchemy.engine import make_url

    split = _split_credentials(url)
    if split is None:
        return make_url(url)
    scheme, user, has_password, password, location = split
    return make_url(f"{scheme}://{location}").set(username=unquote(user),
                                                 password=unquote(password) if has_password else None)


def connect_url(url: str):
    """SQLAlchemy's ``URL`` object of a storage URL, as the tuner connects with it
    (:func:`_read_url`), a unix-socket folder percent-encoded in the host part moved to the query
    (:func:`_socket_host`)."""
    return _socket_host(_read_url(url))


def _socket_host(parsed):
    """``parsed`` with a host that percent-decodes to a folder (``%2Frun%2Fpostgresql``: libpq's own
    spelling of a unix-socket URL, https://www.postgresql.org/docs/current/libpq-connect.html,
    "postgresql://%2Fvar%2Flib%2Fpostgresql/dbname") given as ``?host=FOLDER``, the form SQLAlchemy's
    PostgreSQL drivers pass on. libpq decodes every part of its URI (fe-connect.c,
    ``conninfo_uri_decode``); SQLAlchemy does not decode the host, so the driver looked the text up
    as a host name (QA, qa190: "could not translate host name "%2Frun%2Fpostgresql" to address", a
    URL psql connects with). A query ``host`` of the URL's own stands."""
    from urllib.parse import unquote

    from sqlalchemy.engine import URL

    host = parsed.host
    if parsed.drivername.split("+", 1)[0] not in ("postgresql", "postgres") or not host or "%" not in host:
        return parsed
    folder = unquote(host)
    if not folder.startswith("/") or "host" in parsed.query:
        return parsed
    return URL.create(parsed.drivername, parsed.username, parsed.password, None, parsed.port, parsed.database,
                      {**parsed.query, "host": folder})


def _read_url(url: str):
    """SQLAlchemy's ``URL`` object of a storage URL, its credentials read as the tuner reads them.

    SQLAlchemy's own parser ends a password at its first ``@``: ``tuner:p@ss@host`` would connect
    to the host ``ss@host``. When its reading puts an ``@`` into the host or database name, the
    credentials end at the last ``@`` instead, so a password may hold any character written as
    it is (``/``, ``#``, ``?``, ``@``, ``%``, unicode) or percent-encoded; so do they when
    SQLAlchemy's reading fails (``ab@cd:Secret@host``: a "port" ``Secret@host``). Raises
    ``ValueError`` (SQLAlchemy's ``ArgumentError``) when the URL cannot be parsed at all.
    """
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except ValueError:  # e.g. "ab@cd:Secret@host": SQLAlchemy reads a port "Secret@host..."
        if _split_credentials(url) is None:
            raise
        return _credentials_last_at(url)
    if "@" in (parsed.host or "") or (parsed.host and "@" in (parsed.database or "")) or _at_in_query(url):
        return _credentials_last_at(url)
    if not parsed.host and parsed.password is not None and "@" in (parsed.database or ""):
        # A password holding "@/" (``u:p@/w@host/db``): SQLAlchemy ends it at that "@" and reads no
        # host, the database "w@host/db": the driver went to the local socket, and every line
        # showed "w", the password's end (QA, qa190). Read at the last "@" when that finds a host
        # (a database name holding "@" on a socket URL, ``u:p@/my@db``, is the rarer reading).
        last = _credentials_last_at(url)
        if last.host:
            return last
    base, query_mark, query = url.partition("?")
    if query_mark and "@" in (parsed.username or "") and "?" in (parsed.password or ""):
        # SQLAlchemy read "user@host" as the user, "port/db?...=p" as the password and the end of a
        # plain query value as the host (``tuner@db:5432/x?password=p@ss``: host "ss"; QA: connected
        # there and showed "ss"): that @ is the value's own (_at_in_query), so the URL is read
        # without its query, then given it back
        return connect_url(base).update_query_string(query)
    if parsed.get_backend_name() == "sqlite" and parsed.database and not _decodes_database():
        from urllib.parse import unquote

        return parsed.set(database=unquote(parsed.database))  # the file as SQLAlchemy 2.1 reads it
    return parsed


@functools.lru_cache(maxsize=None)
def _decodes_database() -> bool:
    """Whether SQLAlchemy decodes ``%XX`` in a URL's database part, as 2.1 does. 2.0 (the only one
    on Python 3.10: 2.1 needs 3.11) takes it as written, so the tuner's ``sqlite:///a%2520b/s.db``
    for a folder ``a%20b`` (:func:`tuner.config.paths.sqlite_url`) opened a folder ``a%2520b``:
    :func:`connect_url` decodes it there, and :func:`driver_url` writes it so 2.0 opens that file."""
    from sqlalchemy.engine import make_url

    return make_url("sqlite:///%41").database == "A"


def _at_in_query(url: str) -> bool:
    """Whether the text SQLAlchemy reads as the query holds the rest of an ``@``-holding password
    (``p@ss?word@host/db``): an ``@`` in a parameter's name, or one followed by a path in its value
    (``p@ss?x=y@host/db``). An ``@`` in a plain value (``?password=p@ss``) is the value's own."""
    query = url.partition("?")[2]
    for part in query.split("&") if query else ():
        key, _, value = part.partition("=")
        if "@" in key or re.search(r"@[^/]*/", value):
            return True
    return False


#: Query parameters of a storage URL that carry a secret (libpq reads ``?password=``).
_SECRET_PARAMS = ("password", "sslpassword")


def redact(url: str | None) -> str | None:
    """The URL with its password replaced by ``***``, whatever characters it holds (safe to print,
    log and store).

    Parsed as the tuner connects (:func:`connect_url`) and rendered with SQLAlchemy's ``URL``
    (``render_as_string(hide_password=True)``), so the host shown is the host used; a
    ``password=`` query parameter is hidden too. A text that is no URL at all (a mistyped
    ``--storage``) is shown without what would be a password in ``user:password@host``.
    """
    if not url or not isinstance(url, str):
        return url if not url else f"<{type(url).__name__}>"
    if url.partition("://")[0].split("+", 1)[0] == "sqlite":
        # A file path, shown as written; credentials (SQLCipher's sqlite+pysqlcipher://:key@/f.db) hidden.
        return url if _split_credentials(url) is None else _redact_text(url)
    try:
        parsed = connect_url(url)  # the reading the tuner connects with: its host is the one shown
    except Exception:  # noqa: BLE001 - unparseable: hide what could be a password, by text
        return _redact_text(url)
    hidden = {k: "***" for k in parsed.query if k.lower() in _SECRET_PARAMS}
    if hidden:
        parsed = parsed.update_query_dict(hidden)
    return parsed.render_as_string(hide_password=True).replace("=%2A%2A%2A", "=***")


def _redact_text(text: str) -> str:
    """``user:password@rest`` -> ``user:***@rest`` in a text that does not parse as a URL."""
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    if "@" in rest:
        userinfo, _, rest = rest.rpartition("@")
        rest = f"{userinfo.split(':', 1)[0]}:***@{rest}"
    # a ?password= of a text that does not parse is hidden by text too (QA: 'pos tgresql://h/db?password=X')
    return re.sub(rf"(?i)([?&](?:{'|'.join(_SECRET_PARAMS)})=)[^&#]*", r"\1***", f"{scheme}{sep}{rest}")


def secrets_of(url: str) -> list[str]:
    """Every form of the URL's password an error message might quote: as written in the URL,
    decoded, and percent-encoded (SQLAlchemy's and ``urllib``'s), longest first."""
    from urllib.parse import quote, quote_plus

    found: set[str] = set()
    split = _split_credentials(url)
    if split and split[2] and split[3]:
        found.add(split[3])
    for read in (_credentials_last_at, connect_url):
        try:
            parsed = read(url)
        except Exception:  # noqa: BLE001 - an unparseable URL: the text form above is what there is
            continue
        values = [parsed.password] + [v for k, v in parsed.query.items() if k.lower() in _SECRET_PARAMS]
        for value in values:
            for v in ([value] if isinstance(value, str) else list(value or ())):
                if v:
                    found.update({v, quote(v, safe=""), quote_plus(v)})
    return sorted(found, key=len, reverse=True)


def resolve_url(url: str | None, source: str = "--storage") -> str:
    """Expand ``${VAR}`` / ``$VAR``; with no URL at all, use ``$TUNER_STORAGE``.

    Raises :class:`ConfigError` naming the variable when it is unset, or holds no URL.
    """
    if url is None:
        url = f"${{{STORAGE_ENV_VAR}}}"
    key = "" if source.startswith(("--", "$")) else "storage"  # a flag names itself (QA: "--storage: storage:")
    m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", url.strip())
    origin = ""
    if m:
        var = m.group(1)
        value = os.environ.get(var)
        if not value:
            raise ConfigError(source, key, f"environment variable {var} is not set; export it "
                              f"(e.g. {var}=postgresql://user:password@host/db) or pass --storage URL")
        url, origin = value, f" (from ${var})"  # the variable is named: no flag may have been given
    if "://" not in url:
        raise ConfigError(source, key, f"{redact(url)!r}{origin} is not a storage URL; expected e.g. "
                          "sqlite:///studies/NAME.db or postgresql://user@host/db")
    return url


#: The databases a study can live in (SQLAlchemy's backend names): SQLite and PostgreSQL.
SUPPORTED_BACKENDS = ("sqlite", "postgresql")
#: What a storage URL should look like, said wherever one is refused.
EXPECTED_URL = "expected sqlite:///PATH or postgresql://USER@HOST/DB"


def scheme_problem(url: str) -> str | None:
    """Why a storage URL's scheme cannot be used here, or None: a database the tuner does not
    support (``mysql://``), a mistyped scheme (``postgresq://``; SQLAlchemy's scheme names are
    case-sensitive, so ``SQLITE://`` is refused too: said with its lower-case spelling), a driver
    SQLAlchemy does not know (``postgresql+nosuch://``), an asyncio driver (``postgresql+asyncpg://``,
    ``sqlite+aiosqlite://``), or one not installed (psycopg2). Read with SQLAlchemy's ``URL`` as the
    driver gets it (:func:`driver_url`): its backend name, whether its dialect loads, whether the
    dialect is synchronous, and whether its driver module imports. The redacted URL is named;
    never its password. A text SQLAlchemy cannot parse is refused too (QA: a port ``host:5x/db``, or a
    newline pasted into ``$TUNER_STORAGE``, ended every command in a traceback); the driver's words
    are not repeated, as they may quote a password written where the port goes."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import NoSuchModuleError

    from ..config.yamlfile import did_you_mean

    shown = redact(url)
    try:
        parsed = make_url(driver_url(url))
    except UnicodeEncodeError:  # a file name's byte not in the file-system encoding (PEP 383) (qa157)
        enc = sys.getfilesystemencoding()
        fix = "rename that folder in UTF-8" if enc == "utf-8" else "run under a UTF-8 locale (LC_ALL=C.UTF-8)"
        return (f"{shown!r} is no storage URL: its path holds a name that is not {enc} text (saved in another "
                f"encoding); {fix}, or give a storage elsewhere (--storage sqlite:////PATH/NAME.db)")
    except Exception as exc:  # noqa: BLE001 - any parse failure (int()'s ValueError for a port "5x")
        why = "its port is not digits (HOST:5432)" if isinstance(exc, ValueError) else "SQLAlchemy cannot read it"
        return (f"{shown!r} is no storage URL: {why}; {EXPECTED_URL} (a password may hold any character, "
                "'@', '/', '#', '?' and '%' too, or percent-encode it)")
    # libpq (and SQLite's file names) take NUL-terminated strings: psycopg2 refuses a URL holding
    # one before it connects ("ValueError: embedded null character"), and every command ended in a
    # traceback (QA, qa154: a password with %00). No server takes it; which part holds it is named,
    # never its text
    query = [str(v) for values in parsed.query.values() for v in (values if isinstance(values, tuple) else (values,))]
    for part, text in (("user name", parsed.username), ("password", parsed.password), ("host", parsed.host),
                       ("database name", parsed.database), ("query", "".join(query))):
        if text and "\0" in str(text):
            return (f"{shown!r} is no storage URL: its {part} holds a NUL character (%00), which no database "
                    f"takes; write it without one ({EXPECTED_URL})")
    scheme = url.partition("://")[0]
    backend = parsed.get_backend_name()
    if backend not in SUPPORTED_BACKENDS:
        lower = backend.lower() in SUPPORTED_BACKENDS or backend.lower() == "postgres"
        hint = (f" (scheme names are lower-case: {scheme.lower()!r})" if lower
                else did_you_mean(backend, SUPPORTED_BACKENDS))
        return (f"{shown!r}: scheme {scheme!r} is not supported{hint}; {EXPECTED_URL} (the tuner keeps "
                "studies in SQLite or PostgreSQL)")
    try:
        dialect = parsed.get_dialect()
    except NoSuchModuleError:
        return (f"{shown!r}: scheme {scheme!r}: SQLAlchemy has no driver {parsed.get_driver_name()!r} for "
                f"{backend}; {EXPECTED_URL} (or postgresql+psycopg2://...)")
    if getattr(dialect, "is_async", False):
        # Optuna's RDBStorage drives a synchronous engine; SQLAlchemy refuses an asyncio driver
        # there ("The asyncio extension requires an async driver"), whether or not it is installed.
        sync = "postgresql+psycopg2://" if backend == "postgresql" else "sqlite:///"
        return (f"{shown!r}: scheme {scheme!r}: {parsed.get_driver_name()!r} is an asyncio driver, and "
                f"Optuna's storage needs a synchronous one; use {sync}... ({EXPECTED_URL})")
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        name = getattr(exc, "name", None) or parsed.get_driver_name()
        install = ("pip install 'sglang-spec-tuner[postgres]' (from a clone: pip install -e '.[postgres]')"
                   if name == "psycopg2" else f"pip install {name}")
        return (f"{shown!r}: scheme {scheme!r}: its driver is not installed (no module {name!r}); "
                f"install it: {install}")
    return None


#: How long opening a PostgreSQL connection may take (seconds), at most the patience: libpq's
#: ``connect_timeout`` (https://www.postgresql.org/docs/current/libpq-connect.html; values under 2
#: count as 2). See :func:`connect_args`.
PG_CONNECT_TIMEOUT_S = 10


def connect_args(url: str, patience_s: float) -> dict:
    """The driver's keyword arguments for a connection to the storage at ``url``: for PostgreSQL a
    ``connect_timeout`` (:data:`PG_CONNECT_TIMEOUT_S`, at most ``patience_s``: the caller's
    :func:`tuner.engine.patience.patience_s`) unless the URL sets one.

    Why: libpq waits for a connection with no end by default. A server that accepts the TCP
    connection but does not answer (a postmaster frozen, ``kill -STOP``, a paused VM) hung a
    worker's reconnect after its sessions were cut past TUNER_STORAGE_PATIENCE_S (QA, qa106: 25 s
    and counting at a patience of 3 s), and a host that drops packets cost the kernel's SYN retries,
    about two minutes, per try. Timed out, the attempt is an outage like a refused one
    (``OperationalError: ... timeout expired``): retried within the patience, then one line."""
    if not is_postgres(url) or "connect_timeout" in connect_url(url).query:
        return {}
    return {"connect_timeout": int(max(2, min(PG_CONNECT_TIMEOUT_S, patience_s)))}


def is_postgres(url: str) -> bool:
    return url.partition("://")[0].split("+", 1)[0] in ("postgresql", "postgres")


def driver_url(url: str) -> str:
    """The URL the database driver gets: an installed PostgreSQL driver named, the password
    percent-encoded whatever it holds (rendered by SQLAlchemy's ``URL``).

    SQLAlchemy 2.1 reads a bare ``postgresql://`` as psycopg 3; the project installs psycopg2
    (``pip install 'sglang-spec-tuner[postgres]'``), so a bare URL uses psycopg2 unless psycopg 3 is present.
    ``postgres://`` (Heroku-style) is accepted too. A URL naming its driver keeps it. The rendered
    form also keeps Optuna's ``str.format`` of the URL (``RDBStorage``) away from a ``{`` in a password.
    """
    parsed = connect_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        try:
            import psycopg  # noqa: F401
            driver = "psycopg"
        except ImportError:
            driver = "psycopg2"
        parsed = parsed.set(drivername=f"postgresql+{driver}")
    elif _sqlite_needs_uri(parsed):
        # SQLAlchemy 2.0 renders the file as it is and reads it back so: a '?' would start a query and
        # a '{' meet Optuna's str.format. SQLite's URI form decodes %XX itself (https://sqlite.org/uri.html)
        from urllib.parse import quote

        return f"{parsed.drivername}:///file:{quote(str(Path(parsed.database).absolute()))}?uri=true"
    return parsed.render_as_string(hide_password=False)


def _sqlite_needs_uri(parsed) -> bool:
    """Whether an SQLite URL's file cannot be written as it is for an SQLAlchemy that does not decode
    ``%XX`` (:func:`_decodes_database`): it holds a character other than a letter, digit, ``/``,
    ``.``, ``-``, ``_`` or ``~``, and the URL nothing after its file."""
    from urllib.parse import quote

    file = _file_of(parsed)
    return file is not None and not parsed.query and not _decodes_database() and quote(file) != file


def _file_of(parsed) -> str | None:
    """The file a parsed SQLite URL names; None for another database, an in-memory one or SQLite's
    own URI form (``file:...`` with ``?uri=...``). Without ``uri`` in the query, ``file:typo.db`` is
    a plain file of that name, which is how SQLite's driver opens it."""
    file = parsed.database
    if parsed.get_backend_name() != "sqlite" or not file or file == ":memory:":
        return None
    # Only the driver's URI mode reads "file:" as a scheme; otherwise the name is literal, and a file
    # not checked as one is created by the first connection (QA: read-only commands left an empty
    # "file:typo.db" while saying nothing was created).
    if file.startswith("file:") and "uri" in parsed.query:
        return None
    return file


def sqlite_path(url: str) -> Path | None:
    """The file of an SQLite storage URL (absolute), None for another database or an in-memory one."""
    if url.partition("://")[0].split("+", 1)[0] != "sqlite":
        return None
    try:
        file = _file_of(connect_url(url))
    except Exception:  # noqa: BLE001 - not a URL: open_storage says so
        return None
    return None if file is None else Path(file).absolute()


def describe_error(exc: BaseException, url: str) -> str:
    """``Type: first line`` of a storage error, the URL redacted and the password scrubbed out."""
    inner = exc
    # Optuna wraps SQLAlchemy's errors (StorageInternalError); the driver's message says more. A
    # statement on a transaction whose connection broke is refused with PendingRollbackError; the
    # error before it (its context: Optuna's trial read queries again after a failure) says why,
    # as it does for PostgreSQL's refusal of a statement in a transaction an error aborted.
    seen: set[int] = set()
    while id(inner) not in seen:
        seen.add(id(inner))
        name = type(inner).__name__
        if name == "StorageInternalError" and inner.__cause__ is not None:
            inner = inner.__cause__
        elif name == "PendingRollbackError" and inner.__context__ is not None:
            inner = inner.__context__
        elif (aborted_by := _aborted_by(inner)) is not None:
            inner = aborted_by
        else:
            break
    orig = getattr(inner, "orig", None)  # SQLAlchemy's DBAPIError: the driver's own exception
    shown = orig if orig is not None else inner
    return f"{type(shown).__name__}: {scrub(_first_line(shown), url)}"


def _aborted_by(exc: BaseException) -> BaseException | None:
    """The error that aborted the transaction ``exc`` was refused on, when ``exc`` is PostgreSQL's
    ``in_failed_sql_transaction`` (SQLSTATE 25P02: "current transaction is aborted, commands ignored
    until end of transaction block") and was raised while handling it. Optuna's trial read takes any
    OperationalError for too many SQL variables and queries again in the same transaction: the
    outage line said "InFailedSqlTransaction" for a lock wait cancelled by ``lock_timeout`` (QA,
    qa106), not the cancellation that names the cause."""
    return (getattr(exc, "orig", None) or exc).__context__ if sqlstate(exc) == "25P02" else None


def sqlstate(e: BaseException) -> str | None:
    """The SQLSTATE of a driver's error (or SQLAlchemy's wrapping one); None when it has none."""
    orig = getattr(e, "orig", None) or e
    # psycopg2 names it pgcode, psycopg 3 sqlstate
    return getattr(orig, "pgcode", None) or getattr(orig, "sqlstate", None)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""


def scrub(text: str, url: str) -> str:
    """``text`` with the URL redacted and every form of its password (raw, decoded,
    percent-encoded) replaced by ``***``."""
    for form in (url, _safe(driver_url, url)):
        if form:
            text = text.replace(form, redact(form) or "")
    for secret in secrets_of(url):
        text = mask(text, secret)
    return text


def mask(text: str, secret: str) -> str:
    """``text`` with every occurrence of ``secret`` (a password) replaced by ``***``, except within a
    longer word: where the secret begins (ends) with a letter, digit or ``_``, an occurrence right
    after (before) another such character is part of a word (``postgres`` in ``postgresql``, ``p``
    in ``port``), not the password quoted. QA (qa167): with ``postgresql://postgres:postgres@...``
    (the common default) every line said ``***ql://***:***@...``, and a password ``p`` made
    ``O***erationalError ... ***ort 5432 ... timeout ex***ired``: the tuner's own words and the
    driver's, unreadable. A password quoted stands apart from letters on its sides (``:p@``,
    ``"p"``, ``password=p ``), and is still hidden."""
    if not secret:
        return text
    pattern = re.escape(secret)
    if re.match(r"\w", secret[0]):
        pattern = r"(?<!\w)" + pattern
    if re.match(r"\w", secret[-1]):
        pattern += r"(?!\w)"
    return re.sub(pattern, "***", text)


def _safe(fn, url: str) -> str | None:
    try:
        return fn(url)
    except Exception:  # noqa: BLE001 - an unparseable URL has no other form
        return None
