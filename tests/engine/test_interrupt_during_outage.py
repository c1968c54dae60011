"""A worker stopped by a signal while it waits out a storage outage, its measurement journaled, ends
with a last line that says where the measurement waits, not that a trial "is queued again": with the
storage away nothing could be queued (QA, qa148: "The measurement is kept in the journal", then
"interrupted: the server is stopped; a trial that was running is queued again").

A real ``tuner study run`` on the simulator, the session's own PostgreSQL server (support.pg.PgCluster)
stopped with pg_ctl while the baseline's server runs, the worker's journal entry awaited, then SIGTERM
to the worker alone, as ``kill PID`` sends it; PostgreSQL is started again afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from support.faults import fault_env, start_tuner, study_file, wait_for
from support.processes import finish
from test_baseline_outage_journaled import baseline_server_up

TUNER = [sys.executable, "-m", "tuner"]


def test_a_signal_while_the_storage_is_away_names_the_journal_not_a_queued_trial(pg_cluster, tmp_path):
    url = pg_cluster.database()
    path = study_file(tmp_path, "sig-outage", 1)
    path.write_text(path.read_text().replace("speedup: 20,", "speedup: 5,"))  # the suite outlasts the stop
    env = fault_env(TUNER_STORAGE=url, TUNER_STORAGE_PATIENCE_S="120")  # waits until the signal
    subprocess.run([*TUNER, "study", "create", str(path)], env=env, cwd=tmp_path, check=True, capture_output=True)
    workdir = tmp_path / "wd"
    log = tmp_path / "run.log"
    proc = start_tuner(["study", "run", str(path), "--workdir", str(workdir)], env, tmp_path, log)
    try:
        wait_for(lambda: baseline_server_up(workdir), 180, "the baseline's server", [proc])
        pg_cluster.stop()
        wait_for(lambda: any((workdir / "journal").glob("*.json")), 180, "the journal entry", [proc])
        os.kill(proc.pid, signal.SIGTERM)
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        finish(proc)
        if not pg_cluster.running():
            pg_cluster.start()
    out = log.read_text()
    assert code != 0 and "Traceback" not in out, out[-3000:]
    last = [line for line in out.splitlines() if line.strip()][-1]
    assert last.startswith("interrupted: the server is stopped; 1 measurement journaled in "), out[-3000:]
    assert f"{workdir / 'journal'} (baseline 0)" in last and "queued again" not in last, last
