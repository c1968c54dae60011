"""Write probes of a storage for ``tuner doctor`` (:func:`tuner.engine.doctor.check_storage`):
each raises the driver's error when the storage cannot be written, and writes nothing -- SQLite: a
write lock taken and released on an existing file, else the folder checked; a database server, in
a transaction rolled back: before the study's tables exist, a table made where they will be made
(so a schema the role may not create in is found); once they exist, a run's writes on them
(:func:`run_rights`, statements of no rows).
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
    from .urls import connect_args, driver_url, is_postgres

    raise_if_silent(url)  # the run asked once already (tuner.engine.silence): its answer, not another wait
    # The URL as the storage connects with it: the installed driver, any password (tuner.engine.urls),
    # and its connect_timeout: the check `study run` makes before it starts hung on a server that
    # takes the connection and never answers it (QA, qa106: a frozen postmaster).
    engine = sqlalchemy.create_engine(driver_url(url), poolclass=sqlalchemy.pool.NullPool,
                                      connect_args=connect_args(url, patience_s()))
    if is_postgres(url):
        # The sessions of every other storage of the tuner's (tuner.engine.storage.open_storage): a lock
        # wait that ends (lock_timeout, at most the patience), a bounded wait for each reply. This
        # engine had neither: with another session holding a lock on the study's tables (LOCK TABLE
        # trials, CREATE INDEX, a migration, a transaction left open in psql), the probe's INSERT
        # waited for it with no end, and `tuner doctor` and the checks of `tuner study run` stood
        # silent as long as the lock was held (QA, qa205: 45 s of a 45 s lock at a patience of 8 s),
        # then said "reachable and writable".
        from .pg_sessions import session_settings, transaction_settings
        from .storage import _bound_statements

        sqlalchemy.event.listen(engine, "connect", session_settings)
        sqlalchemy.event.listen(engine, "begin", transaction_settings)
        _bound_statements(engine, url)
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
            # failed (QA, qa176). Once they exist, the writes a run makes, on those tables
            # (run_rights). Rolled back like the rest.
            tables = set(sqlalchemy.inspect(con).get_table_names())
            if "studies" in tables and engine.dialect.name == "postgresql":
                run_rights(con, tables)
            else:
                kind = "TABLE" if engine.dialect.name == "postgresql" else "TEMPORARY TABLE"
                con.execute(sqlalchemy.text(f"CREATE {kind} tuner_doctor_probe (x integer)"))
                con.execute(sqlalchemy.text("INSERT INTO tuner_doctor_probe VALUES (1)"))
            tx.rollback()
            if engine.dialect.name != "postgresql":
                return []
            shown = {name: str(con.execute(sqlalchemy.text(f"SHOW {name}")).scalar()) for name in DURABILITY_SETTINGS}
            return [f"{name}={value}" for name, value in shown.items() if value == "off"]
    finally:
        engine.dispose()


#: Optuna's tables a run adds rows to and updates (optuna/storages/_rdb/storage.py: ``session.add``,
#: the attributes' upserts; a run deletes nothing), and those it only reads (models.py).
RUN_WRITES = ("study_user_attributes", "study_system_attributes", "trials", "trial_user_attributes",
              "trial_system_attributes", "trial_params", "trial_values", "trial_intermediate_values",
              "trial_heartbeats")
RUN_READS = ("studies", "study_directions", "version_info", "alembic_version")


def run_rights(con, tables: set[str]) -> None:
    """Raises PostgreSQL's own error (SQLSTATE 42501 ``insufficient_privilege``; 25006 in a read-only
    transaction) when the session may not make a run's writes on the study's existing tables
    (``tables``: those of its schema), writing nothing: each is a statement of no rows, which the
    server checks for its rights and read-only state before it runs (``ExecCheckPermissions``,
    ``ExecCheckXactReadOnly`` in executor/execMain.c) -- ``INSERT ... SELECT ... WHERE false`` and
    ``UPDATE ... WHERE false`` on :data:`RUN_WRITES`, ``SELECT ... LIMIT 0`` on :data:`RUN_READS` --
    and ``nextval`` only on a sequence of theirs the role has no right to, which fails before it
    advances (sequence.c, ``nextval_internal``). Inside the caller's transaction, rolled back.

    Why not a temporary table, as before: a role refused ``TEMPORARY`` on the database (``REVOKE
    TEMPORARY ON DATABASE ... FROM PUBLIC``, a common hardening) failed the check, and `study run`
    refused to start, though Optuna makes no temporary table; and a role that may only read the
    tables (GRANT SELECT) passed as "reachable and writable", whose run then stopped at its first
    write (QA, qa190)."""
    import sqlalchemy

    inspector = sqlalchemy.inspect(con)
    for table in RUN_READS + RUN_WRITES:
        if table not in tables:
            continue
        name = f'"{table}"'
        if table in RUN_READS:
            con.execute(sqlalchemy.text(f"SELECT 1 FROM {name} LIMIT 0"))
            continue
        column = f'"{inspector.get_columns(table)[0]["name"]}"'
        con.execute(sqlalchemy.text(f"INSERT INTO {name} SELECT * FROM {name} WHERE false"))
        con.execute(sqlalchemy.text(f"UPDATE {name} SET {column} = {column} WHERE false"))
    refused = con.execute(sqlalchemy.text(
        "SELECT s.oid::regclass::text FROM pg_class s JOIN pg_depend d ON d.classid = 'pg_class'::regclass "
        "AND d.objid = s.oid AND d.refclassid = 'pg_class'::regclass JOIN pg_class t ON t.oid = d.refobjid "
        "WHERE s.relkind = 'S' AND t.relname = ANY(:tables) AND t.relnamespace = to_regnamespace(current_schema()) "
        # (a CASE: the planner may call has_sequence_privilege before the relkind test, on a table)
        "AND CASE WHEN s.relkind = 'S' THEN NOT has_sequence_privilege(s.oid, 'USAGE') "
        "AND NOT has_sequence_privilege(s.oid, 'UPDATE') ELSE false END"),
        {"tables": [t for t in RUN_WRITES if t in tables]}).scalars().all()
    for sequence in refused:
        con.execute(sqlalchemy.text("SELECT nextval(:s)"), {"s": sequence})  # refused: nothing advanced
