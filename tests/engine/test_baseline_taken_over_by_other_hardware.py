"""A worker paused during its baseline past the heartbeat's grace: a worker on another node fails that
baseline as dead and measures it again there; the first, woken, stores its measurement as a new
trial (tuner.engine.finish re-homes it) and goes on with the other node's baseline, the study's
now. QA (qa155): that baseline was measured on other GPUs than this node's, and this node judged its
trials against it: no hardware was compared on that path. It now stops there, its measurement kept.

In process, on a real SQLite file, through the performance model, as
tests/engine/test_baseline_rehomed_after_takeover.py: the takeover is done at the woken worker's
``baseline.journaled`` kill point with the calls the other worker makes."""

from __future__ import annotations

import optuna
import pytest
from optuna.trial import TrialState
from support.model_study import SPACE

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine import finish as finish_module
from tuner.engine.asktell import ask, tell
from tuner.engine.backends import ModelBackend
from tuner.engine.baseline import OtherHardware, baseline_values
from tuner.engine.facts import HARDWARE_ATTR
from tuner.engine.runner import run_study
from tuner.engine.study import create_study
from tuner.engine.workers import interrupt

STUDY = f"""
name: demo
search_space: {SPACE}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  sim: {{profile: k2.6-tp8-pcie}}
bench: {{suite: quick}}
budget: {{n_trials: 4}}
default_seed_trials: false
"""


def test_a_baseline_taken_over_on_other_hardware_stops_the_woken_worker(tmp_path, monkeypatch):
    path = tmp_path / "demo.yaml"
    path.write_text(STUDY)
    config = load_study(path)
    create_study(config, config.storage)
    seen: dict = {}

    def at(name: str) -> None:
        if name != "baseline.journaled" or seen:
            return
        bstudy = optuna.load_study(study_name="demo.baseline", storage=config.storage)
        (dead,) = bstudy.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        assert interrupt(bstudy, dead._trial_id, "its worker stopped answering (test)")
        mine = dict(bstudy.trials[dead.number].user_attrs)
        theirs = ask(bstudy)  # the other node's baseline: its figures and its own hardware
        for k, v in {**mine, "status": "measured", "single_tok_per_s": 30.0, "tok_per_s@32": 400.0,
                     "worker": {"host": "node-b", "pid": 1, "start": 1},
                     HARDWARE_ATTR: {"name": "simulated (k2.6-tp8-nvlink)", "count": 8,
                                     "memory_total_mib": 134468, "compute_cap": "9.0"}}.items():
            theirs.set_user_attr(k, v)
        tell(bstudy, theirs.number, baseline_values(bstudy, theirs.user_attrs))
        seen.update(failed=dead.number, theirs=theirs.number, mine=mine.get(HARDWARE_ATTR))

    monkeypatch.setattr(finish_module, "kill_point", at)
    backend = ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)
    with pytest.raises(OtherHardware) as err:
        run_study(config, config.storage, backend, n_trials=1)
    assert seen["mine"]["name"] == "simulated (k2.6-tp8-pcie)"  # recorded on its trial before the launch
    assert "measured on node-b with 8 x simulated (k2.6-tp8-nvlink)" in str(err.value), err.value
    bstudy = optuna.load_study(study_name="demo.baseline", storage=config.storage)
    kept = [t for t in bstudy.trials if t.user_attrs.get("replayed_from") == seen["failed"]
            and t.state == TrialState.COMPLETE]
    assert kept  # its measurement is kept...
    # ...with the hardware it was measured on (qa155: the re-homed copy had none, and as the study's
    # baseline it would have judged no node)
    assert kept[0].user_attrs.get(HARDWARE_ATTR) == seen["mine"], kept[0].user_attrs
    main = optuna.load_study(study_name="demo", storage=config.storage)
    assert not main.trials  # no trial of this node judged against the other node's baseline
