"""SIGTERM to a worker mid-suite while its PostgreSQL is away: the trial is left RUNNING (the cleanup
skips a storage known away, tuner/engine/trial.py ``unreachable_now``) and the next run's reaper
fails it and queues its setting again. The run's last line said "a trial that was running is queued
again", as if this run had done it (QA, qa154); now it says the trial is left for the next run.

In this process (the command's own process is not under test): a real `tuner study run` of the
performance model on the session's own PostgreSQL (support.pg.PgCluster), stopped with pg_ctl as the
trial's measurement begins; after its first stage (whose pruning call finds the storage away) a real
SIGTERM is sent to this process, whose handler (tuner.server.launcher.stop_on_signals) stops the run.
"""

from __future__ import annotations

import os
import signal

import optuna
from optuna.trial import TrialState
from support.cli_in_process import tuner_here
from support.model_study import model_study_yaml

from tuner.engine import model_backend
from tuner.engine.storage import driver_url


def test_sigterm_while_the_storage_is_away_says_the_trial_is_left_for_the_next_run(pg_cluster, tmp_path,
                                                                                   monkeypatch):
    url = pg_cluster.database()
    # one objective the first stage (the probe of single requests) already estimates: the judge asks
    (tmp_path / "left.yaml").write_text(model_study_yaml("left", url, 1, noise=0.01, seed=1)
                                        + "objectives: [single_speedup]\n")
    real = model_backend.ModelBackend.measure
    sent: list[int] = []

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        if spec is None:  # the baseline: measured and stored as usual
            return real(self, spec, label, record, on_event=on_event, on_stage=on_stage)
        pg_cluster.stop()  # the storage goes away as the trial's server measures

        def judged(i, name, partial):
            verdict = on_stage(i, name, partial)
            if not sent:
                sent.append(i)
                os.kill(os.getpid(), signal.SIGTERM)  # the handler raises SystemExit here
            return verdict

        return real(self, spec, label, record, on_event=on_event, on_stage=judged)

    monkeypatch.setattr(model_backend.ModelBackend, "measure", measure)
    run = tuner_here("study", "run", "left.yaml", cwd=tmp_path, env={"TUNER_STORAGE_PATIENCE_S": "30"})
    assert sent and run.exit_code == 143, (run.exit_code, run.output)
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("interrupted: the server is stopped; "), run.output
    assert "queued again" not in last or "next" in last, last  # not this run's doing
    assert "trial 0 was running and is left so" in last, last

    pg_cluster.start()
    storage = optuna.storages.RDBStorage(driver_url(url))
    try:
        trials = optuna.load_study(study_name="left", storage=storage).get_trials(deepcopy=False)
    finally:
        storage.engine.dispose()
    # what the line says: the trial is still RUNNING, not failed (and queued) by this run
    states = [(t.number, t.state) for t in trials]
    assert states[0] == (0, TrialState.RUNNING) and TrialState.FAIL not in dict(states).values(), states
