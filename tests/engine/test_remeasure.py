"""Deliberate re-measurements (tuner/engine/trial.py, REMEASURE_ATTR): a trial the sampler marks is
launched again instead of reusing the first measurement, and every reader takes the mean of a
setting's readings (merge_repeats: status, pareto, export)."""

from __future__ import annotations

import optuna
import pytest

from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine import runner
from tuner.engine.backends import ModelBackend, make_backend
from tuner.engine.records import load_records, merge_repeats
from tuner.engine.study import create_study, open_study
from tuner.engine.trial import REMEASURE_ATTR
from tuner.results.export import build_export
from tuner.results.pareto import study_front
from tuner.results.status import study_status

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]

STUDY = """name: again
search_space: {space}
server: {{backend: model, model_path: m, draft_model_path: d, model: {{profile: k2.6-tp8-pcie, seed: 2, noise: 0.03}}}}
bench: {{suite: quick}}
default_seed_trials: false
seed_trials: [{{speculative_num_steps: 3, speculative_eagle_topk: 1, speculative_num_draft_tokens: 4}}]
budget: {{n_trials: {budget}}}
"""


class Repeat(optuna.samplers.BaseSampler):
    """Always proposes steps=3 topk=1 draft=4; ``again``: marked as a deliberate re-measurement."""

    def __init__(self, space, again: bool):
        self.space, self.again = space, again

    def infer_relative_search_space(self, study, trial):
        return self.space.distributions()

    def sample_relative(self, study, trial, search_space):
        if self.again:
            study._storage.set_trial_system_attr(trial._trial_id, REMEASURE_ATTR, True)
        return {"speculative_num_steps": 3, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4}

    def sample_independent(self, study, trial, name, distribution):
        raise AssertionError("every parameter is relative")


def run(tmp_path, monkeypatch, again: bool, budget: int = 3, n_trials: int | None = None):
    path = tmp_path / "again.yaml"
    path.write_text(STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml", budget=budget))
    config = load_study(path)
    create_study(config, config.storage)
    monkeypatch.setattr(runner, "make_sampler", lambda config, space, n, listed=None: Repeat(space, again))
    backend = ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.03, seed=2)
    summary = runner.run_study(config, config.storage, backend, n_trials=n_trials)
    return open_study("again", config.storage), backend, summary


def test_a_marked_trial_is_launched_again_and_readers_average(tmp_path, monkeypatch):
    study, backend, summary = run(tmp_path, monkeypatch, again=True)
    records = load_records(study)
    assert [r.status for r in records] == ["measured"] * 3 and backend.calls == 4  # + the baseline
    assert [r.attrs.get("remeasure_of") for r in records] == [None, 0, 0]
    readings = [r.values for r in records]
    assert len({tuple(v) for v in readings}) == 3  # three draws of the noise
    [merged] = merge_repeats(records)
    assert merged.number == 0 and merged.attrs["measurements"] == 3 and merged.attrs["measured_in"] == [0, 1, 2]
    for i in range(2):
        assert merged.values[i] == pytest.approx(sum(v[i] for v in readings) / 3)
    assert merged.attrs["single_tok_per_s"] == pytest.approx(sum(r.attrs["single_tok_per_s"] for r in records) / 3)
    front = study_front(study)
    assert [p.number for p in front.points] == [0] and front.points[0].values == tuple(merged.values)
    status = study_status(study)
    assert [t["remeasure_of"] for t in status["trials"]] == [None, 0, 0] and status["front"] == [0]
    header = "\n".join(build_export(study, "single").header)
    assert "mean of 3 measurements (trials 0, 1, 2)" in header
    # a pick by trial number, any of the three, stands for the setting's mean too (QA: the
    # header showed the one reading, other figures than pareto's)
    for number in (0, 2):
        exp = build_export(study, str(number))
        assert exp.record.values == merged.values
        assert "mean of 3 measurements (trials 0, 1, 2)" in "\n".join(exp.header)


