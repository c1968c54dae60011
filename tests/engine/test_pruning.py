"""Pruning (tuner/engine/pruning.py): the decision (a dominated partial result is pruned, a close one
is not, noise widens the margin), the measured noise, and whole studies on the model backend: pruned
trials are PRUNED with their partial figures as intermediate values, never on the front, never
exported, never launched again; the switch turns it off; the modelled-time budget is honoured."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import pytest
from support.landscapes import SPACE
from support.prepared_once import prepared_once

from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import make_backend, study_plan
from tuner.engine.baseline import find_baseline
from tuner.engine.pruning import STAGES_ATTR, StageNoise, front_verdict, stage_noise
from tuner.engine.records import CONSTRAINT, MEASURED, PRUNED, load_records
from tuner.engine.runner import RunSummary, run_study
from tuner.engine.study import create_study, extend_budget, open_study
from tuner.results.pareto import PickError, study_front
from tuner.results.status import study_status

QUIET = StageNoise(bias=[0.0, 0.0], sd=[0.0, 0.0], trials=10)


# -- the decision ------------------------------------------------------------------------------------
def test_a_partial_result_dominated_beyond_the_noise_is_pruned():
    front = [(3, [3.0, 0.5]), (7, [2.0, 1.0])]
    v = front_verdict([1.8, 0.45], front, StageNoise([0, 0], [0.01, 0.0], 6), z=2.5, margin=0.01)
    # both points beat it on both objectives by more than 2.5 sd + 1%; trial 3 by the wider least gap
    # (11% on speedup@32 against 11% on single_speedup for trial 7)
    assert v.pruned and v.by == 3
    assert all(g > n for g, n in zip(v.gaps, v.needed))
    assert front_verdict([1.8, 0.45], front[1:], StageNoise([0, 0], [0.01, 0.0], 6), z=2.5, margin=0.01).by == 7


def test_a_close_partial_result_is_not_pruned():
    front = [(3, [3.0, 0.5])]
    # dominated on both, but by less than the 1% margin on one: it may be on the front once complete
    assert not front_verdict([2.98, 0.40], front, QUIET, z=2.5, margin=0.01).pruned
    assert front_verdict([2.96, 0.40], front, QUIET, z=2.5, margin=0.01).pruned
    # better than every front point on one objective: never dominated
    assert not front_verdict([3.5, 0.01], front, QUIET, z=2.5, margin=0.01).pruned


def test_a_partial_result_equal_to_a_front_point_is_not_pruned():
    # pruning needs the front to beat the estimate by MORE than z sd + margin on every objective: with
    # no noise and no margin, the very figures of a front point are no worse than it, and measure on
    # (mutation testing: pruning at a slack of exactly 0 passed every test)
    front = [(3, [3.0, 0.5])]
    assert not front_verdict([3.0, 0.5], front, QUIET, z=2.5, margin=0.0).pruned
    assert front_verdict([2.9, 0.4], front, QUIET, z=2.5, margin=0.0).pruned


def test_noise_widens_the_margin():
    front = [(3, [3.0, 0.5])]
    estimate = [2.85, 0.40]  # 5% below on the first objective
    assert front_verdict(estimate, front, StageNoise([0, 0], [0.01, 0.0], 6), z=2.5, margin=0.01).pruned
    noisy = front_verdict(estimate, front, StageNoise([0, 0], [0.02, 0.0], 6), z=2.5, margin=0.01)
    assert not noisy.pruned and noisy.needed[0] == pytest.approx(2.5 * 0.02 + math.log1p(0.01))
    # a measured bias moves the estimate: partials that read 4.5% low are corrected up
    assert not front_verdict(estimate, front, StageNoise([0.045, 0], [0.0, 0.0], 6), z=2.5, margin=0.01).pruned


def test_the_noise_is_learned_from_complete_trials_and_a_prior():
    exact = [False, True]
    prior = [0.01, 0.01]
    # no history: the prior alone; a complete figure has no error
    alone = stage_noise([], prior, exact)
    assert alone.sd == [pytest.approx(0.01), 0.0] and alone.bias == [0.0, 0.0]
    # partial estimates that read 2% low +- 1%: a bias towards +2% and a spread near 1%
    history = [([1.0 * (1.02 + d), 0.5], [1.0, 0.5]) for d in (-0.01, 0.0, 0.01, -0.01, 0.0, 0.01) * 5]
    learned = stage_noise(history, prior, exact)
    assert learned.bias[0] == pytest.approx(math.log(1.02), abs=0.002) and learned.trials == 30
    assert 0.01 <= learned.sd[0] < 0.012 and learned.sd[1] == 0.0
    scattered = stage_noise([([1.0 + d, 0.5], [1.0, 0.5]) for d in (-0.05, 0.05) * 15], prior, exact)
    assert scattered.sd[0] > 0.04  # a study whose partials scatter widely gets a wide margin
    # the complete trials are the ones not pruned: partials that read high are over-represented, so a
    # history that says "partials read high" or "they hardly err" never makes pruning bolder
    survivors = stage_noise([([0.97, 0.5], [1.0, 0.5])] * 30, prior, exact)
    assert survivors.bias[0] == 0.0 and survivors.sd[0] == pytest.approx(0.01)


# -- whole studies on the model backend ------------------------------------------------------------
STUDY = """name: {name}
search_space: {space}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 3}}
bench: {{suite: seed}}
sampler: {{seed: 2}}
seed_trials:   # clearly dominated by the default seeds: pruned after the probe
  - {{speculative_num_steps: 1, speculative_eagle_topk: 8, speculative_num_draft_tokens: 8}}
  - {{speculative_num_steps: 7, speculative_eagle_topk: 8, speculative_num_draft_tokens: 64}}
