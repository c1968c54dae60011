"""How well does a study's *exported* setting do? The real study engine against known landscapes.

Each run is a whole study on the real engine (:func:`tuner.engine.study.create_study` and
:func:`tuner.engine.runner.run_study`: the same sampler setup, seed trials, validity rules and reuse of
repeated effective settings) with ``server.backend: model`` on a landscape table (a simulator
profile's model figures, or any table given with ``--landscape``), seeded measurement noise, and
in-memory Optuna storage. Parts: ``benchmarks/searchbench/`` (targets and truth, runs and scores,
strategies, the generated profiles and landscape families of the test bed and its train/test split).

Per target and strategy, over ``--seeds`` runs, it prints:

* ``exp@16``: the share of seeds whose exported picks -- what ``tuner study export --pick single``
  and ``--pick throughput`` return after launch 16, by the export's own code -- are BOTH truly
  within 3% of the true optimum of their objective (the goal); ``single``/``thr``: each alone;
* ``exp med/p90``: launches until the exported picks are within 3% and stay so up to launch 16;
* ``hit med/p90`` and ``hit@16``: the older first-hit figure (the first launch at which the best
  *measured* setting is truly within 3%, which a later lucky reading may undo);
* ``HV@8``, ``HV@16``: hypervolume of what was measured (true values) / the true front's (a front with no
  volume above the nadir, as of a one-setting or a flat table: the share of its distinct points measured);
* ``GPU h``: median modelled GPU hours (load + suite, the baseline included) until the exported
  picks were within 3% for good.

A night of GPU time instead of a count of launches (``--hours 8``: every study runs for 8 modelled
hours, ``budget.timeout``, with no launch limit), with and without pruning (``--prune on|off|both``;
off by default, so that a launch measures the whole suite as the launch figures above assume; ``on``
is a study's own default, labelled ``STRATEGY+prune``): per target, the settings measured after 2, 4
and 8 modelled hours (``launches@Nh``; ``whole``: those that ran the whole suite), the share of seeds
whose exported picks are both within 3% then (``exp@Nh``), their regret (the worse pick's shortfall
from its optimum, median/worst), and the pruning check: pruned launches, and how many of them the
whole suite would have put within 1% of the study's final front / are truly within 1% of the true
front (``near front``; the first must be 0). Beside each ratio of settings measured, its
``ceiling``: the ratio no pruning rule could beat, every launch after the first ``startup_trials``
stopped after the probe (a launch pays its load whatever is pruned). With ``--set`` and ``--prune
both``, one night table per set and family: the ratio per landscape (median, range, how many reach
1.5x), the ceilings, the exported picks' success without and with pruning, the landscapes where
pruning lowers or raises it, and the pruning check summed. Parts in
``benchmarks/searchbench/night.py``.

    python benchmarks/search_efficiency.py                      # shipped profiles, 20 seeds
    python benchmarks/search_efficiency.py --quick              # 5 seeds, the main strategies
    python benchmarks/search_efficiency.py --profiles dense-27b-tp1,my/profile.yaml --landscape node.json
    python benchmarks/search_efficiency.py --strategies default --hours 8 --prune both   # a night, pruning on/off
    nice -n 10 python benchmarks/search_efficiency.py --set shipped,train,test --groups-only \
        --strategies default,local-tpe,random,tpe,grid --noise 0.04   # the README's tables (hours)

With ``--set`` it also prints, per set and per family in it, how many landscapes reach 90% (80%)
of their seeds, the worst one, the mean, the median launch at which the picks settle, HV@16, the
landscapes where the strategy is below random search, the median modelled GPU hours, and the
picks that missed at launch 16 by why: ``unseen`` (no setting truly within 3% of that objective's
optimum was measured: the search never got there) or ``misread`` (one was, but the readings ranked
another above it: the noise). Tuning
aids: ``--options JSON`` (the default strategy's ``sampler.options``), ``--prune-options JSON``
(the pruning studies' ``budget.prune`` knobs), ``--load-s SECONDS`` (every launch's modelled load
time: a what-if for the night), ``--only REGEX`` (targets by name), ``--jobs N`` (processes;
default 1, the machine is shared). ``--strip-accept SHARE`` (``--strip-seed N``): every landscape
with the ``accept_length`` of that share of its rows removed (1: every row), as a grid measured by a
benchmark that does not record it; the truth, and so the scores, are the full table's.

Progress goes to stderr, the tables to stdout (``--json FILE`` also writes every run's figures; FILE's folder
must exist, checked before any run).

Why one module of under 600 lines: it is the command (its flags, their checks before any
run, the order of the runs and the tables they print), which share the parsed arguments; the runs,
targets, strategies, sets and night tables already live in ``searchbench/``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

# One BLAS thread per process: the surrogate's small matrices gain nothing from threads, and the
# machine is shared (--jobs decides how many cores the benchmark takes).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from searchbench.night import print_night, print_night_groups, summarize_night  # noqa: E402
from searchbench.runs import HORIZON, HV_AT, WITHIN, RunResult, run_one  # noqa: E402
from searchbench.strategies import QUICK_STRATEGIES, STRATEGIES, bench_speculative_grid, grid_launches  # noqa: E402,F401
from searchbench.targets import (  # noqa: E402
    SPACE, Target, Truth, profile_table, repeated_input, strip_accept, table_target)

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ("k2.6-tp8-pcie", "k2.6-tp8-nvlink", "dense-27b-tp1")
CACHE = ROOT / "benchmarks" / ".landscapes"


def truth_for(profile: str, space: Path = SPACE, suite: str = "seed", cache: Path = CACHE) -> tuple[Target, Truth]:
    """A profile's target (its table, written once) and the truth it is scored on."""
    target = profile_table(profile, cache, suite=suite, space=space, group="shipped" if profile in PROFILES else "given")
    return target, target.truth()


