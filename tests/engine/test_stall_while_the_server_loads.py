"""A tuner paused while its server loads the model: no figure is distorted (the server's clock and
its load run on), so the launch is measured once, not failed as ``interrupted`` and launched again
(QA, qa191: a 20 s pause before the server was ready said "stood still for 20 s during the suite"
and repeated the launch: a second model load of minutes on a GPU). The stall watch starts over when
the suite starts (``tuner.engine.stall.StallWatch.suite_events``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from optuna.trial import TrialState
from support.faults import baseline_server_up, fault_env, slow_start, study_file, trial_server_up, wait_for

from tuner.config.study import load_study
from tuner.engine.records import load_records
from tuner.engine.study import open_study


def test_a_tuner_paused_while_its_server_loads_measures_the_launch_once(tmp_path):
    path = study_file(tmp_path, "loading", 1, storage=f"sqlite:///{tmp_path / 'loading.db'}")
    mark = slow_start(path, 8)  # once it exists, each launch's server starts 8 s late, as a model loads
    workdir = tmp_path / "wd"
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tuner", "study", "run", str(path), "--workdir", str(workdir)],
                                stdout=out, stderr=subprocess.STDOUT, env=fault_env(TUNER_STALL_S="2"), cwd=tmp_path)
    try:
        wait_for(lambda: baseline_server_up(workdir), 180, "the baseline's server", [proc])
        mark.touch()  # the baseline started at once; the trial's server loads 8 s
        number = wait_for(lambda: trial_server_up(workdir), 300, "a trial's server", [proc])
        proc.send_signal(signal.SIGSTOP)  # the tuner stands still while its server loads
        time.sleep(4)
        proc.send_signal(signal.SIGCONT)
        assert proc.wait(timeout=300) == 0, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "stood still" not in log.read_text(), log.read_text()[-3000:]
    study = open_study("loading", load_study(path).storage)
    trial = study._storage.get_trial(study._storage.get_trial_id_from_study_id_trial_number(study._study_id, number))
    assert trial.state == TrialState.COMPLETE and trial.user_attrs["status"] == "measured", trial.user_attrs
    assert [r.status for r in load_records(study) if r.state != "WAITING"] == ["measured"]