budget: {budget}
"""


def make(tmp_path, name: str, budget: str = "{n_trials: 10}"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(STUDY.format(name=name, space=SPACE, budget=budget))
    config = load_study(path)
    create_study(config, config.storage)
    return config, make_backend(config, SearchSpace.load(config.search_space), load_suite(config.bench.suite))


def _run_pruned_study(folder):
    """The 10-trial study the tests below read, run once per session (support/prepared_once.py), with
    its run's summary beside it: each xdist worker that drew one of them ran the whole study again."""
    config, backend = make(folder, "pruned")
    summary = run_study(config, config.storage, backend)
    (folder / "summary.json").write_text(json.dumps(dataclasses.asdict(summary)))


@pytest.fixture(scope="module")
def pruned_folder(tmp_path_factory):
    return prepared_once(tmp_path_factory, "pruned", _run_pruned_study)


@pytest.fixture
def pruned_study(pruned_folder, tmp_path):
    """The study (a copy of its own: a test may add trials), a backend made from its file as the run's
    was, the run's summary and the study opened."""
    path = Path(shutil.copytree(pruned_folder, tmp_path / "pruned")) / "pruned.yaml"
    config = load_study(path)
    backend = make_backend(config, SearchSpace.load(config.search_space), load_suite(config.bench.suite))
    summary = RunSummary(**json.loads((path.parent / "summary.json").read_text()))
    return config, backend, summary, open_study(config.name, config.storage)


def test_dominated_trials_are_pruned_with_their_partial_figures_as_intermediate_values(pruned_study):
    config, backend, summary, study = pruned_study
    records = {r.effective.label(): r for r in load_records(study) if r.effective}
    assert summary.pruned >= 2 and summary.measured + summary.pruned == 10
    for label in ("steps=1 topk=8 draft=8", "steps=7 topk=8 draft=64"):
        r = records[label]
        assert r.state == "PRUNED" and r.status == PRUNED and r.values is None and not r.feasible
        assert r.attrs["pruned_at"] == "probe" and r.attrs["pruned_by"] is not None
        assert "single_tok_per_s" not in r.attrs and r.attrs["partial"]["single_tok_per_s"] > 0
        t = study.trials[r.number]
        estimates = r.attrs[STAGES_ATTR][0]["estimates"]
        assert t.intermediate_values == {0: pytest.approx(estimates[0]), 1: pytest.approx(estimates[1])}
        assert t.constraints[CONSTRAINT] > 0
    # the first four measurements (the startup trials) ran the whole suite
    first = sorted(load_records(study), key=lambda r: r.number)[:4]
    assert all(r.status == MEASURED for r in first)