# --------------------------------------------------------------------------------------------------
# Summary and tables


def _pct(values: list, q: float) -> str:
    """The q-quantile of launches, with runs that never got there counted as infinitely long."""
    if not values:
        return "-"
    ordered = sorted(values, key=lambda v: float("inf") if v is None else v)
    v = ordered[min(len(ordered) - 1, int(q * len(ordered) + 0.999999) - 1)]
    return "never" if v is None else str(v)


def _share(flags) -> float:
    flags = list(flags)
    return sum(1 for f in flags if f) / len(flags) if flags else 0.0


def summarize(runs: list[RunResult], horizon: int = HORIZON) -> dict:
    row: dict = {"runs": len(runs)}
    row["export"] = {
        "both": _share(r.export_both(horizon) for r in runs),
        "single": _share(r.export_ok[min(horizon, len(r.export_ok)) - 1][0] for r in runs if r.export_ok),
        "throughput": _share(r.export_ok[min(horizon, len(r.export_ok)) - 1][1] for r in runs if r.export_ok),
        "median": _pct([r.export_settled(horizon) for r in runs], 0.5),
        "p90": _pct([r.export_settled(horizon) for r in runs], 0.9),
    }
    both = [r.both_launches for r in runs]
    row["hit"] = {"median": _pct(both, 0.5), "p90": _pct(both, 0.9),
                  "by16": _share(v is not None and v <= horizon for v in both)}
    row["hv"] = {k: statistics.mean(r.hv_frac.get(k, 0.0) for r in runs) for k in HV_AT}
    hours = [r.model_hours[r.export_settled(horizon) - 1] for r in runs
             if r.export_settled(horizon) is not None and r.model_hours]
    row["gpu_hours_median"] = statistics.median(hours) if hours else None
    row["seconds_per_run"] = statistics.mean(r.seconds for r in runs)
    return row


