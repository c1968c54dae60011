"""`tuner study run` on a PostgreSQL that takes connections and never answers them (its postmaster
frozen, SIGSTOP) before the run's first line (tuner/engine/silence.py, preflight.py ``preflight``,
tuner/engine/study.py, tuner/engine/patience.py ``open_patiently``).

QA (qa106): the run's checks asked the storage seven times before it opened it patiently (the tables
three times, the table-creation lock twice, the write probe, then the open), each waiting out the
connect timeout, with no line: 49 s of silence at TUNER_STORAGE_PATIENCE_S=6, then only the
``error:`` line. Now the first attempt that meets the silence says so at once (the line the run says
later), every check after it reuses that answer, and the patient open says nothing twice.

In-process (click's runner): the fault is the server's, a real frozen postmaster of this session's
own cluster, thawed in ``finally``. Connections are counted with SQLAlchemy's ``do_connect`` event.
"""

import sqlalchemy as sa
from click.testing import CliRunner
from support.bounded_call import in_thread
from support.demo_study import demo_study
from test_pg_frozen_server import frozen

from tuner.cli import cli


def test_a_run_says_a_frozen_storage_at_its_first_silence_and_asks_it_once(pg_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")  # connect timeout 2 s (libpq's floor)
    study = demo_study(tmp_path, "frozen", storage=pg_cluster.database())
    attempts = []

    def counted(dialect, conn_rec, cargs, cparams):
        attempts.append(cparams.get("connect_timeout"))

    sa.event.listen(sa.engine.Engine, "do_connect", counted)
    try:
        with frozen(pg_cluster):
            out = in_thread(lambda: CliRunner().invoke(cli, ["study", "run", str(study)]))
    finally:
        sa.event.remove(sa.engine.Engine, "do_connect", counted)
    assert out, "the run waited for the frozen server with no end"
    result = out["value"]
    lines = result.stderr.splitlines() if hasattr(result, "stderr") else result.output.splitlines()
    assert result.exit_code == 75, (result.exit_code, result.output)
    # before the fix: 8 attempts at patience 2 (7 before the patient open: the tables x3, the lock
    # x2, the write probe; then the open's own); now the first question, then the open's one try
    assert len(attempts) <= 3, attempts
    # the first line says the storage does not answer, once; the last says the run gave up
    assert lines[0].startswith("storage ") and "does not answer" in lines[0], lines
    assert sum("does not answer" in line for line in lines) == 1, lines
    assert "answers again" not in result.output, lines
    assert lines[-1].startswith("error: storage ") and "did not answer" in lines[-1], lines