def test_a_pruned_trial_costs_less_gpu_time_than_a_whole_suite(pruned_study):
    _, _, _, study = pruned_study
    records = load_records(study)
    pruned = [r.attrs["model_duration_s"] for r in records if r.status == PRUNED]
    probe = [r.attrs["model_duration_s"] for r in records if r.status == PRUNED and r.attrs["pruned_at"] == "probe"]
    whole = [r.attrs["model_duration_s"] for r in records if r.status == MEASURED]
    load = 600.0  # the profile's runtime.load_s
    assert max(pruned) < min(whole) and min(pruned) > load
    # the probe: 5 short requests and one batch at C=32 (slow for a large tree: up to 3 minutes)
    assert len(probe) >= 2 and max(probe) - load < 0.25 * (min(whole) - load)


def test_pruned_trials_are_never_on_the_front_nor_exported(pruned_study):
    _, _, _, study = pruned_study
    records = load_records(study)
    pruned = [r.number for r in records if r.status == PRUNED]
    status = study_status(study)
    assert not set(pruned) & set(status["front"])
    rows = {t["number"]: t for t in status["trials"]}
    assert all(rows[n]["status"] == PRUNED and rows[n]["pruned_at"] and rows[n]["pruned_by"] is not None
               for n in pruned)
    assert status["counts"][PRUNED] == len(pruned)
    front = study_front(study)
    assert not {p.number for p in front.points} & set(pruned)
    from tuner.results.pareto import pick_record

    with pytest.raises(PickError, match="pruned after stage"):
        pick_record(front, records, str(pruned[0]))


def test_the_report_lists_pruned_trials_apart(pruned_study, tmp_path):
    from tuner.results.report import write_report

    _, _, _, study = pruned_study
    page = write_report(study, tmp_path / "r.html").html.read_text()
    section = page[page.index("<h2>Pruned trials</h2>"):]
    section = section[:section.index("</section>")]
    pruned = [r for r in load_records(study) if r.status == PRUNED]
    assert section.count("<tr>") == 1 + len(pruned)  # the head and one row each
    assert "stopped after probe: trial" in section and "steps=1 topk=8 draft=8" in section


def test_every_measurement_follows_the_same_order(pruned_study):
    config, backend, _, study = pruned_study
    names = [s.name for s in study_plan(config, load_suite(config.bench.suite))]
    assert [s.name for s in backend.plan] == names
    base = find_baseline(study)
    assert [st["stage"] for st in base.attrs["stage_figures"]] == names
    for r in load_records(study):
        if r.status in (MEASURED, PRUNED) and r.attrs.get(STAGES_ATTR):
            got = [st["stage"] for st in r.attrs[STAGES_ATTR]]
            assert got == names[:len(got)]
            assert len(got) == (len(names) - 1 if r.status == MEASURED else got.index(r.attrs["pruned_at"]) + 1)


def test_a_pruned_setting_is_not_launched_again(pruned_study):
    config, backend, _, study = pruned_study
    pruned = next(r for r in load_records(study) if r.status == PRUNED)
    study.enqueue_trial(study.trials[pruned.number].params)
    extend_budget(study, 1)
    calls = backend.calls
    run_study(config, config.storage, backend, n_trials=1)
    again = load_records(open_study(config.name, config.storage))
    repeat = next(r for r in again if r.number > pruned.number and r.attrs.get("pruned_from") == pruned.number)
    assert repeat.state == "PRUNED" and repeat.values is None
    assert backend.calls == calls + 1  # the run's one launch went to a new setting, not the repeat


