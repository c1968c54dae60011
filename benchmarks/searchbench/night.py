"""What a night of GPU time buys: scores by modelled hours, and a check of every pruning decision.

A study on ``server.backend: model`` spends modelled GPU time: the baseline's measurement, then each
launch's ``model_duration_s`` (load, warm-up, flushes and the requests it ran; a pruned launch stops
early). :func:`time_scores` replays that clock over a run's finished trials and asks, at 2, 4 and 8
modelled hours, what ``tuner study export --pick single`` and ``--pick throughput`` would return
then (their true value over the optimum) and how many settings the night had measured by then.

:func:`prune_checks` asks of every pruned launch what the whole suite would have measured for it --
the same measurement's noise draw, :meth:`tuner.engine.backends.ModelBackend.full_figures` -- and
whether that would have been within 1% of the study's final front (and, by true values, of the true
front). The first should be 0: pruning may only stop settings the whole suite would have left off.
It is not always (README, "Measured: settings per night"): a front setting measured again after the
prune may fall back, and the verdict made against its earlier reading stands.
The second counts noise, not pruning: a launch that read a truly good setting low, or a front point
read high, leaves it off the front whether the suite runs whole or not.

:func:`pruning_ceiling` bounds what any pruning rule could give on a landscape: the settings a night
holds if every launch after the study's first ``startup_trials`` stopped after the first stage (the
probe), over the settings it holds when every launch runs the whole suite. A launch costs its load
whatever the rule, so where loading takes most of a launch the ceiling is low.
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
    (``near_front``) and how many are truly within 1% of the true front (``near_true_front``). The
    study's front is the one it reports and prunes against (:func:`tuner.engine.records.front_records`):
    a setting measured more than once stands at the mean of its readings, not at each reading."""
    from tuner.engine.objectives import objective_values, pareto_front
    from tuner.engine.records import PRUNED, StoredFigures, front_records, launched

    base = StoredFigures.from_attrs(baseline_attrs)
    front = [r.values for r in front_records(records)]
    true_points = list(truth.values.values())
    true_front = [true_points[i] for i in pareto_front(true_points)]
    pruned = [r for r in records if r.status == PRUNED and launched(r.status, r.attrs)]
    near = near_true = 0
    for r in pruned:
        full = backend.full_figures(r.effective, f"trials/{r.number}")
        near += near_front(objective_values(truth.objectives, full, base), front)
        near_true += near_front(truth.values[r.effective], true_front)
    return {"pruned": len(pruned), "near_front": near, "near_true_front": near_true}


def pruning_ceiling(records, baseline_attrs: dict, backend, hours: float, startup: int) -> dict | None:
    """``{"whole_s", "probe_s", "ratio"}``: the median modelled seconds of a whole-suite launch of
    this run and of the same settings stopped after the probe (``backend``: the run's model backend,
    measured again under other labels), and the ceiling ratio (see the module docstring); None when
    the run measured nothing whole."""
    from tuner.engine.records import MEASURED

    whole = [r for r in records if r.status == MEASURED and r.attrs.get("model_duration_s")]
    night = hours * 3600 - float(baseline_attrs.get("model_duration_s") or 0.0)
    if not whole or night <= 0:
        return None
    probe = [backend.measure(r.effective, f"ceiling/{r.number}", lambda m: None,
                             on_stage=lambda i, name, figures: True).model_duration_s for r in whole]
    w = statistics.median(float(r.attrs["model_duration_s"]) for r in whole)
    p = statistics.median(probe)
    ceiling = min(startup, night / w) + max(0.0, night - startup * w) / p
    return {"whole_s": w, "probe_s": p, "ratio": ceiling / (night / w)}


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
    ceilings = [r.ceiling["ratio"] for r in runs if r.ceiling]
    row["ceiling"] = statistics.median(ceilings) if ceilings else None
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
                ceiling = off.get("ceiling")
                print(f"{strategy}: {b['launches_mean'] / a['launches_mean']:.2f}x the settings measured in "
                      f"{last:g} h ({a['launches_mean']:.1f} -> {b['launches_mean']:.1f} on average)"
                      + (f", ceiling {ceiling:.2f}x" if ceiling else "")
                      + f"; exported picks both within 3%: {a['both']:.0%} -> {b['both']:.0%}")


def night_group_summary(nights: dict, names: list[str], strategy: str) -> dict | None:
    """``strategy`` with and without pruning over a group of targets (``nights``: target ->
    strategy -> :func:`summarize_night`): the ratio of settings measured in the night, per target
    (median, range, how many reach 1.5x), how many targets' ceilings reach 1.5x, the exported picks'
    success at the last mark (mean share without and with pruning; targets where pruning lowers or
    raises it), and the pruning checks summed."""
    pairs = [(nights[n][strategy], nights[n][strategy + "+prune"]) for n in names
             if strategy in nights.get(n, {}) and strategy + "+prune" in nights.get(n, {})]
    if not pairs:
        return None
    last = max(pairs[0][0]["marks"])
    ratios = [on["marks"][last]["launches_mean"] / off["marks"][last]["launches_mean"] for off, on in pairs]
    ceilings = [off["ceiling"] for off, _ in pairs if off.get("ceiling")]
    both = [(off["marks"][last]["both"], on["marks"][last]["both"]) for off, on in pairs]
    return {"targets": len(pairs), "hours": last, "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios), "ratio_max": max(ratios), "at_1_5": sum(1 for x in ratios if x >= 1.5),
            "ceiling_median": statistics.median(ceilings) if ceilings else None,
            "ceiling_at_1_5": sum(1 for x in ceilings if x >= 1.5),
            "both_off": statistics.mean(a for a, _ in both), "both_on": statistics.mean(b for _, b in both),
            "lower": sum(1 for a, b in both if b < a), "higher": sum(1 for a, b in both if b > a),
            "pruned": sum(on["pruned"] for _, on in pairs), "near_front": sum(on["near_front"] for _, on in pairs),
            "near_true_front": sum(on["near_true_front"] for _, on in pairs)}


def print_night_groups(nights: dict, groups: dict[str, list[str]], strategies, table) -> dict:
    """Per group of targets, :func:`night_group_summary` of each strategy run both ways."""
    out: dict = {}
    for group, names in groups.items():
        lines = []
        for strategy in strategies:
            g = night_group_summary(nights, names, strategy)
            if g is None:
                continue
            out.setdefault(group, {})[strategy] = g
            hours = g["hours"]
            ceiling = "-" if g["ceiling_median"] is None else f"{g['ceiling_median']:.2f}x ({g['ceiling_at_1_5']})"
            lines.append([strategy, str(g["targets"]),
                          f"{g['ratio_median']:.2f}x ({g['ratio_min']:.2f}-{g['ratio_max']:.2f})",
                          str(g["at_1_5"]), ceiling, f"{g['both_off']:.1%} -> {g['both_on']:.1%}",
                          f"{g['lower']}/{g['higher']}", f"{g['near_front']}/{g['pruned']}"])
        if lines:
            print(f"\n## {group}: a night of {hours:g} modelled GPU hours, pruning off -> on")
            table(["strategy", "landscapes", "settings ratio, median (range)", ">=1.5x",
                   "ceiling, median (>=1.5x)", f"exp@{hours:g}h, mean", "exp lower/higher",
                   "near front / pruned"], lines)
    return out
