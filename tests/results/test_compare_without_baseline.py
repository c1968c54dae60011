"""`tuner study compare` of a study whose baseline launch failed says why its baseline rows are
empty, as status says it (QA, qa199: empty rows, no line); a study not run yet gets no such line
(its trial counts say it)."""

import pytest
from support.cli_in_process import tuner_here
from support.model_study import one_launch_study

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import Measurement, ModelBackend
from tuner.engine.baseline import BaselineError
from tuner.engine.runner import run_study
from tuner.engine.study import create_study


class BaselineOom:
    """The performance model, except that the autoregressive server (``spec`` None) fails like an OOM."""

    def __init__(self, model: ModelBackend):
        self.model = model

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        if spec is None:
            m = Measurement(None, failure_class="oom", failure_message="Not enough memory")
            record(m)
            return m
        return self.model.measure(spec, label, record, on_event)


def test_a_missing_baseline_is_named(tmp_path):
    for name in ("ok", "bad", "new"):
        (tmp_path / f"{name}.yaml").write_text(one_launch_study(name))
    assert tuner_here("study", "run", str(tmp_path / "ok.yaml")).exit_code == 0
    config = load_study(tmp_path / "bad.yaml")
    create_study(config, config.storage)
    with pytest.raises(BaselineError):
        run_study(config, config.storage, BaselineOom(ModelBackend("k2.6-tp8-pcie", load_suite("quick"), seed=1)),
                  n_trials=1)
    assert tuner_here("study", "create", str(tmp_path / "new.yaml")).exit_code == 0

    r = tuner_here("study", "compare", str(tmp_path / "bad.yaml"), str(tmp_path / "ok.yaml"))
    assert r.exit_code == 0, r.output
    assert ("warning: A's baseline: its last launch failed (oom: Not enough memory); its baseline rows are empty"
            in r.stdout.splitlines()), r.stdout
    r = tuner_here("study", "compare", str(tmp_path / "ok.yaml"), str(tmp_path / "new.yaml"))
    assert r.exit_code == 0, r.output
    assert "baseline:" not in r.stdout, r.stdout