def test_the_switch_turns_pruning_off(tmp_path):
    # its six seeds, the two that a pruning study stops after the probe among them
    config, backend = make(tmp_path, "unpruned", "{n_trials: 6, prune: false}")
    assert not config.budget.prune.enabled
    summary = run_study(config, config.storage, backend)
    records = load_records(open_study(config.name, config.storage))
    assert summary.pruned == 0 and summary.measured == 6
    assert {"steps=1 topk=8 draft=8", "steps=7 topk=8 draft=64"} <= {r.effective.label() for r in records}
    assert all(r.status == MEASURED for r in records)
    # the partial estimates are still recorded: the same figures whether or not a study prunes
    assert all(len(r.attrs[STAGES_ATTR]) == 4 for r in records)


def test_a_timeout_is_modelled_gpu_time_on_the_model_backend(tmp_path):
    config, backend = make(tmp_path, "night", "{timeout: 3h}")
    assert config.budget.n_trials is None  # the time alone is the budget
    summary = run_study(config, config.storage, backend, timeout_s=config.budget.timeout_s)
    study = open_study(config.name, config.storage)
    spent = find_baseline(study).attrs["model_duration_s"] + sum(
        r.attrs.get("model_duration_s", 0.0) for r in load_records(study))
    assert spent <= 3 * 3600 and "modelled GPU time" in summary.stopped_because
    whole = [r.attrs["model_duration_s"] for r in load_records(study) if r.status == MEASURED]
    assert spent + 1.1 * sum(whole[-5:]) / len(whole[-5:]) > 3 * 3600  # the next would not have fitted
    assert summary.measured >= 4  # ~40 min of baseline, then ~25 min per whole trial


def test_a_continued_run_keeps_to_its_timeout(tmp_path):
    """QA: a second run of a study with --timeout had no whole-suite figure of its own yet, expected
    0 s of the next trial and overran 5 minutes by 6; it now expects the study's stored ones."""
    config, backend = make(tmp_path, "again", "{n_trials: 6}")
    run_study(config, config.storage, backend, n_trials=2)
    study = open_study(config.name, config.storage)
    whole = [r.attrs["model_duration_s"] for r in load_records(study) if r.status == MEASURED]
    assert whole and min(whole) > 600  # a model load and a whole suite each
    summary = run_study(config, config.storage, backend, timeout_s=min(whole) / 2)
    assert summary.launches == 0 and "modelled GPU time" in summary.stopped_because
    summary = run_study(config, config.storage, backend, timeout_s=1.2 * max(whole), n_trials=3)
    assert summary.launches == 1  # one fits, a second would not


def test_the_front_a_trial_is_judged_against_averages_a_setting_s_readings():
    """A setting measured again stands on the front by the mean of its readings, as in status and
    export: its lucky first reading must not prune a setting the mean does not dominate."""
    import optuna
    from optuna.trial import create_trial

    from tuner.config.study import PruneSettings
    from tuner.engine.pruning import FrontPruner

    study = optuna.create_study(directions=["maximize", "maximize"])
    for key, values in (("a", [3.0, 0.5]), ("a", [2.0, 0.3]), ("b", [2.6, 0.35])):
        study.add_trial(create_trial(values=values, user_attrs={"status": MEASURED, "effective_key": key},
                                     system_attrs={"constraints": [0.0]}))
    _, front = FrontPruner(["single_speedup", "speedup@32"], [], PruneSettings())._complete_and_front(study, 99)
    assert sorted((n, v) for n, v in front) == [(0, [2.5, 0.4]), (2, [2.6, 0.35])]