def _table(head: list[str], lines: list[list]) -> None:
    lines = [head] + lines
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
    for j, line in enumerate(lines):
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(line, widths)) + " |")
        if j == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def print_target_tables(summaries: dict, truths: dict, budget: int, horizon: int = HORIZON) -> None:
    hv = [k for k in HV_AT if k <= budget]
    for name, rows in summaries.items():
        t = truths[name]
        print(f"\n## {name}  ({t.n_configs} settings; optimum {t.objectives[0]} {t.optimum[0]:.3f}, "
              f"{t.objectives[1]} {t.optimum[1]:.3f})")
        head = ["strategy", f"exp@{horizon}", "single", "thr", "exp med/p90", "hit med/p90", f"hit@{horizon}",
                *[f"HV@{k}" for k in hv], "GPU h"]
        lines = []
        for strategy, s in rows.items():
            e, h = s["export"], s["hit"]
            gpu = "-" if s["gpu_hours_median"] is None else f"{s['gpu_hours_median']:.1f}"
            lines.append([strategy, f"{e['both']:.0%}", f"{e['single']:.0%}", f"{e['throughput']:.0%}",
                          f"{e['median']}/{e['p90']}", f"{h['median']}/{h['p90']}", f"{h['by16']:.0%}",
                          *[f"{s['hv'][k]:.3f}" for k in hv], gpu])
        _table(head, lines)


def group_summary(runs: list[RunResult], by_target: dict, horizon: int = HORIZON) -> dict:
    """One strategy over a group of targets: per-target shares, and the figures over all its runs."""
    shares = [statistics.mean(1.0 if r.export_both(horizon) else 0.0 for r in rs) for rs in by_target.values()]
    settled = [r.export_settled(horizon) for r in runs]
    hours = [r.model_hours[r.export_settled(horizon) - 1] for r in runs
             if r.export_settled(horizon) is not None and r.model_hours]
    kinds = [k for r in runs for k in r.misses(horizon)]
    return {"targets": len(shares), "mean": statistics.mean(shares), "worst": min(shares),
            "at90": sum(1 for x in shares if x >= 0.9), "at80": sum(1 for x in shares if x >= 0.8),
            "unseen": kinds.count("unseen"), "misread": kinds.count("misread"),
            "median_launches": _pct(settled, 0.5), "hv16": statistics.mean(r.hv_frac.get(16, 0.0) for r in runs),
            "gpu_hours_median": statistics.median(hours) if hours else None}


def print_group_tables(runs: dict, groups: dict[str, list[str]], strategies: list[str],
                       horizon: int = HORIZON) -> dict:
    """Per group of targets (shipped, train, test, and each family in them): how many targets meet
    the goal (>= 90% / >= 80% of seeds), the worst and mean share, the median launches until the
    exported picks settle over all runs, HV@16, targets where the strategy is below random search,
    the median modelled GPU hours until the picks settle, and the picks that missed at launch 16 by
    why (:meth:`RunResult.misses`: no setting within 3% measured / one measured but misread)."""
    out: dict = {}
    for group, names in groups.items():
        names = [n for n in names if n in runs]
        if not names:
            continue
        print(f"\n## {group}: {len(names)} landscapes")
        head = ["strategy", ">=90%", ">=80%", "worst", f"mean exp@{horizon}", "median launches", "HV@16", "below random",
                "GPU h", "missed unseen/misread"]
        lines = []
        for strategy in strategies:
            by_target = {n: runs[n][strategy] for n in names if strategy in runs[n]}
            if not by_target:
                continue
            g = group_summary([r for rs in by_target.values() for r in rs], by_target, horizon)
            out.setdefault(group, {})[strategy] = g
            below = "-"
            if strategy != "random" and all("random" in runs[n] for n in names):
                share = lambda rs: statistics.mean(1.0 if r.export_both(horizon) else 0.0 for r in rs)  # noqa: E731
                below = str(sum(1 for n in names if share(runs[n][strategy]) < share(runs[n]["random"])))
            gpu = "-" if g["gpu_hours_median"] is None else f"{g['gpu_hours_median']:.1f}"
            lines.append([strategy, f"{g['at90']}/{g['targets']}", f"{g['at80']}/{g['targets']}", f"{g['worst']:.0%}",
                          f"{g['mean']:.1%}", g["median_launches"], f"{g['hv16']:.3f}", below, gpu,
                          f"{g['unseen']}/{g['misread']}"])
        _table(head, lines)
    return out


