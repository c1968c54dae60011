"""A PostgreSQL server out of connection slots: another client holds every slot ``max_connections``
leaves to ordinary roles, and the worker's sessions were cut, so its next call needs a new one
(tuner/engine/patience.py ``said``, ``SLOTS_HINT``).

QA (qa154): a real `tuner study run` rode it out, but its lines said PostgreSQL's words alone
(``does not answer (OperationalError: ... FATAL:  remaining connection slots are reserved for
non-replication superuser connections)``, and past the patience the same after ``did not answer``),
naming neither who holds the slots nor what frees them; a read command's one line likewise. The
lines now add what frees a slot.

The session's own server (support.pg.PgCluster): its slots are taken by connections of this test,
all closed in ``finally``.
"""

from contextlib import contextmanager

import optuna
import psycopg2
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from tuner.cli import cli
from tuner.engine.patience import StorageUnavailable
from tuner.engine.storage import open_storage

PASSWORD = "sl%ts:h@ld/é"
#: What the lines must name: who holds the slots, where to see them, what frees one.
FIX_WORDS = ("max_connections", "CONNECTION LIMIT", "pg_stat_activity")


@contextmanager
def every_slot_held(url: str):
    """Connections as the URL's role until the server refuses one; all closed when the block ends.
    Yields the server's refusal."""
    dsn = sa.engine.make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    held = []
    try:
        while True:
            try:
                held.append(psycopg2.connect(dsn, connect_timeout=10))
            except psycopg2.OperationalError as exc:
                refusal = str(exc)
                break
            assert len(held) < 1000, "the server took 1000 connections"
        yield refusal
    finally:
        for conn in held:
            conn.close()


def test_a_server_out_of_connection_slots_is_said_with_what_frees_one(pg_cluster, monkeypatch, tmp_path):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")
    url = pg_cluster.database(user="slots", password=PASSWORD)
    storage = open_storage(url, patient=True)
    study = optuna.create_study(study_name="slots", storage=storage, directions=["maximize"])
    storage.engine.dispose()  # the worker's sessions cut: its next call needs a new one
    with every_slot_held(url) as refusal:
        assert "connection slots are reserved" in refusal or "too many clients" in refusal, refusal
        with pytest.raises(StorageUnavailable) as raised:
            study.get_trials(deepcopy=False)
        # a read command: one line, the same fix, exit 2
        shown = CliRunner().invoke(cli, ["study", "status", "--study", "slots", "--storage", url])
    said = str(raised.value)
    assert "did not answer for" in said and all(word in said for word in FIX_WORDS), said
    assert shown.exit_code == 2, shown.output
    lines = [line for line in shown.output.splitlines() if line.strip()]
    assert len(lines) == 1 and all(word in lines[0] for word in FIX_WORDS), shown.output
    assert "run it again once the storage answers" in lines[0], shown.output
    for text in (said, shown.output):
        assert PASSWORD not in text and "sl%25ts" not in text, text
    # the slots freed, the same storage reads again
    assert study.get_trials(deepcopy=False) == []
    storage.engine.dispose()
