"""`tuner launch` reads the storage only: a database no study was created in gets no tables.

QA (README "Launching the server": "a database no study was created in gets no tables either"):
a SQLite file that is a database but holds no tables (made by `sqlite3`, or left by another tool)
was opened as an Optuna storage to look for the study, which wrote Optuna's tables into it; only
an empty file and a database server's URL were looked at first.
"""

import sqlite3
from contextlib import closing

from click.testing import CliRunner
from support.older_study import OLDER_STUDY

from tuner.cli import cli


def _tables(db) -> list[str]:
    with closing(sqlite3.connect(db)) as conn, conn:
        return [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]


def test_launch_print_leaves_a_tableless_sqlite_database_without_tables(tmp_path):
    path = tmp_path / "old.yaml"  # study "old", stored in old.db beside its file
    path.write_text(OLDER_STUDY)
    db = tmp_path / "old.db"
    with closing(sqlite3.connect(db)) as conn, conn:  # a real database file (not empty) with no tables in it
        conn.execute("CREATE TABLE scratch (x)")
        conn.execute("DROP TABLE scratch")
    assert db.stat().st_size > 0 and _tables(db) == []
    r = CliRunner().invoke(cli, ["launch", str(path), "--print", "--port", "31234", "--baseline"])
    assert r.exit_code == 0, r.output
    assert "--port 31234" in r.stdout
    assert "warning" not in r.stderr, r.stderr  # nothing to compare with: no study there, no doubt
    assert _tables(db) == []


def test_status_and_a_dry_run_refuse_a_tableless_sqlite_database_and_write_nothing(tmp_path):
    """The same file under the read commands: `study status` and `study run --dry-run` opened it as a
    storage and left Optuna's 13 tables in it (QA). Status now says there is no such storage; the
    dry run, of a study not created yet, says what a run would do, and neither writes a table."""
    path = tmp_path / "old.yaml"
    path.write_text(OLDER_STUDY)
    db = tmp_path / "old.db"
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("CREATE TABLE scratch (x)")
        conn.execute("DROP TABLE scratch")
    r = CliRunner().invoke(cli, ["study", "status", str(path)])
    assert r.exit_code == 2 and "no such storage" in r.output and "no Optuna tables" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and _tables(db) == [], r.output
    r = CliRunner().invoke(cli, ["study", "run", str(path), "--dry-run"])  # no study yet: what a run would do
    assert r.exit_code == 0 and "# study old" in r.output, r.output
    assert _tables(db) == []