def test_failed_launches_do_not_shrink_the_expected_trial(tmp_path):
    """QA: a failed launch (a model load, no suite) counted as a whole-suite duration, so after a few
    failures the run expected the next trial to take a load's time and started a whole suite that
    overran the budget (3h20m spent as 3h29m). The next trial is judged by suites that ran whole."""
    from support.landscapes import table_from_profile, write_table

    unlisted = [(2, 2, 4), (3, 2, 4), (4, 2, 4), (5, 2, 4), (6, 2, 4), (7, 2, 4)]
    write_table(tmp_path / "node.json", table_from_profile(
        suite="seed", load_s=600, keep=lambda s: (s.num_steps, s.eagle_topk, s.num_draft_tokens) not in unlisted))
    seeds = "".join(f"\n  - {{speculative_num_steps: {a}, speculative_eagle_topk: {b}, "
                    f"speculative_num_draft_tokens: {c}}}" for a, b, c in [(2, 1, 3)] + unlisted)

    def night(name: str, budget: str):
        path = tmp_path / f"{name}.yaml"
        path.write_text(STUDY.replace("{{profile: k2.6-tp8-pcie, noise: 0.02, seed: 3}}",
                                      "{{landscape: node.json, noise: 0.02, seed: 3}}")
                        .split("seed_trials:")[0].format(name=name, space=SPACE)
                        + f"budget: {budget}\ndefault_seed_trials: false\nseed_trials:{seeds}\n")
        config = load_study(path)
        create_study(config, config.storage)
        return config, make_backend(config, SearchSpace.load(config.search_space), load_suite(config.bench.suite))

    # the same draws in a study without a timeout: one whole suite, then six launches that fail
    config, backend = night("probe", "{n_trials: 7}")
    run_study(config, config.storage, backend)
    study = open_study(config.name, config.storage)
    records = load_records(study)
    assert [r.status for r in records] == [MEASURED] + ["failed"] * 6
    spent = find_baseline(study).attrs["model_duration_s"] + sum(r.attrs["model_duration_s"] for r in records)
    # room for more than a failed launch, far less than a whole suite
    config, backend = night("short", f"{{timeout: {spent + 1000:.0f}}}")
    run_study(config, config.storage, backend, timeout_s=config.budget.timeout_s)
    study = open_study(config.name, config.storage)
    total = find_baseline(study).attrs["model_duration_s"] + sum(
        r.attrs.get("model_duration_s", 0.0) for r in load_records(study))
    assert total <= config.budget.timeout_s


def test_a_setting_measured_whole_after_a_prune_is_read_as_measured(tmp_path):
    """QA: two workers, one killed after journaling a whole measurement of a setting; the other
    requeued it and pruned it; the killed one's measurement, replayed, came after the prune (a
    re-homed trial, a later number). The setting then stood on the front by its whole measurement,
    yet every later proposal of it -- the sampler's re-measurement of a front point included -- was
    told "pruned in trial N" and never launched. A whole measurement of a setting is its prior
    measurement, whatever was pruned before it."""
    from optuna.trial import TrialState, create_trial

    config, backend = make(tmp_path, "rehomed", "{n_trials: 6}")  # its six seed trials
    run_study(config, config.storage, backend)
    study = open_study(config.name, config.storage)
    whole = next(t for t in study.trials if t.user_attrs.get("status") == MEASURED)
    params = {"speculative_num_steps": 3, "speculative_eagle_topk": 2, "speculative_num_draft_tokens": 6}
    effective = {"num_steps": 3, "eagle_topk": 2, "num_draft_tokens": 6}
    assert all(t.user_attrs.get("effective") != effective for t in study.trials)
    setting = {"requested": effective, "effective": effective, "effective_key": "3-2-6"}
    study.add_trial(create_trial(state=TrialState.PRUNED, params=params, distributions=whole.distributions,
                                 user_attrs={**setting, "status": PRUNED, "pruned_at": "probe", "pruned_by": 0},
                                 system_attrs=whole.system_attrs, intermediate_values={0: 1.0, 1: 0.1}))
    study.add_trial(create_trial(values=whole.values, params=params, distributions=whole.distributions,
                                 user_attrs={**whole.user_attrs, **setting, "replayed_from": 99},
                                 system_attrs=whole.system_attrs))
    measured_again = len(study.trials) - 1
    study.enqueue_trial(params)
    extend_budget(study, 3)  # the two trials added count as launches
    run_study(config, config.storage, backend, n_trials=1)
    later = [r for r in load_records(open_study(config.name, config.storage))
             if r.number > measured_again and r.attrs.get("effective_key") == "3-2-6"]
    assert later and all(r.status == "reused" and r.attrs["reused_from"] == measured_again for r in later)


