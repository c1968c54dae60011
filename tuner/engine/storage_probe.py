"""Write probes of a storage for ``tuner doctor`` (:func:`tuner.engine.doctor.check_storage`):
each raises the driver's error when the storage cannot be written, and writes nothing -- SQLite: a
write lock taken and released on an existing file, else the folder checked; a database server: a
table in a transaction rolled back (temporary once the study's tables exist; before, one where
they will be made, so a schema the role may not create in is found).
"""

from __future__ import annotations


def sqlite_writable(url: str, wait_s: float = 10) -> None:
    """Raises when the SQLite file (or, before it exists, its folder) cannot be written, or a stuck
    process holds its write lock past ``wait_s``."""
    import sqlite3

    from ..config.files import check_writable
    from .urls import sqlite_path

    path = sqlite_path(url)
    if path is None:  # in memory
        return
    if not path.exists():
        if not path.parent.is_dir():  # SQLite makes the file, never its folder: create would fail
            raise FileNotFoundError(f"folder {path.parent} does not exist; create it first")
        check_writable(path, "storage")  # the folder: create_study makes the file there
        return
    con = sqlite3.connect(str(path), timeout=wait_s)
    try:
        con.execute("BEGIN IMMEDIATE")  # a write lock: writable and not held by a stuck process
        con.rollback()
    finally:
        con.close()


def sqlite_locked_now(path) -> bool:
    """Whether another process holds the SQLite file at ``path`` locked against readers now; never
    waits (a busy timeout of 0)."""
    import sqlite3

    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=0)
    except sqlite3.Error:
        return False  # not a lock: opening the storage says what it is
    try:
        con.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.Error as exc:
        return "locked" in str(exc).lower()
    finally:
        con.close()
    return False


#: PostgreSQL settings that trade durability for speed: off, a commit the server acknowledged may
#: be lost in a crash (https://www.postgresql.org/docs/current/wal-async-commit.html). Not
#: ``synchronous_commit``: every session of the tuner sets it on for itself
#: (:func:`tuner.engine.pg_sessions.session_settings`), so a server default of off loses nothing the
#: tuner wrote; ``fsync`` is the server's alone.
DURABILITY_SETTINGS = ("fsync",)


def sql_writable(url: str) -> list[str]:
    """Raises the driver's error when the database cannot be written; returns the durability
    settings that are off (``fsync=off``: PostgreSQL only)."""
    import sqlalchemy

    from .patience import patience_s
    from .silence import raise_if_silent
    from .urls import connect_args, driver_url

    raise_if_silent(url)  # the run asked once already (tuner.engine.silence): its answer, not another wait
    # The URL as the storage connects with it: the installed driver, any password (tuner.engine.urls),
    # and its connect_timeout: the check `study run` makes before it starts hung on a server that
    # takes the connection and never answers it (QA, qa106: a frozen postmaster).
    engine = sqlalchemy.create_engine(driver_url(url), poolclass=sqlalchemy.pool.NullPool,
                                      connect_args=connect_args(url, patience_s()))
    try:
        with engine.connect() as con:
            from .storage import search_path_dropped

            dropped = search_path_dropped(con, url)  # the probe would pass in another schema (QA, qa176)
            if dropped is not None:
                raise ValueError(dropped)
            tx = con.begin()
            # Before the study's tables exist, a table where `study create` makes them (the first
            # schema of the search_path): a temporary one needs no right on that schema, and doctor
            # passed a role PostgreSQL 15 lets not create in public, whose `study create` then
            # failed (QA, qa176). Rolled back like the rest.
            fresh = not sqlalchemy.inspect(con).has_table("studies")
            kind = "TABLE" if fresh and engine.dialect.name == "postgresql" else "TEMPORARY TABLE"
            con.execute(sqlalchemy.text(f"CREATE {kind} tuner_doctor_probe (x integer)"))
            con.execute(sqlalchemy.text("INSERT INTO tuner_doctor_probe VALUES (1)"))
            tx.rollback()
            if engine.dialect.name != "postgresql":
                return []
            shown = {name: str(con.execute(sqlalchemy.text(f"SHOW {name}")).scalar()) for name in DURABILITY_SETTINGS}
            return [f"{name}={value}" for name, value in shown.items() if value == "off"]
    finally:
        engine.dispose()
