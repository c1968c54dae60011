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

from support.faults import storage_away_during_baseline, wait_for


def test_a_signal_while_the_storage_is_away_names_the_journal_not_a_queued_trial(pg_cluster, tmp_path):
    # a patience of 120 s: the worker waits until the signal
    with storage_away_during_baseline(pg_cluster, tmp_path, "sig-outage", "run.log",
                                      TUNER_STORAGE_PATIENCE_S="120") as outage:
        proc, workdir = outage.proc, outage.workdir
        wait_for(lambda: any((workdir / "journal").glob("*.json")), 180, "the journal entry", [proc])
        os.kill(proc.pid, signal.SIGTERM)
        code = proc.wait(timeout=120)
    out = outage.log.read_text()
    assert code != 0 and "Traceback" not in out, out[-3000:]
    last = [line for line in out.splitlines() if line.strip()][-1]
    assert last.startswith("interrupted: the server is stopped; 1 measurement journaled in "), out[-3000:]
    assert f"{workdir / 'journal'} (baseline 0)" in last and "queued again" not in last, last