# --------------------------------------------------------------------------------------------------
# Running


def _task(args) -> RunResult:
    import optuna

    from searchbench import strategies as known

    # Optuna flags its own newer APIs (metric names, constraints) as experimental: noise here.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    target, truth, strategy, seed, space, suite, budget, noise, prune, hours, options, prune_options, load_s = args
    if options:
        known.STRATEGIES["default"] = {"sampler": {"options": options}}
    if prune and prune_options:
        prune = {"enabled": True, **prune_options}
    run = run_one(target, truth, strategy, seed, space=space, suite=suite, budget=budget, noise=noise,
                  prune=prune, hours=hours, load_s=load_s)
    run.strategy = strategy + ("+prune" if prune else "")
    return run


def run_all(tasks: list, jobs: int):
    """Every run, in order; ``jobs`` > 1 spreads them over that many processes."""
    if jobs <= 1:
        for t in tasks:
            yield _task(t)
        return
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        yield from pool.imap(_task, tasks, chunksize=1)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--profiles", default=None,
                   help=f"simulator profiles, names or YAML paths, comma-separated (default: {','.join(PROFILES)} "
                        "unless --landscape is given)")
    p.add_argument("--landscape", action="append", default=[], metavar="FILE.json",
                   help="a landscape table (repeatable)")
    p.add_argument("--set", dest="sets", default=None,
                   help="test-bed sets, comma-separated: shipped, train, test (searchbench/sets.py); "
                        "adds a summary table per set")
    p.add_argument("--strategies", default=None, help=f"comma-separated, from: {', '.join(STRATEGIES)} (default: all)")
    p.add_argument("--seeds", type=int, default=20, help="runs per target and strategy")
    p.add_argument("--first-seed", type=int, default=0, help="seeds run from here")
    p.add_argument("--budget", type=int, default=HORIZON, help="launches per run")
    p.add_argument("--noise", type=float, default=0.02, help="relative measurement noise of the backend")
    p.add_argument("--suite", default="seed", help="benchmark suite: seed, quick or a file")
    p.add_argument("--space", default=str(SPACE), help="search-space file")
    p.add_argument("--options", default=None, metavar="JSON",
                   help="sampler.options for the default strategy, e.g. '{\"explore_weight\": 0.5}' (tuning)")
    p.add_argument("--prune-options", default=None, metavar="JSON",
                   help="budget.prune's knobs for the runs that prune, e.g. '{\"z\": 2.5}' (tuning)")
    p.add_argument("--only", default=None, metavar="REGEX", help="keep the targets whose name matches")
    p.add_argument("--jobs", type=int, default=1, help="processes (default 1: the machine is shared)")
    p.add_argument("--cache", default=str(CACHE), help="where profiles' landscape tables are kept")
    p.add_argument("--quick", action="store_true", help=f"5 seeds, strategies {', '.join(QUICK_STRATEGIES)}")
    p.add_argument("--json", dest="json_path", default=None, help="also write every run's figures here")
    p.add_argument("--hours", type=float, default=None,
                   help="run each study for this many modelled GPU hours (no launch limit) and print the night table")
    p.add_argument("--load-s", type=float, default=None, metavar="SECONDS",
                   help="every launch's modelled load time instead of the landscape's (a what-if for --hours)")
    p.add_argument("--prune", choices=("off", "on", "both"), default="off",
                   help="the studies' budget.prune (default off: every launch measures the whole suite)")
    p.add_argument("--strip-accept", type=float, default=None, metavar="SHARE",
                   help="remove the accept_length of this share (0 to 1; 1: every row) of each landscape's rows, "
                        "drawn by --strip-seed: a grid measured by a benchmark that does not record it")
    p.add_argument("--strip-seed", type=int, default=0, help="which rows --strip-accept strips (default 0)")
    p.add_argument("--groups-only", action="store_true", help="print the per-set tables only (no table per landscape; the landscapes of "
                        "--landscape and --profiles have one of their own)")
    return p.parse_args(argv)


