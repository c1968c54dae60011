"""A PostgreSQL server whose own disk fills under a worker: the study's database in a tablespace on a
small tmpfs, filled by another client, then a write of the worker (tuner/engine/patience.py
``disk_full``, ``said``).

QA (qa154): the write failed with ``DiskFull: could not extend file "pg_tblspc/...": No space left
on device`` (SQLSTATE 53100), waited out as an outage, and its lines ended there: ``(the disk is
full: free space on it)``, which SQLite's full disk gets, was missing, though the hint is meant for a
database server's own disk too. Now it is added.

The session's own server (support.pg.PgCluster); as root (CI runs the tests so), since a tmpfs is
mounted; the tablespace, its database and the mount are removed afterwards.
"""

import os
import subprocess
import uuid

import optuna
import pytest
import sqlalchemy as sa

from tuner.engine.patience import StorageUnavailable
from tuner.engine.storage import driver_url, open_storage


def test_a_write_refused_by_the_servers_full_disk_is_said_with_its_fix(pg_cluster, monkeypatch):
    if os.geteuid() != 0:
        pytest.fail("this test mounts a tmpfs for a tablespace: run it as root (CI does)")
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")
    space, db = "ts_" + uuid.uuid4().hex[:8], "tuner_test_" + uuid.uuid4().hex[:12]
    disk = pg_cluster.dir / space  # in the cluster's own folder: its user reaches it
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)], capture_output=True,
                          text=True)
    assert done.returncode == 0, f"mount tmpfs failed as root: {done.stderr.strip()}"
    socket = f"host={pg_cluster.dir}/sock&port={pg_cluster.port}"
    su = sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?{socket}", isolation_level="AUTOCOMMIT",
                          poolclass=sa.pool.NullPool)
    storage = None
    try:
        subprocess.run(["chown", "postgres", str(disk)], check=True)
        owner = sa.engine.make_url(pg_cluster.url).username
        with su.connect() as conn:
            conn.execute(sa.text(f"CREATE TABLESPACE {space} LOCATION '{disk}'"))
            conn.execute(sa.text(f'CREATE DATABASE "{db}" OWNER "{owner}" TABLESPACE {space}'))
        url = sa.engine.make_url(pg_cluster.url).set(database=db).render_as_string(hide_password=False)
        storage = open_storage(url, patient=True)
        study = optuna.create_study(study_name="full", storage=storage, directions=["maximize"])
        trial_id = storage.create_new_trial(study._study_id)
        filler = sa.create_engine(driver_url(url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
        try:
            with filler.connect() as conn:  # another client fills the disk to its last page
                conn.execute(sa.text("CREATE TABLE filler (x text)"))
                with pytest.raises(sa.exc.OperationalError, match="No space left on device"):
                    for _ in range(100):
                        conn.execute(sa.text("INSERT INTO filler SELECT repeat('x', 1000) "
                                             "FROM generate_series(1, 2000)"))
        finally:
            filler.dispose()
        with pytest.raises(StorageUnavailable) as raised:
            for i in range(2000):  # a measurement's attributes, until a page more is needed
                storage.set_trial_user_attr(trial_id, f"figure_{i}", "x" * 500)
        said = str(raised.value)
        assert "No space left on device" in said, said
        # before the fix: the line ended with PostgreSQL's words
        assert said.endswith("(the disk is full: free space on it)"), said
    finally:
        if storage is not None:
            storage.engine.dispose()
        with su.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
            conn.execute(sa.text(f"DROP TABLESPACE IF EXISTS {space}"))
        su.dispose()
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
        disk.rmdir()
