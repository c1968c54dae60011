"""`tuner study pareto` and tuner/pareto.py: the front, its extremes and its knee, on real Optuna
studies measured through the ModelBackend (the simulator's performance model, no processes)."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.model_study import make_model_study
from support.prepared_once import prepared_once

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError
from tuner.engine.objectives import dominates
from tuner.engine.records import TrialRecord, load_records, merge_repeats
from tuner.engine.study import open_study
from tuner.results.pareto import (
    PickError,
    build_front,
    extreme_index,
    knee_index,
    normalize,
    pick_record,
    picks,
    study_front,
    throughput_objective,
)
from tuner.results.status import front_records
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]
@pytest.fixture(scope="module")
def study_file(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "pareto", lambda folder: make_model_study(folder)) / "demo.yaml"


def _open(path: Path):
    config = load_study(path)
    return open_study(config.name, config.storage)


def record(number, values, c32=None, status="measured", feasible=True, key=None):
    attrs = {"effective_key": key or f"k{number}", "status": status}
    if c32 is not None:
        attrs["speedup@32"] = c32
    return TrialRecord(number, "COMPLETE", status, SpecConfig(1, 1, 2), SpecConfig(1, 1, 2), list(values),
                       feasible, attrs, 1.0)


# -- definitions --------------------------------------------------------------------------------


def test_knee_is_the_point_farthest_from_the_chord_between_the_extremes():
    # A convex front: (1, 0.5) bulges toward the ideal; (0.4, 0.95) lies almost on the chord.
    pts = [(2.0, 0.5), (1.9, 0.8), (1.2, 0.95), (1.0, 1.0)]
    assert knee_index(pts) == 1
    norm = normalize(pts)
    assert norm[0] == (1.0, 0.0) and norm[-1] == (0.0, 1.0)
    # farthest from the line x + y = 1 in normalized space, measured directly
    dist = [(x + y - 1) / 2 ** 0.5 for x, y in norm]
    assert max(range(len(pts)), key=dist.__getitem__) == 1


def test_knee_ties_go_to_the_larger_product_then_the_lower_trial():
    # two points always tie on the normalized sum (1 each): the larger product of raw values wins
    assert knee_index([(2.0, 0.5), (1.2, 1.0)]) == 1
    # equal products (2.0 x 0.5 == 1.0 x 1.0): the lower trial number
    assert knee_index([(2.0, 0.5), (1.0, 1.0)], numbers=[7, 3]) == 1
    assert knee_index([(2.0, 0.5), (1.0, 1.0)], numbers=[3, 7]) == 0


def test_the_knee_is_the_normalized_sum_not_the_largest_product():
    # (1.5, 0.95) gives up least of either objective (normalized sum 1.15); (3.0, 0.5) has the larger
    # product of raw speedups (1.5), which only breaks ties (mutation testing: ranking by the product
    # alone chose the same knee on every front the tests had, and passed)
    assert knee_index([(3.0, 0.5), (1.0, 1.0), (1.5, 0.95)]) == 2


def test_one_point_is_its_own_knee_and_both_extremes():
    assert knee_index([(1.5, 0.9)]) == 0
    assert extreme_index([(1.5, 0.9)], 0) == extreme_index([(1.5, 0.9)], 1) == 0
    assert normalize([(1.5, 0.9)]) == [(1.0, 1.0)]


def test_min_speedup_c32_recomputes_the_front_among_eligible_trials():
    recs = [record(0, (2.0, 0.8), c32=0.8), record(1, (1.4, 1.05), c32=1.05), record(2, (1.5, 1.0), c32=1.0),
            record(3, (1.3, 1.0), c32=1.0)]
    full = build_front("s", ["single_speedup", "speedup@32"], recs, None)
    assert sorted(p.number for p in full.points) == [0, 1, 2]
    high = build_front("s", ["single_speedup", "speedup@32"], recs, None, min_speedup_c32=1.0)
    # trial 0 is no longer eligible; 2 is on the front (not dominated by 1), 3 is dominated by 2
    assert sorted(p.number for p in high.points) == [1, 2]
    assert high.single.number == 2 and high.throughput.number == 1
    with pytest.raises(PickError, match="speedup@32 >= 1.2 .*best measured is 1.050"):
        build_front("s", ["single_speedup", "speedup@32"], recs, None, min_speedup_c32=1.2)
    # an attribute that only looks like a sweep figure (a tool's, or edited in) names no concurrency
    recs[1].attrs["speedup@peak"] = 1.3
    high = build_front("s", ["single_speedup", "speedup@32"], recs, None, min_speedup_c32=1.0)
    assert sorted(p.number for p in high.points) == [1, 2]


def test_a_point_tied_on_one_objective_and_worse_on_the_other_is_dominated():
    # (1.3, 1.0) is no better than (1.5, 1.0) anywhere: it never joins the front, however the tie
    # falls (mutation testing: domination that needed "better everywhere" kept it, and passed)
    recs = [record(0, (1.3, 1.0)), record(1, (1.5, 1.0)), record(2, (1.5, 0.7))]
    front = build_front("s", ["single_speedup", "speedup@32"], recs, None)
    assert [p.number for p in front.points] == [1]
    assert dominates((1.5, 1.0), (1.3, 1.0)) and dominates((1.5, 1.0), (1.5, 0.7))
    assert not dominates((1.5, 1.0), (1.5, 1.0))


def test_min_speedup_c32_at_its_edge_and_without_the_figure():
    # the threshold is "at least": a trial exactly at it is eligible and may be exported by number;
    # a measured trial without a speedup@32 (hand-edited, or measured before the sweep had C=32)
    # fails it, on the front and by number (mutation testing: "<=" in pick_record, and a missing
    # figure read as passing, passed every test)
    recs = [record(0, (2.0, 0.8), c32=0.8), record(1, (1.4, 1.0), c32=1.0), record(2, (1.9, 1.3))]
    front = build_front("s", ["single_speedup", "speedup@32"], recs, None, min_speedup_c32=1.0)
    assert [p.number for p in front.points] == [1]
    assert pick_record(front, recs, "1").number == 1
    with pytest.raises(PickError, match="trial 2 has speedup@32 0.000, below --min-speedup-c32 1"):
        pick_record(front, recs, "2")


def test_extremes_break_ties_by_the_other_objectives_and_throughput_is_the_highest_concurrency():
    # three objectives: two front points tie on the first; the better sum of the others wins, whatever
    # the trial numbers (mutation testing: dropping that rule left it to the lower trial, and passed)
    pts = [(2.0, 0.4, 0.8), (2.0, 1.0, 0.5)]
    assert extreme_index(pts, 0, numbers=[1, 2]) == 1
    assert extreme_index(pts, 0, numbers=[2, 1]) == 1
    # --pick throughput maximizes the objective at the highest concurrency, wherever it is listed
    assert throughput_objective(["single_speedup", "speedup@32", "speedup@8"]) == "speedup@32"
    assert throughput_objective(["speedup@64", "single_speedup", "speedup@8"]) == "speedup@64"
    recs = [record(0, (2.0, 1.0, 0.9)), record(1, (1.5, 1.2, 1.1)), record(2, (1.4, 1.3, 1.0))]
    front = build_front("s", ["single_speedup", "speedup@8", "speedup@32"], recs, None)
    assert front.throughput.number == 1 and front.single.number == 0
    assert picks(recs, ["single_speedup", "speedup@8", "speedup@32"])["throughput"].number == 1


def test_a_setting_measured_twice_is_picked_by_number_as_the_mean_of_its_readings():
    # export's header shows the figures the pick was judged by: the mean of the setting's readings,
    # as on the front, whichever of its trials is named (mutation testing: returning the one reading
    # named passed every test)
    recs = [record(0, (1.5, 1.0), c32=1.0, key="a"), record(1, (1.7, 1.2), c32=1.2, key="a"),
            record(2, (1.0, 1.0), c32=1.0)]
    front = build_front("s", ["single_speedup", "speedup@32"], recs, None)
    for named in ("0", "1"):
        got = pick_record(front, recs, named)
        assert got.number == 0 and got.attrs["measured_in"] == [0, 1] and got.attrs["measurements"] == 2
        assert got.values == pytest.approx([1.6, 1.1]) and got.attrs["speedup@32"] == pytest.approx(1.1)


def test_failed_reused_and_infeasible_trials_never_reach_the_front():
    recs = [record(0, (0.0, 0.0), status="failed", feasible=False),
            record(1, (1.2, 0.9)), record(2, (1.2, 0.9), status="reused", key="k1"),
            record(3, (9.0, 9.0), feasible=False)]
    recs[2].attrs["reused_from"] = 1
    front = build_front("s", ["a", "b"], recs, None)
    assert [p.number for p in front.points] == [1]
    assert front.points[0].same_as == [2]
    with pytest.raises(PickError, match="no feasible measured trial"):
        build_front("s", ["a", "b"], recs[:1], None)
    with pytest.raises(PickError, match="no completed trial"):
        build_front("s", ["a", "b"], [], None)


# -- a real study -------------------------------------------------------------------------------


def test_front_of_a_real_study(study_file):
    study = _open(study_file)
    records = load_records(study)
    front = study_front(study)
    measured = [r for r in records if r.status == "measured" and r.feasible]
    pts = [p.values for p in front.points]
    # non-dominated, one per effective config, and every feasible measurement is covered
    assert all(not dominates(q, p) for p in pts for q in pts)
    keys = [p.record.attrs["effective_key"] for p in front.points]
    assert len(keys) == len(set(keys))
    for r in merge_repeats(measured):  # a setting measured again counts with the mean of its readings
        assert any(tuple(r.values) == p or dominates(p, r.values) for p in pts), r.number
    # the extremes are the best of each objective among all feasible measurements
    assert front.single.values[0] == max(r.values[0] for r in measured)
    assert front.throughput.values[1] == max(r.values[1] for r in measured)
    assert front.knee in front.points and "knee" in front.knee.roles
    # every measured concurrency of the quick suite is in the front's figures
    assert front.concurrencies == [1, 8, 32]


def test_pick_record_by_name_and_number(study_file):
    study = _open(study_file)
    records = load_records(study)
    front = study_front(study)
    assert pick_record(front, records, "knee").number == front.knee.number
    assert pick_record(front, records, "single").number == front.single.number
    assert pick_record(front, records, "throughput").number == front.throughput.number
    reused = next(r for r in records if r.status == "reused")
    assert pick_record(front, records, str(reused.number)).number == reused.attrs["reused_from"]
    with pytest.raises(ConfigError, match="has no trial 999"):
        pick_record(front, records, "999")
    with pytest.raises(ConfigError, match="not single, throughput, knee or a trial number"):
        pick_record(front, records, "best")
    invalid = next(r for r in records if r.status == "invalid")
    with pytest.raises(PickError, match=f"trial {invalid.number} .*measured nothing .*rule:"):
        pick_record(front, records, str(invalid.number))


def test_picks_for_the_report_match_the_export(study_file):
    study = _open(study_file)
    front = study_front(study)
    chosen = picks(front_records(load_records(study)), ["single_speedup", "speedup@32"])
    assert {k: r.number for k, r in chosen.items()} == {
        "single": front.single.number, "throughput": front.throughput.number, "knee": front.knee.number}


def test_cli_pareto_json_and_table(study_file):
    runner = CliRunner()
    r = runner.invoke(cli, ["study", "pareto", str(study_file), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    front = study_front(_open(study_file))
    assert [p["trial"] for p in data["points"]] == [p.number for p in front.points]
    assert data["knee"] == front.knee.number
    assert data["extremes"] == {"single_speedup": front.single.number, "speedup@32": front.throughput.number}
    first = data["points"][0]
    assert set(first["tok_per_s"]) == {"1", "8", "32"} and first["accept_length"] > 1
    assert set(data["baseline"]["tok_per_s"]) == {"1", "8", "32"}
    table = runner.invoke(cli, ["study", "pareto", str(study_file)], env={"COLUMNS": "200"})
    assert table.exit_code == 0, table.output
    assert "knee" in table.stdout and "best speedup@32" in table.stdout and "no spec" in table.stdout
    assert f"│ {front.knee.number} " in table.stdout


def test_cli_pareto_bad_input(tmp_path, study_file):
    runner = CliRunner()
    config = load_study(study_file)
    r = runner.invoke(cli, ["study", "pareto", "nosuch", "--storage", config.storage])
    assert r.exit_code == 2
    assert r.stderr.strip().count("\n") == 0 and "nosuch: no such study" in r.stderr
    empty = make_model_study(tmp_path, name="empty", n_trials=None)
    r = runner.invoke(cli, ["study", "pareto", str(empty)])
    assert r.exit_code == 1 and "no completed trial" in r.stderr and r.stdout == ""


def test_run_to_run_spread_pools_the_repeated_settings_only():
    """Pooled over settings measured more than once: each reading's log around its own setting's
    mean; a setting read once adds nothing; an objective read at 0 (a goodput) has no spread."""
    import math

    from tuner.engine.records import run_to_run_spread
    from tuner.results.status import spread_lines

    assert run_to_run_spread([record(0, (2.0, 1.0)), record(1, (2.1, 1.1))]) is None
    recs = [record(0, (2.0, 1.0), key="a"), record(1, (2.2, 1.0), key="a"),
            record(2, (1.5, 0.8), key="b"), record(3, (1.5, 0.9), key="b"), record(4, (1.5, 0.9), key="b"),
            record(5, (3.0, 0.5), key="c"), record(6, (9.0, 0.5), key="d", feasible=False),
            record(7, (9.0, 0.5), key="d")]
    a = math.log(2.2 / 2.0) / 2
    b = [math.log(0.8), math.log(0.9), math.log(0.9)]
    mb = sum(b) / 3
    want_single = math.expm1(math.sqrt(2 * a * a / (1 + 2)))
    want_c32 = math.expm1(math.sqrt(sum((x - mb) ** 2 for x in b) / 3))
    spread = run_to_run_spread(recs)
    assert spread["settings"] == 2 and spread["readings"] == 5
    assert spread["objectives"] == pytest.approx([want_single, want_c32])
    zero = run_to_run_spread([record(0, (2.0, 0.0), key="a"), record(1, (2.2, 1.0), key="a")])
    assert zero["objectives"][1] is None and zero["objectives"][0] > 0
    line = spread_lines(zero, ["s", "g"])[0]
    assert line.startswith("run-to-run spread: s 7.0%, g - (from 1 setting measured")
    quiet = {"objectives": [0.02, 0.03], "settings": 3, "readings": 7}
    assert len(spread_lines(quiet, ["s", "t"])) == 1
    assert "tuner study confirm" in spread_lines({**quiet, "objectives": [0.02, 0.031]}, ["s", "t"])[1]


def test_a_trial_exactly_at_its_slo_limit_is_feasible_and_on_the_front():
    """Optuna's rule, which the study's readers share: feasible when every constraint is zero or less.
    A trial whose p99 equals the SLO's limit (excess 0.0) meets it (mutation testing: reading
    feasible as "below zero" dropped it from the front and passed every test)."""
    import optuna
    from optuna.distributions import IntDistribution

    study = optuna.create_study(directions=["maximize", "maximize"])
    params = {"speculative_num_steps": 3, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4}
    dists = {k: IntDistribution(1, 64) for k in params}
    for number, (values, excess) in enumerate([((1.5, 1.1), 0.0), ((1.2, 1.0), 0.25)]):
        spec = {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4 + number}
        study.add_trial(optuna.trial.create_trial(
            values=list(values), params=params, distributions=dists,
            user_attrs={"status": "measured", "effective": spec, "effective_key": f"k{number}"},
            constraints={"measured": -1.0, "slo:e2e_p99_ms@32": excess}))
    recs = load_records(study)
    assert [r.feasible for r in recs] == [True, False]
    assert [p.number for p in build_front("s", ["single_speedup", "speedup@32"], recs, None).points] == [0]
