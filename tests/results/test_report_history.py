"""The report's history and hypervolume charts count trials by their real numbers (the numbers
`tuner study export --pick N` takes), after invalid and reused trials too; one setting has one
colour on every chart."""

import pytest
from support.model_study import make_model_study
from support.prepared_once import prepared_once

from tuner.engine.study import open_study
from tuner.results.report import measured_study
from tuner.results.report_data import load_report_data
from tuner.results.report_plots import build_charts, setting_colors, to_plotly


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    from tuner.config.study import load_study

    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    path = prepared_once(tmp_path_factory, "hist", lambda f: make_model_study(f, n_trials=10)) / "demo.yaml"
    config = load_study(path)
    return load_report_data(open_study(config.name, config.storage))


def _series(chart, name):
    return next(s for p in chart.panels for s in p.series if s.name == name)


def test_history_uses_real_trial_numbers_and_draws_the_best_so_far(data):
    statuses = [r.status for r in data.records]
    first_gap = min(i for i, s in enumerate(statuses) if s in ("invalid", "reused"))
    assert any(r.number > first_gap for r in data.measured), "the seeds give no measured trial after a gap"
    charts = {c.key: c for c in build_charts(data)}
    for i, name in enumerate(data.objectives):
        chart = charts[f"history_{name.replace('@', '_')}"]
        measured = _series(chart, "measured")
        assert measured.x == [r.number for r in data.measured]  # not 0..n-1
        assert measured.y == pytest.approx([r.values[i] for r in data.measured])
        assert all(f"trial {r.number}: steps={r.effective.num_steps}" in t for r, t in zip(data.measured, measured.text))
        best = _series(chart, "best so far")
        assert best.step and best.x == measured.x
        assert best.y == pytest.approx([max(measured.y[:k + 1]) for k in range(len(measured.y))])
        assert chart.panels[0].x_label == "trial number"
    hv = _series(charts["hypervolume"], "hypervolume")
    assert hv.x == [r.number for r in data.measured]
    assert hv.y == sorted(hv.y) and hv.y[-1] > 0


def test_one_setting_one_colour_on_every_chart(data):
    colors = setting_colors(data)
    assert len(set(colors.values())) == len(data.front) >= 2
    charts = {c.key: c for c in build_charts(data)}
    for r in data.front:
        want = colors[r.attrs["effective_key"]]
        front = _series(charts["pareto"], "Pareto front")
        assert front.colors[front.text.index(f"trial {r.number}: steps={r.effective.num_steps} "
                                             f"topk={r.effective.eagle_topk} draft={r.effective.num_draft_tokens}")] == want
        tput = next(s for s in charts["throughput"].panels[0].series if s.name.startswith(f"trial {r.number}:"))
        assert tput.color == want
        hist = _series(charts["history_single_speedup"], "measured")
        assert hist.colors[hist.x.index(r.number)] == want
    fig = to_plotly(charts["pareto"]).to_dict()
    front_trace = next(t for t in fig["data"] if t["name"] == "Pareto front")
    assert list(front_trace["marker"]["color"]) == [colors[r.attrs["effective_key"]] for r in data.front]


def test_the_in_memory_copy_keeps_trial_numbers(data):
    mem = measured_study(data)
    kept = {t.number: t for t in mem.get_trials(deepcopy=False) if t.state.name == "COMPLETE"}
    original = {r.number: r for r in data.records}
    assert len(mem.get_trials(deepcopy=False)) == len(data.records)
    for number, t in kept.items():
        assert original[number].feasible and t.values == original[number].values
