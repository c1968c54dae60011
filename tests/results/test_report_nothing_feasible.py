"""A study with no feasible measurement yet (nothing run, every launch failed, every measured
setting breaking the study's limits) gets no Pareto chart, one line saying why, and no baseline
star where no baseline stands (QA, qa199: an empty chart, "0 of 0 measured configs are on the
front", with the baseline drawn at (1, 1) on a study whose baseline had failed; and "no measured
trial yet" of a study whose measured trials all broke its limits)."""

import dataclasses
from pathlib import Path
from types import SimpleNamespace

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import Measurement, ModelBackend
from tuner.engine.records import MEASURED
from tuner.engine.runner import run_study
from tuner.engine.study import config_from_study, create_study, open_study
from tuner.results.report import optuna_plots, write_report
from tuner.results.report_data import load_report_data
from tuner.results.report_plots import build_charts, pareto_chart

ROOT = Path(__file__).resolve().parents[2]
STUDY = """
name: {name}
search_space: {space}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.01, seed: 1}}
bench: {{suite: quick}}
budget: {{n_trials: {n}}}
"""


class EveryLaunchOom:
    """The performance model for the baseline; every speculative launch fails like an OOM."""

    def __init__(self, model: ModelBackend):
        self.model = model

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        if spec is None:
            return self.model.measure(spec, label, record, on_event)
        m = Measurement(None, failure_class="oom", failure_message="Not enough memory")
        record(m)
        return m


def _study(tmp_path: Path, name: str, n: int, backend_of=lambda model: model):
    path = tmp_path / f"{name}.yaml"
    path.write_text(STUDY.format(name=name, space=ROOT / "search_spaces" / "eagle3.yaml", n=n))
    config = load_study(path)
    create_study(config, config.storage)
    _, _, suite = config_from_study(open_study(config.name, config.storage))
    run_study(config, config.storage, backend_of(ModelBackend("k2.6-tp8-pcie", load_suite(suite), seed=1)),
              n_trials=n)
    return open_study(config.name, config.storage)


def test_every_launch_failed_draws_no_front_and_says_why(tmp_path):
    study = _study(tmp_path, "allfail", 2, EveryLaunchOom)
    data = load_report_data(study)
    assert data.baseline is not None and not data.front
    assert "pareto" not in {c.key for c in build_charts(data)}
    page = write_report(study, tmp_path / "r.html").html.read_text(encoding="utf-8")
    assert "id=\"fig-pareto\"" not in page and "0 of 0 measured configs" not in page
    assert "The Pareto front, optimization history and parameter importances: no measured trial yet." in page


def test_no_baseline_star_without_a_baseline(tmp_path):
    data = load_report_data(_study(tmp_path, "nobase", 2))
    assert data.front
    names = [s.name for s in pareto_chart(data).panels[0].series]
    assert "baseline (autoregressive)" in names  # drawn while the baseline stands
    # the same study once its baseline no longer stands (failed when measured again, or unreadable)
    gone = dataclasses.replace(data, baseline=None)
    assert "baseline (autoregressive)" not in [s.name for s in pareto_chart(gone).panels[0].series]


def test_measured_but_every_one_infeasible_is_not_called_unmeasured():
    records = [SimpleNamespace(status=MEASURED, feasible=False)] * 3
    data = SimpleNamespace(records=records, objectives=["single_speedup", "speedup@32"])
    assert optuna_plots(data) == ([], ["The Pareto front, optimization history and parameter importances: no "
                                       "feasible measured trial yet (every measured trial, 3, is infeasible: see "
                                       "Traffic and limits)."])