def parse_knobs(args) -> tuple[dict | None, dict | None]:
    """``--options`` and ``--prune-options`` as dicts (None when not given), checked as a study file
    checks ``sampler.options`` for ``auto`` and ``budget.prune``; ``ConfigError`` naming the flag and
    the key (``--options: explore: unknown key (did you mean 'explore_weight'?)``) otherwise."""
    from pydantic import ValidationError

    from tuner.config.sampler import AutoOptions
    from tuner.config.study import PruneSettings
    from tuner.config.yamlfile import ConfigError, RepeatedKey, no_repeated_keys, validation_error

    out = []
    for flag, text, model in (("--options", args.options, AutoOptions),
                              ("--prune-options", args.prune_options, PruneSettings)):
        if text is None:
            out.append(None)
            continue
        try:
            data = json.loads(text, object_pairs_hook=no_repeated_keys)
        except json.JSONDecodeError as e:
            raise ConfigError(flag, "", f"not JSON ({e.msg} at character {e.pos}): {text!r}") from None
        except RepeatedKey as e:
            raise ConfigError(flag, str(e), RepeatedKey.FIX) from None
        if not isinstance(data, dict):
            raise ConfigError(flag, "", f"expected a JSON object such as '{{\"z\": 2.5}}', got {text!r}")
        try:
            model.model_validate(data)
        except ValidationError as e:
            raise validation_error(flag, e, model) from None
        out.append(data or None)
    return out[0], out[1]