def test_unmarked_repeats_reuse_the_first_measurement(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MAX_IDLE_PROPOSALS", 4)
    study, backend, summary = run(tmp_path, monkeypatch, again=False)
    records = load_records(study)
    assert backend.calls == 2 and records[0].status == "measured"  # baseline + the seed
    assert [r.status for r in records[1:]] == ["reused"] * 4 and summary.reused == 4
    assert all(r.attrs["reused_from"] == 0 and r.values == records[0].values for r in records[1:])


PRUNING = """name: again-pruned
search_space: {space}
server: {{backend: model, model_path: m, draft_model_path: d, model: {{profile: k2.6-tp8-pcie, seed: 2, noise: 0.02}}}}
bench: {{suite: seed}}
default_seed_trials: false
seed_trials:   # the first, a large tree, is dominated at C=32 by the others
  - {{speculative_num_steps: 7, speculative_eagle_topk: 8, speculative_num_draft_tokens: 64}}
  - {{speculative_num_steps: 3, speculative_eagle_topk: 1, speculative_num_draft_tokens: 4}}
  - {{speculative_num_steps: 4, speculative_eagle_topk: 4, speculative_num_draft_tokens: 16}}
  - {{speculative_num_steps: 5, speculative_eagle_topk: 8, speculative_num_draft_tokens: 32}}
budget: {{n_trials: 6, prune: {{startup_trials: 4}}}}
"""


class Then(optuna.samplers.BaseSampler):
    """After the four seeds: trial 4 measures the first seed again (marked), trial 5 a new setting
    as dominated as it (unmarked)."""

    def __init__(self, space):
        self.space = space

    def infer_relative_search_space(self, study, trial):
        return self.space.distributions()

    def sample_relative(self, study, trial, search_space):
        if trial.number == 4:
            study._storage.set_trial_system_attr(trial._trial_id, REMEASURE_ATTR, True)
            return {"speculative_num_steps": 7, "speculative_eagle_topk": 8, "speculative_num_draft_tokens": 64}
        return {"speculative_num_steps": 7, "speculative_eagle_topk": 8, "speculative_num_draft_tokens": 56}

    def sample_independent(self, study, trial, name, distribution):
        raise AssertionError("every parameter is relative")


def test_a_re_measurement_is_never_pruned(tmp_path, monkeypatch):
    """Pruning is on and prunes a new dominated setting, but the sampler's re-measurement of a
    dominated setting runs the whole suite: it is there to settle that setting's value."""
    path = tmp_path / "again.yaml"
    path.write_text(PRUNING.format(space=ROOT / "search_spaces" / "eagle3.yaml"))
    config = load_study(path)
    create_study(config, config.storage)
    space = SearchSpace.load(config.search_space)
    monkeypatch.setattr(runner, "make_sampler", lambda config, space_, n, listed=None: Then(space))
    backend = make_backend(config, space, load_suite(config.bench.suite))  # with the staged order
    runner.run_study(config, config.storage, backend)
    records = load_records(open_study("again-pruned", config.storage))
    assert [r.status for r in records[:4]] == ["measured"] * 4
    again, new = records[4], records[5]
    assert again.status == "measured" and again.attrs["remeasure_of"] == 0 and again.values is not None
    assert new.status == "pruned", "the setup must prune an unmarked dominated setting"


def status_printed(tmp_path) -> str:
    """What ``tuner study status again.yaml`` prints."""
    from click.testing import CliRunner

    from tuner.cli import cli

    args = ["study", "status", str(tmp_path / "again.yaml")]
    return CliRunner().invoke(cli, args, catch_exceptions=False).output


def test_status_states_the_run_to_run_spread_of_the_repeated_readings(tmp_path, monkeypatch):
    """Six readings of one setting at 3% noise: status reports, per objective, the standard deviation
    of their logs (the relative spread a launch carries) and says where it comes from; the CLI line
    warns when a spread exceeds 3%."""
    import math
    import statistics

    from tuner.results.status import SPREAD_WARN

    study, backend, summary = run(tmp_path, monkeypatch, again=True, budget=6)
    records = load_records(study)
    assert [r.status for r in records] == ["measured"] * 6
    spread = study_status(study)["spread"]
    assert spread["settings"] == 1 and spread["readings"] == 6
    for i, got in enumerate(spread["objectives"]):
        want = math.expm1(statistics.stdev(math.log(r.values[i]) for r in records))
        assert got == pytest.approx(want, rel=1e-9)
        assert 0.01 < got < 0.06  # the backend's 3% noise, read from six draws
    out = status_printed(tmp_path)
    line = next(x for x in out.splitlines() if x.startswith("run-to-run spread:"))
    assert "from 1 setting measured more than once, 6 readings" in line
    for o, v in zip(study_status(study)["objectives"], spread["objectives"]):
        assert f"{o} {v:.1%}" in line
    assert ("measure the candidates again with `tuner study confirm`" in out) == any(
        v > SPREAD_WARN for v in spread["objectives"])


def test_without_a_repeated_setting_the_spread_is_not_known(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "MAX_IDLE_PROPOSALS", 2)
    study, backend, summary = run(tmp_path, monkeypatch, again=False)
    assert study_status(study)["spread"] is None
    out = status_printed(tmp_path)
    assert "run-to-run spread: not known yet (no setting measured more than once)" in out
