"""The random fault mode's audit (benchmarks/random_faults.py, ``dropped``): a measurement the
worker dropped on purpose because the tuner itself stood still, its setting measured by another
trial, is *dropped*, not lost, whoever failed its trial.

A worker paused past the heartbeat grace has its trial failed by another host's worker as stale
(tuner.engine.workers._fail_stale: the FAIL alone, no ``status`` attribute), before it wakes and
says ``trial N: the tuner itself stood still``. The audit counted only trials with ``status:
interrupted`` (failed by their own worker), so this one was counted lost (QA, qa148: random mode
seed 9103, draw 8, ``stop-worker`` 76 s: 1 lost, its setting measured again as trial 6).
"""

from __future__ import annotations

import importlib.util
import sys
from contextlib import ExitStack
from pathlib import Path

import optuna
from optuna.trial import TrialState

from tuner.engine.asktell import tell
from tuner.engine.storage import open_storage
from tuner.engine.workers import Worker, fail_running, interrupt, start_trial

ROOT = Path(__file__).resolve().parents[2]
DIST = {"x": optuna.distributions.IntDistribution(0, 9)}


def random_faults():
    spec = importlib.util.spec_from_file_location("random_faults", ROOT / "benchmarks" / "random_faults.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("random_faults", module)  # its dataclasses look their module up there
    spec.loader.exec_module(sys.modules["random_faults"])
    return sys.modules["random_faults"]


def running(study, key: str):
    """A RUNNING trial of this worker measuring the setting ``key``."""
    with ExitStack() as stack:
        trial = start_trial(study, Worker(), stack)
    trial.suggest_int("x", 0, 9)
    trial.set_user_attr("effective_key", key)
    return trial


def test_a_stalled_trial_failed_by_heartbeat_or_by_its_worker_is_dropped_not_lost(tmp_path):
    url = f"sqlite:///{tmp_path / 'audit.db'}"
    storage = open_storage(url, patient=True)
    study = optuna.create_study(study_name="audit", storage=storage, directions=["maximize"])
    try:
        stale = running(study, "4-8-64")          # 0: failed by another host as stale (the FAIL alone)
        assert fail_running(storage, stale._trial_id)
        own = running(study, "2-4-8")             # 1: failed by its own worker after the stall
        assert interrupt(study, own._trial_id, "the tuner itself stood still")
        unmeasured = running(study, "5-8-32")     # 2: stale, its setting never measured since
        assert fail_running(storage, unmeasured._trial_id)
        silent = running(study, "1-2-3")          # 3: stale, its worker never said it stood still
        assert fail_running(storage, silent._trial_id)
        for key in ("4-8-64", "2-4-8", "1-2-3"):  # 4-6: the settings measured again by the other worker
            again = running(study, key)
            again.set_user_attr("status", "measured")
            tell(study, again, [1.0])
        states = [t.state for t in study.get_trials(deepcopy=False)]
        assert states[:4] == [TrialState.FAIL] * 4 and states[4:] == [TrialState.COMPLETE] * 3
        log = tmp_path / "b.log"
        log.write_text("".join(f"[1m22s] warning: trial {n}: the tuner itself stood still for 75 s during the suite "
                               "(paused, suspended or starved): its figures are not the server's; its setting "
                               "is queued again\n" for n in (0, 1, 2)))
        # before the fix: 1 (the trial failed by its own worker only)
        assert random_faults().dropped(url, "audit", [log]) == 2
    finally:
        storage.engine.dispose()