def test_a_pruned_trial_of_a_one_objective_study_has_no_values(tmp_path):
    """QA: Optuna gives a PRUNED trial of a single-objective study its last intermediate value as
    its value, so `status -f json` showed a pruned trial's partial estimate under "values"
    (`"values": [3.05]`) -- under the name a result uses. Readers read no values for it."""
    path = tmp_path / "one.yaml"
    # its six seeds: the two dominated ones are pruned after the probe (the sampler's proposals
    # after them took a CPU second and showed the same)
    path.write_text(STUDY.format(name="one", space=SPACE, budget="{n_trials: 6}") + "objectives: [single_speedup]\n")
    config = load_study(path)
    create_study(config, config.storage)
    backend = make_backend(config, SearchSpace.load(config.search_space), load_suite(config.bench.suite))
    run_study(config, config.storage, backend)
    study = open_study(config.name, config.storage)
    assert any(t.state.name == "PRUNED" and t.values is not None for t in study.trials)  # Optuna's doing
    pruned = [r for r in load_records(study) if r.status == PRUNED]
    assert pruned and all(r.values is None for r in pruned)
    rows = {t["number"]: t for t in study_status(study)["trials"]}
    assert all(rows[r.number]["values"] is None and rows[r.number]["partial_values"] for r in pruned)


def test_a_baseline_with_edited_stage_figures_prunes_nothing_and_raises_nothing(tmp_path):
    """QA: the baseline's stage_figures edited by hand ({"single_tok_per_s": "fast"}) ended the next
    run in a TypeError from the judge, mid-measurement. Stage figures that are not numbers are no
    figures to compare with: the trial is measured whole, nothing pruned."""
    from tuner.engine.pruning import BASELINE_STAGES_ATTR, StageJudge

    config, backend = make(tmp_path, "edited", "{n_trials: 4}")
    for bad in ([{"stage": "probe", "single_tok_per_s": "fast", "tok_per_s@32": 800.0}], ["probe"], "probe"):
        judge = StageJudge(config, None, None, {BASELINE_STAGES_ATTR: bad}, backend.plan, lambda *a: None)
        figures = backend.full_figures(None, "x")
        assert judge(0, "probe", figures) is False and judge.stages == []


def test_a_request_spread_edited_by_hand_falls_back_to_the_prior():
    """QA: the baseline's request_cv edited to "high" ended the next run in TypeError (can't
    multiply sequence by non-int of type 'float') from the pruner's noise. A request spread that is
    not a finite number >= 0 is no measurement: the prior's 2% stands in, as for a suite that
    repeats nothing."""
    from tuner.config.study import PruneSettings
    from tuner.engine.pruning import PRIOR_REQUEST_CV, FrontPruner

    for bad in ("high", -0.5, float("nan"), True):
        assert FrontPruner(["single_speedup"], [], PruneSettings(), bad).request_cv == PRIOR_REQUEST_CV
    assert FrontPruner(["single_speedup"], [], PruneSettings(), 0.05).request_cv == 0.05


def test_a_pruned_trial_s_edited_stages_give_no_estimates():
    """QA: a pruned trial's stages edited to ["x"] ended the next run in AttributeError ('str' object
    has no attribute 'get') while the sampler read the trial's last estimates, leaving the trial
    just asked RUNNING. Stages that are not {stage, estimates: [numbers]} give no estimates."""
    from tuner.engine.pruning import last_estimates

    assert last_estimates({"stages": [{"stage": "probe", "estimates": [2.0, 0.5]}]}) == [2.0, 0.5]
    for stages in (["x"], [{"stage": "probe"}], [{"stage": "probe", "estimates": "2.0"}], "x",
                   [{"stage": "probe", "estimates": [2.0, "x"]}]):
        assert last_estimates({"stages": stages}) is None, stages