def range_problem(args) -> str | None:
    """The first numeric flag outside its range, as one line naming the flag, the value given and
    the range (None: every one is in range). QA: ``--seeds 0`` printed the ranges of five flags
    without saying which one was wrong, nor what was given. ``--noise`` is held to a study file's
    bound on ``server.model.noise`` (:data:`tuner.config.study.MAX_MODEL_NOISE`): each run is a
    study with that noise, and larger noise reaches the model backend's clips (QA: ``--noise 0.5``
    ran and printed tables, scored on figures no server reads, of studies a study file refuses)."""
    from tuner.config.study import MAX_MODEL_NOISE

    year_h = 366 * 24
    checks = (("--seeds", args.seeds, 1 <= args.seeds, "must be at least 1"),
              ("--budget", args.budget, 1 <= args.budget, "must be at least 1 launch"),
              ("--jobs", args.jobs, 1 <= args.jobs, "must be at least 1 process"),
              ("--noise", args.noise, 0 <= args.noise <= MAX_MODEL_NOISE,
               f"from 0 to {MAX_MODEL_NOISE} (a relative standard deviation, as server.model.noise; the "
               "README's figures use 0.02 and 0.04)"),
              ("--hours", args.hours, args.hours is None or 1 / 60 <= args.hours <= year_h,
               f"from 1/60 to {year_h} (a year) of modelled GPU hours"),
              ("--load-s", args.load_s, args.load_s is None or 0 <= args.load_s <= year_h * 3600,
               "from 0 to a year of seconds"),
              ("--strip-accept", args.strip_accept, args.strip_accept is None or 0 <= args.strip_accept <= 1,
               "from 0 to 1 (the share of each landscape's rows whose accept_length is removed; 1: every row)"))
    for flag, value, ok, expected in checks:
        if not ok:  # NaN fails every comparison, so it lands here too
            return f"{flag} {expected}, got {value:g}"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.quick:
        args.seeds = min(args.seeds, 5)
        args.strategies = args.strategies or ",".join(QUICK_STRATEGIES)
    strategies = (",".join(STRATEGIES) if args.strategies is None else args.strategies).split(",")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        print(f"--strategies: unknown {', '.join(map(repr, unknown))}; choose from {', '.join(STRATEGIES)}",
              file=sys.stderr)
        return 2
    twice = [s for i, s in enumerate(strategies) if s in strategies[:i]]
    if twice:  # QA: every run of it ran twice and was scored twice, the JSON holding each run twice
        print(f"--strategies: {twice[0]!r} is given twice; give each strategy once", file=sys.stderr)
        return 2
    if args.options is not None and "default" not in strategies:  # it would tune nothing that runs
        print(f"--options: sampler options for the default strategy, which --strategies {','.join(strategies)} "
              "leaves out; add default to --strategies or drop --options", file=sys.stderr)
        return 2
    problem = range_problem(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if not 0 <= args.first_seed <= 2**32 - args.seeds:  # a study's sampler.seed is numpy's: 0 to 2**32 - 1
        print(f"--first-seed: from 0 to {2**32 - args.seeds} with --seeds {args.seeds} (a seed is 0 to 2**32 - 1), "
              f"got {args.first_seed}", file=sys.stderr)
        return 2
    import re

    try:
        only = re.compile(args.only) if args.only else None
    except re.error as exc:
        print(f"--only: {args.only!r} is not a regular expression ({exc})", file=sys.stderr)
        return 2
    from tuner.config.yamlfile import ConfigError

    try:
        if args.json_path:
            from tuner.config.files import check_output

            check_output(args.json_path, "--json")  # before hours of runs, not after; its folder must exist
            profile_files = [x for x in (args.profiles or "").split(",") if x]  # a shipped name is no file here
            inputs = [Path(p).resolve() for p in [*args.landscape, *profile_files, args.space, args.suite]
                      if Path(p).is_file()]
            if Path(args.json_path).resolve() in inputs:
                raise ConfigError("--json", args.json_path, "is one of the benchmark's inputs; give another file")
        from tuner.config.space import SearchSpace
        from tuner.config.suite import load_suite

        SearchSpace.load(args.space)
        load_suite(args.suite)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    try:
        knobs = parse_knobs(args)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return 2

    from searchbench.sets import SETS, build_set

    sets = [x for x in (args.sets or "").split(",") if x]
    if any(x not in SETS for x in sets):
        print(f"--set: unknown {', '.join(x for x in sets if x not in SETS)}; choose from {', '.join(SETS)}",
              file=sys.stderr)
        return 2
    if args.sets is not None and not sets:  # QA: --set , ran the shipped profiles, 20 seeds each by default
        print(f"--set: {args.sets!r} names no set; choose from {', '.join(SETS)}", file=sys.stderr)
        return 2
    twice = [x for i, x in enumerate(sets) if x in sets[:i]]
    if twice:  # QA: refused later, as two landscapes of one name, naming one cached table twice
        print(f"--set: {twice[0]!r} is given twice; give each set once", file=sys.stderr)
        return 2
    default = "" if args.landscape or sets else ",".join(PROFILES)
    profiles = [x for x in (args.profiles or default).split(",") if x]
    if not (profiles or args.landscape or sets):
        print(f"error: --profiles {args.profiles!r} names no landscape; give profile names or paths, "
              "--landscape FILE.json or --set", file=sys.stderr)
        return 2
    twice = repeated_input(profiles, args.landscape)
    if twice:  # before any table is built: the same landscape twice would be scored twice
        print(f"error: {twice}", file=sys.stderr)
        return 2
    targets: list[Target] = []
    groups: dict[str, list[str]] = {}
    try:
        if profiles or sets or args.strip_accept is not None:  # their tables (and stripped copies) are written there
            from tuner.config.files import check_writable

            check_writable(args.cache, "--cache", folder=True)
        for name in sets:
            built = [replace(t, given=f"--set {name}") for t in build_set(
                name, Path(args.cache), Path(args.space), args.suite, progress=lambda line: print(line, file=sys.stderr))]
            groups[name] = [t.name for t in built]
            for family in sorted({t.family for t in built if t.family}):
                groups[f"{name} / {'generated profiles' if family == 'generator' else 'family ' + family}"] = [
                    t.name for t in built if t.family == family]
            targets.extend(built)
        for profile in profiles:
            target = truth_for(profile, Path(args.space), args.suite, Path(args.cache))[0]
            targets.append(replace(target, given=f"--profiles {profile}"))
        for path in args.landscape:
            targets.append(replace(table_target(Path(path)), given=f"--landscape {path}"))
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.strip_accept is not None:  # the truth is the same table's: only what the search reads changes
        targets = [strip_accept(t, args.strip_accept, args.strip_seed, Path(args.cache)) for t in targets]
    if only is not None:
        targets = [t for t in targets if only.search(t.name)]
        groups = {g: [n for n in names if only.search(n)] for g, names in groups.items()}
        if not targets:
            print(f"error: --only {args.only!r} matches no landscape", file=sys.stderr)
            return 2
    if args.groups_only:  # QA: with no --set the runs ran and no table said how they did
        given = [t.name for t in targets if not any(t.name in names for names in groups.values())]
        if given:  # --landscape and --profiles: a table of their own, as a set's
            groups["given (--landscape, --profiles)"] = given
    names = [t.name for t in targets]
    if len(set(names)) != len(names):
        clash = next(n for n in names if names.count(n) > 1)
        # the inputs as given: two profile files of one name share one cached table (QA: the
        # line named that cache file twice, and neither file the user gave)
        files = ", ".join(t.given or str(t.table) for t in targets if t.name == clash)
        print(f"error: two landscapes share the name {clash!r} ({files}); give each its own \"name\" "
              "(a file given twice: give it once)", file=sys.stderr)
        return 2
    return run_targets(targets, strategies, args, argv, groups, knobs)


def suite_problem(targets: list[Target], truths: dict, suite: str) -> str | None:
    """Why a target cannot be scored with ``suite`` (None: every one can): a study measures only the
    levels its suite sweeps (and single requests only if it sends some), so an objective a target is
    scored on (``speedup@C`` at its table's largest concurrency) needs the suite to measure it, as a
    study file's check asks (``tuner.config.study``)."""
    from tuner.config.study import objective_concurrency
    from tuner.config.suite import load_suite

    loaded = load_suite(suite)
    swept = set(loaded.sweep.concurrencies)
    levels = ", ".join(map(str, sorted(swept))) or "none"
    for t in targets:
        for name in truths[t.name].objectives:
            c = objective_concurrency(name)
            if c is not None and c not in swept:
                return (f"{t.table}: scored on {name}, and --suite {suite} never measures concurrency {c} "
                        f"(it sweeps {levels}); give a --suite that sweeps {c}, or a table whose largest "
                        "concurrency the suite sweeps")
            if c is None and loaded.n_single_requests() == 0:
                return (f"{t.table}: scored on {name}, and --suite {suite} sends no single requests "
                        "(single.lengths); give a --suite that does")
    return None


def run_targets(targets: list[Target], strategies: list[str], args, argv, groups: dict | None = None,
                knobs: tuple[dict | None, dict | None] = (None, None)) -> int:
    """Run every strategy on every target and print the tables; ``knobs``: ``--options`` and
    ``--prune-options`` as :func:`parse_knobs` returns them."""
    from tuner.config.yamlfile import ConfigError

    space = Path(args.space).resolve()
    try:
        truths = {t.name: t.truth(space) for t in targets}
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    problem = suite_problem(targets, truths, args.suite)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    command = " ".join(sys.argv[1:] if argv is None else argv)  # after the checks: a refusal is one line
    print(f"command: python benchmarks/search_efficiency.py {command}", file=sys.stderr)
    for t in truths.values():
        if t.outside:
            print(f"warning: {t.name}: {t.outside} settings of its table lie outside the search space "
                  f"{space.name}; the search never proposes them, and they are not scored", file=sys.stderr)
    prunes = {"off": (False,), "on": (True,), "both": (False, True)}[args.prune]
    options, prune_options = knobs
    tasks = [(t, truths[t.name], s, seed, space, args.suite, args.budget, args.noise, prune, args.hours, options,
              prune_options, args.load_s)
             for t in targets for s in strategies for prune in prunes
             for seed in range(args.first_seed, args.first_seed + args.seeds)]
    runs: dict = {}
    started = time.monotonic()
    horizon = args.budget  # the picks are scored where the runs end: after the budget's last launch
    for r in run_all(tasks, args.jobs):
        runs.setdefault(r.target, {}).setdefault(r.strategy, []).append(r)
        print(f"{r.target} {r.strategy} seed {r.seed}: exported picks within {WITHIN:.0%} at launch {horizon}: "
              f"{'yes' if r.export_both(horizon) else 'no'} (settled at {r.export_settled(horizon) or 'never'}; "
              f"{r.launches} launches, {r.seconds:.1f} s)", file=sys.stderr, flush=True)
    summaries = {name: {s: summarize(rs, horizon) for s, rs in by.items()} for name, by in runs.items()}
    limit = f"{args.hours:g} modelled GPU hours" if args.hours else f"{args.budget} launches"
    print(f"# search efficiency: {args.seeds} seeds from {args.first_seed}, budget {limit}, prune {args.prune}"
          f"{' ' + args.prune_options if args.prune_options else ''}"
          # --load-s 0 is a what-if too (QA: the header left it out, as if the tables' own load times ran)
          f"{f', load {args.load_s:g} s' if args.load_s is not None else ''}, "
          f"{f'accept_length stripped from {args.strip_accept:.0%} of rows (seed {args.strip_seed}), ' if args.strip_accept is not None else ''}"
          f"noise {args.noise:.0%}, suite {args.suite}, space {Path(args.space).name}; "
          f"{time.monotonic() - started:.0f} s")
    print(f"# exp@{horizon} = share of seeds whose exported picks (export --pick single / throughput after launch "
          f"{horizon}) are both truly within {WITHIN:.0%} of the optima; exp med/p90 = launches until they are "
          f"and stay so; hit = first launch the best measured setting is truly within {WITHIN:.0%}; "
          f"HV = hypervolume measured / true front; GPU h = median modelled GPU hours until exp")
    if not args.groups_only:
        print_target_tables(summaries, truths, args.budget, horizon)
    labels = [s + ("+prune" if prune else "") for s in strategies for prune in prunes]
    grouped = print_group_tables(runs, groups, labels, horizon) if groups else {}
    if args.hours:
        nights = {name: {s: summarize_night(rs, args.hours) for s, rs in by.items()} for name, by in runs.items()}
        if not args.groups_only:  # (QA: --groups-only printed a night table per landscape: 120 for test)
            print_night(nights, truths, args.hours, _table)
        if groups and args.prune == "both":
            grouped["night"] = print_night_groups(nights, groups, strategies, _table)
        for name, by in nights.items():
            for s, row in by.items():
                summaries[name][s]["night"] = row
    if args.json_path:
        from tuner.config.files import write_text_atomic

        write_text_atomic(args.json_path, json.dumps({
            "summaries": summaries, "groups": grouped,
            "runs": [r.__dict__ for by in runs.values() for rs in by.values() for r in rs]}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
