"""A study whose baseline launch failed: the report's summary says so, with the class and message
status gives (QA, qa199: the page read "The baseline has not been measured yet.", and the failure
was nowhere on it, while `tuner study status` said "baseline: its last launch failed (oom: ...)")."""

from pathlib import Path

import pytest

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import Measurement, ModelBackend
from tuner.engine.baseline import BaselineError
from tuner.engine.runner import run_study
from tuner.engine.study import config_from_study, create_study, open_study
from tuner.results.report import write_report

ROOT = Path(__file__).resolve().parents[2]


class BaselineOom:
    """The performance model, except that the autoregressive server (``spec`` None) fails like an OOM."""

    def __init__(self, model: ModelBackend):
        self.model = model

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        if spec is None:
            m = Measurement(None, failure_class="oom", failure_message="Not enough memory <b>for the KV cache</b>",
                            log_tail="loading\nRuntimeError: Not enough memory", log_path=f"/tmp/{label}/server.log")
            record(m)
            return m
        return self.model.measure(spec, label, record, on_event)


def test_a_failed_baseline_is_named_on_the_page(tmp_path):
    path = tmp_path / "bf.yaml"
    path.write_text(f"""
name: bf
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.01, seed: 1}}
bench: {{suite: quick}}
budget: {{n_trials: 2}}
""")
    config = load_study(path)
    create_study(config, config.storage)
    _, _, suite = config_from_study(open_study(config.name, config.storage))
    with pytest.raises(BaselineError, match="oom"):
        run_study(config, config.storage, BaselineOom(ModelBackend("k2.6-tp8-pcie", load_suite(suite), seed=1)),
                  n_trials=2)
    page = write_report(open_study(config.name, config.storage), tmp_path / "r.html").html.read_text(encoding="utf-8")
    assert ("The baseline: its last launch failed (oom: Not enough memory &lt;b&gt;for the KV cache&lt;/b&gt;); "
            "the next <code>tuner study run</code> measures it again.") in page
    assert "has not been measured yet" not in page
