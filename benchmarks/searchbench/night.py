"""What a night of GPU time buys: scores by modelled hours, and a check of every pruning decision.

A study on ``server.backend: model`` spends modelled GPU time: the baseline's measurement, then each
launch's ``model_duration_s`` (load, warm-up, flushes and the requests it ran; a pruned launch stops
early). :func:`time_scores` replays that clock over a run's finished trials and asks, at 2, 4 and 8
modelled hours, what ``tuner study export --pick single`` and ``--pick throughput`` would return
then (their true value over the optimum) and how many settings the night had measured by then.

:func:`prune_checks` asks of every pruned launch what the whole suite would have measured for it --
the same measurement's noise draw, :meth:`tuner.engine.backends.ModelBackend.full_figures` -- and
whether that would have been within 1% of the study's final front (and, by true values, of the true
front). Both counts must be 0: pruning may only stop settings the whole suite would have left off.
"""

from __future__ import annotations

import statistics

HOURS = (2, 4, 8)
NEAR = 0.01  #: "within 1% of the front"


def time_scores(records, truth, baseline_attrs: dict, hours: float) -> dict:
    """Per modelled hour mark up to ``hours``: launches, whole-suite and pruned launches, and the
    exported picks' true value over the optimum (0 when export has nothing yet)."""
    from tuner.engine.records import MEASURED, PRUNED, launched

    from .runs import export_ratios

    ends, spent = [], float(baseline_attrs.get("model_duration_s") or 0.0)
    for r in records:
        if launched(r.status, r.attrs):
            spent += float(r.attrs.get("model_duration_s") or 0.0)
        ends.append(spent)
    out = {}
    for h in [h for h in HOURS if h <= hours] or [hours]:
        done = [r for r, end in zip(records, ends) if end <= h * 3600]
        out[h] = {"launches": sum(1 for r in done if launched(r.status, r.attrs)),
                  "whole": sum(1 for r in done if r.status == MEASURED),
                  "pruned": sum(1 for r in done if r.status == PRUNED and launched(r.status, r.attrs)),
                  "export": export_ratios(done, truth, baseline_attrs)}
    return out


def near_front(values, front, near: float = NEAR) -> bool:
    """Whether ``values`` is within ``near`` of the (maximized) front: no front point beats it by
    more than that on every objective."""
    return not any(all(f > v * (1 + near) for f, v in zip(point, values)) for point in front)


def prune_checks(records, truth, baseline_attrs: dict, backend) -> dict:
    """How many pruned launches the whole suite would have put within 1% of the study's final front
    (``near_front``) and how many are truly within 1% of the true front (``near_true_front``)."""
    from tuner.engine.objectives import objective_values, pareto_front
    from tuner.engine.records import MEASURED, PRUNED, StoredFigures, launched

    base = StoredFigures.from_attrs(baseline_attrs)
    measured = [r.values for r in records if r.status == MEASURED and r.feasible and r.values]
    front = [measured[i] for i in pareto_front(measured)]
    true_points = list(truth.values.values())
    true_front = [true_points[i] for i in pareto_front(true_points)]
    pruned = [r for r in records if r.status == PRUNED and launched(r.status, r.attrs)]
    near = near_true = 0
    for r in pruned:
        full = backend.full_figures(r.effective, f"trials/{r.number}")
        near += near_front(objective_values(truth.objectives, full, base), front)
        near_true += near_front(truth.values[r.effective], true_front)
    return {"pruned": len(pruned), "near_front": near, "near_true_front": near_true}


def summarize_night(runs, hours: float) -> dict:
    """Medians and shares over the runs of one strategy on one target (see :func:`print_night`)."""
    from .runs import WITHIN

    marks = sorted({h for r in runs for h in r.by_hours})
    row: dict = {"marks": {}}
    for h in marks:
        at = [r.by_hours[h] for r in runs if h in r.by_hours]
        regrets = [max(0.0, 1 - min(x["export"])) for x in at]
        row["marks"][h] = {
            "launches": statistics.median(x["launches"] for x in at),
            "launches_mean": statistics.mean(x["launches"] for x in at),
            "whole": statistics.median(x["whole"] for x in at),
            "both": sum(1 for x in at if all(v >= 1 - WITHIN for v in x["export"])) / len(at),
            "regret_median": statistics.median(regrets),
            "regret_max": max(regrets),
        }
    checks = [r.prune_checks for r in runs if r.prune_checks]
    row["pruned"] = sum(c["pruned"] for c in checks)
    row["near_front"] = sum(c["near_front"] for c in checks)
    row["near_true_front"] = sum(c["near_true_front"] for c in checks)
    return row


def print_night(summaries: dict, truths: dict, hours: float, table) -> None:
    """Per target: each strategy's settings measured, the exported picks' success (both within 3%)
    and regret (the worse pick's shortfall from its optimum, median / worst) at each hour mark, and
    the pruning check."""
    for name, rows in summaries.items():
        marks = sorted({h for s in rows.values() for h in s["marks"]})
        print(f"\n## {name}: a night of {hours:g} modelled GPU hours ({truths[name].n_configs} settings)")
        head = ["strategy", *[f"launches@{h}h" for h in marks], f"whole@{marks[-1]}h",
                *[f"exp@{h}h" for h in marks], *[f"regret@{h}h" for h in marks], "pruned", "near front"]
        lines = []
        for strategy, s in rows.items():
            m = s["marks"]
            lines.append([strategy, *[f"{m[h]['launches']:g}" for h in marks], f"{m[marks[-1]]['whole']:g}",
                          *[f"{m[h]['both']:.0%}" for h in marks],
                          *[f"{m[h]['regret_median']:.1%}/{m[h]['regret_max']:.1%}" for h in marks],
                          str(s["pruned"]) if s["pruned"] or "prune" in strategy else "-",
                          f"{s['near_front']}/{s['near_true_front']}" if s["pruned"] else "-"])
        table(head, lines)
        last = marks[-1]
        for strategy, s in rows.items():
            off = rows.get(strategy[:-len("+prune")]) if strategy.endswith("+prune") else None
            if off is not None:
                a, b = off["marks"][last], s["marks"][last]
                print(f"{strategy}: {b['launches_mean'] / a['launches_mean']:.2f}x the settings measured in "
                      f"{last:g} h ({a['launches_mean']:.1f} -> {b['launches_mean']:.1f} on average); exported "
                      f"picks both within 3%: {a['both']:.0%} -> {b['both']:.0%}")
