"""How fast does a study find the optimum? The real study engine against the model's ground truth.

Each run is a whole study on the real engine (:func:`tuner.engine.study.create_study` and
:func:`tuner.engine.runner.run_study`: the same sampler setup, seed trials, validity rules and reuse of
repeated effective configs) with :class:`tuner.engine.backends.ModelBackend` (the simulator's performance
model, no HTTP, 2% measurement noise) on in-memory Optuna storage. The truth comes from
:func:`tuner.sim.landscape.landscape` (``tuner sim landscape``): every valid effective config's
expected figures, the true Pareto front and the optimum of each objective.

Per profile and strategy, over ``--seeds`` runs, it prints:

* launches until the study's best (the config with the best *measured* value, judged by its *true*
  value) is within 3% of the true optimum of single_speedup (C=1) and of speedup@32 -- median and
  90th percentile, and the share of seeds where both are within 3% by launch 16 (the goal: >= 90%);
* the proposals (trials asked of the sampler, invalid and reused ones included) up to that launch;
* the hypervolume of the configs measured after 8, 16 and 32 launches (their true values) as a
  fraction of the true front's, above the landscape's nadir (the worst valid config per objective).

Launches are what a night's budget counts (measured or failed trials); invalid proposals (refused by
SGLang's rules without launching) and repeats of an already measured effective config cost nothing.

    python benchmarks/search_efficiency.py                     # every profile, every strategy, 20 seeds
    python benchmarks/search_efficiency.py --quick             # 5 seeds, the main strategies
    python benchmarks/search_efficiency.py --profiles k2.6-tp8-pcie --strategies default,random --seeds 50

Progress goes to stderr, the table to stdout (``--json FILE`` also writes every run's figures).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPACE = ROOT / "search_spaces" / "eagle3.yaml"
PROFILES = ("k2.6-tp8-pcie", "k2.6-tp8-nvlink", "dense-27b-tp1")
OBJECTIVES = ("single_speedup", "speedup@32")
WITHIN = 0.03  #: "found" means the study's best is within 3% of the true optimum
GOAL_LAUNCHES = 16  #: a night on K2.6 TP8 holds about 16 launches
HV_AT = (8, 16, 32)

# SGLang's scripts/playground/bench_speculative.py: its default value lists and loop order
# (steps, then topk, then draft tokens; batch sizes outermost, which our one suite covers in one
# launch), skipping trees larger than steps * topk + 1 and the all-zero autoregressive row (our
# baseline is measured separately).
BENCH_SPECULATIVE_STEPS = (1, 3, 5, 7)
BENCH_SPECULATIVE_TOPK = (1, 2, 4, 8)
BENCH_SPECULATIVE_DRAFT = (2, 4, 8, 16, 32)


def bench_speculative_grid() -> list[tuple[int, int, int]]:
    """bench_speculative.py's default configs in its order (steps, topk, draft tokens)."""
    return [(s, k, d) for s in BENCH_SPECULATIVE_STEPS for k in BENCH_SPECULATIVE_TOPK
            for d in BENCH_SPECULATIVE_DRAFT if s * k + 1 >= d]


#: Strategies: the study file's ``sampler`` section and seed-trial policy. ``default`` is exactly
#: what a study file without a sampler section gets; ``previous`` is the default before issue 10
#: (multivariate TPE, 6 startup trials, constant liar; seeds (3, 1, 4) and (1, 1, 3) only). The
#: others keep the engine's default seed trials, except ``grid``, which replays bench_speculative.py's
#: grid and nothing else.
STRATEGIES: dict[str, dict] = {
    "default": {"sampler": {}},
    "previous": {"sampler": {"name": "tpe"}, "seeds": [(3, 1, 4), (1, 1, 3)]},
    "random": {"sampler": {"name": "random"}},
    "grid": {"grid": True},
    "tpe": {"sampler": {"name": "tpe", "options": {"multivariate": False, "n_startup_trials": 10,
                                                    "constant_liar": False}}},
    "tpe-mv": {"sampler": {"name": "tpe", "options": {"multivariate": True, "n_startup_trials": 10}}},
    "nsgaii": {"sampler": {"name": "nsgaii"}},
    "nsgaii-p8": {"sampler": {"name": "nsgaii", "options": {"population_size": 8}}},
}
QUICK_STRATEGIES = ("default", "previous", "random", "grid")


# --------------------------------------------------------------------------------------------------
# The truth


@dataclass
class Truth:
    """The landscape reduced to what scoring needs: true values per effective config."""

    profile: str
    values: dict  #: SpecConfig -> tuple of true objective values
    optimum: tuple[float, ...]
    nadir: tuple[float, ...]
    front_hv: float
    n_configs: int


def truth_for(profile: str, space: Path, suite: str) -> Truth:
    from tuner.engine.objectives import hypervolume
    from tuner.sim.landscape import landscape

    land = landscape(profile, space, concurrencies=(1, 32), suite=suite, objectives=OBJECTIVES)
    values = {r.config: tuple(r.objective(o) for o in OBJECTIVES) for r in land.rows}
    optimum = tuple(land.optima[o].objective(o) for o in OBJECTIVES)
    nadir = tuple(min(v[i] for v in values.values()) for i in range(len(OBJECTIVES)))
    front_hv = hypervolume([values[r.config] for r in land.front], nadir)
    return Truth(land.profile, values, optimum, nadir, front_hv, len(land.rows))


# --------------------------------------------------------------------------------------------------
# One run: a whole study on the real engine


@dataclass
class RunResult:
    strategy: str
    profile: str
    seed: int
    #: per objective: launches (and proposals) until the study's best is within 3%; None: never
    launches_to: list[int | None] = field(default_factory=list)
    proposals_to: list[int | None] = field(default_factory=list)
    both_launches: int | None = None
    both_proposals: int | None = None
    hv_frac: dict[int, float] = field(default_factory=dict)
    launches: int = 0
    proposals: int = 0
    seconds: float = 0.0


def study_config(profile: str, strategy: str, seed: int, space: Path, suite: str, budget: int):
    from tuner.config.study import study_from_dict

    spec = STRATEGIES[strategy]
    data: dict = {
        "name": f"eff-{strategy}-{seed}", "search_space": str(space),
        "server": {"backend": "sim", "model_path": "sim/model", "sim": {"profile": profile}},
        "bench": {"suite": suite}, "objectives": list(OBJECTIVES),
        "sampler": {**spec.get("sampler", {}), "seed": seed}, "budget": {"n_trials": budget},
    }
    seeds = bench_speculative_grid() if spec.get("grid") else spec.get("seeds")
    if seeds is not None:
        data["default_seed_trials"] = False
        data["seed_trials"] = [{"speculative_num_steps": s, "speculative_eagle_topk": k,
                                "speculative_num_draft_tokens": d} for s, k, d in seeds]
    return study_from_dict(data)


def grid_launches(space: Path) -> int:
    """How many launches the bench_speculative grid takes (rewritten repeats are reused)."""
    from tuner.config.space import SearchSpace
    from tuner.sglang.rules import SpecConfig

    sp = SearchSpace.load(space)
    return len({sp.resolve(SpecConfig(*c)).effective for c in bench_speculative_grid()})


def run_one(profile: str, strategy: str, seed: int, truth: Truth, *, space: Path, suite: str,
            budget: int, noise: float) -> RunResult:
    import optuna

    from tuner.config.suite import load_suite
    from tuner.engine.backends import ModelBackend
    from tuner.engine.records import FAILED, INVALID, MEASURED, REUSED, load_records
    from tuner.engine.runner import run_study
    from tuner.engine.study import create_study, open_study

    started = time.monotonic()
    config = study_config(profile, strategy, seed, space, suite, budget)
    storage = optuna.storages.InMemoryStorage()
    create_study(config, storage)
    backend = ModelBackend(profile, load_suite(suite), noise=noise, seed=seed)
    n_trials = min(budget, grid_launches(space)) if STRATEGIES[strategy].get("grid") else budget
    run_study(config, storage, backend, n_trials=n_trials)
    # Finished trials only: queued seed trials the run never reached are not proposals.
    records = [r for r in load_records(open_study(config.name, storage))
               if r.status in (MEASURED, FAILED, INVALID, REUSED)]

    out = RunResult(strategy, profile, seed, [None] * len(OBJECTIVES), [None] * len(OBJECTIVES))
    best: list[tuple[float, object] | None] = [None] * len(OBJECTIVES)
    measured: list = []
    launches = 0
    for proposals, r in enumerate(records, start=1):
        if r.status not in (MEASURED, FAILED):
            continue
        launches += 1
        if r.status == MEASURED and r.effective in truth.values:
            measured.append(r.effective)
            for i, v in enumerate(r.values):
                if best[i] is None or v > best[i][0]:
                    best[i] = (v, r.effective)
        for i in range(len(OBJECTIVES)):
            found = best[i] is not None and truth.values[best[i][1]][i] >= (1 - WITHIN) * truth.optimum[i]
            if out.launches_to[i] is None and found:
                out.launches_to[i], out.proposals_to[i] = launches, proposals
        if out.both_launches is None and all(x is not None for x in out.launches_to):
            out.both_launches, out.both_proposals = launches, proposals
        if launches in HV_AT:
            out.hv_frac[launches] = hv_fraction(measured, truth)
    for n in HV_AT:  # a strategy that stopped early keeps what it had
        if n not in out.hv_frac and launches < n:
            out.hv_frac[n] = hv_fraction(measured, truth)
    out.launches, out.proposals = launches, len(records)
    out.seconds = time.monotonic() - started
    if backend.calls != launches + 1:  # + the baseline: the engine launched what it recorded
        raise RuntimeError(f"{strategy}/{profile}/{seed}: {backend.calls} backend calls for {launches} launches")
    return out


def hv_fraction(configs: list, truth: Truth) -> float:
    from tuner.engine.objectives import hypervolume

    if not configs or truth.front_hv <= 0:
        return 0.0
    return hypervolume([truth.values[c] for c in configs], truth.nadir) / truth.front_hv


# --------------------------------------------------------------------------------------------------
# Summary and table


def _pct(values: list[int | None], q: float) -> str:
    """The q-quantile of launches, with runs that never got there counted as infinitely long."""
    if not values:
        return "-"
    ordered = sorted(values, key=lambda v: float("inf") if v is None else v)
    v = ordered[min(len(ordered) - 1, int(q * len(ordered) + 0.999999) - 1)]
    return "never" if v is None else str(v)


def _share(values: list[int | None], by: int) -> float:
    return sum(1 for v in values if v is not None and v <= by) / len(values) if values else 0.0


def summarize(runs: list[RunResult]) -> dict:
    n = len(runs)
    row: dict = {"runs": n}
    for i, obj in enumerate(OBJECTIVES):
        got = [r.launches_to[i] for r in runs]
        row[obj] = {"median": _pct(got, 0.5), "p90": _pct(got, 0.9), "by16": _share(got, GOAL_LAUNCHES)}
    both = [r.both_launches for r in runs]
    row["both"] = {"median": _pct(both, 0.5), "p90": _pct(both, 0.9), "by16": _share(both, GOAL_LAUNCHES)}
    props = [r.both_proposals for r in runs]
    row["both_proposals_median"] = _pct(props, 0.5)
    row["hv"] = {k: statistics.mean(r.hv_frac.get(k, 0.0) for r in runs) for k in HV_AT}
    row["seconds_per_run"] = statistics.mean(r.seconds for r in runs)
    return row


def print_table(summaries: dict, truths: dict, args) -> None:
    print(f"# search efficiency: {args.seeds} seeds from {args.first_seed}, budget {args.budget} launches, "
          f"noise {args.noise:.0%}, "
          f"suite {args.suite}, space {Path(args.space).name}")
    print(f"# launches until the study's best is within {WITHIN:.0%} of the true optimum: median / p90 "
          f"(never = not within the budget); by16 = share of seeds within {WITHIN:.0%} by launch "
          f"{GOAL_LAUNCHES}; props = proposals (invalid and reused included) until both are found; "
          f"HV = hypervolume of what was measured / the true front's")
    for profile, rows in summaries.items():
        t = truths[profile]
        print(f"\n## {profile}  ({t.n_configs} valid effective configs; optimum single_speedup "
              f"{t.optimum[0]:.3f}, speedup@32 {t.optimum[1]:.3f})")
        head = ["strategy", "C=1 med/p90", "C=1 by16", "C=32 med/p90", "C=32 by16", "both med/p90",
                "both by16", "props", *[f"HV@{k}" for k in HV_AT]]
        lines = [head]
        for strategy, s in rows.items():
            c1, c32, both = s[OBJECTIVES[0]], s[OBJECTIVES[1]], s["both"]
            lines.append([strategy, f"{c1['median']}/{c1['p90']}", f"{c1['by16']:.0%}",
                          f"{c32['median']}/{c32['p90']}", f"{c32['by16']:.0%}",
                          f"{both['median']}/{both['p90']}", f"{both['by16']:.0%}",
                          s["both_proposals_median"], *[f"{s['hv'][k]:.3f}" for k in HV_AT]])
        widths = [max(len(str(line[i])) for line in lines) for i in range(len(head))]
        for j, line in enumerate(lines):
            print("| " + " | ".join(str(c).ljust(w) for c, w in zip(line, widths)) + " |")
            if j == 0:
                print("|" + "|".join("-" * (w + 2) for w in widths) + "|")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--profiles", default=",".join(PROFILES),
                   help="shipped profile names or YAML paths, comma-separated")
    p.add_argument("--strategies", default=None, help=f"comma-separated, from: {', '.join(STRATEGIES)} (default: all)")
    p.add_argument("--seeds", type=int, default=20, help="runs per profile and strategy")
    p.add_argument("--first-seed", type=int, default=0, help="seeds run from here (held-out checks: 100)")
    p.add_argument("--budget", type=int, default=32, help="launches per run")
    p.add_argument("--noise", type=float, default=0.02, help="relative measurement noise of the backend")
    p.add_argument("--suite", default="seed", help="benchmark suite: seed, quick or a file")
    p.add_argument("--space", default=str(SPACE), help="search-space file")
    p.add_argument("--quick", action="store_true", help=f"5 seeds, strategies {', '.join(QUICK_STRATEGIES)}")
    p.add_argument("--json", dest="json_path", default=None, help="also write every run's figures here")
    args = p.parse_args(argv)
    if args.quick:
        args.seeds = min(args.seeds, 5)
        args.strategies = args.strategies or ",".join(QUICK_STRATEGIES)
    strategies = (args.strategies or ",".join(STRATEGIES)).split(",")
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        print(f"--strategies: unknown {', '.join(unknown)}; choose from {', '.join(STRATEGIES)}", file=sys.stderr)
        return 2
    if args.seeds < 1 or args.budget < 1:
        print("--seeds and --budget must be at least 1", file=sys.stderr)
        return 2
    from tuner.config.yamlfile import ConfigError

    profiles = [x for x in args.profiles.split(",") if x]
    truths: dict[str, Truth] = {}
    try:
        for profile in profiles:
            truths[profile] = truth_for(profile, Path(args.space), args.suite)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("command: python benchmarks/search_efficiency.py " + " ".join(sys.argv[1:] if argv is None else argv),
          file=sys.stderr)
    summaries: dict[str, dict] = {}
    all_runs: list[RunResult] = []
    for profile in profiles:
        summaries[profile] = {}
        for strategy in strategies:
            runs = []
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                runs.append(run_one(profile, strategy, seed, truths[profile], space=Path(args.space),
                                    suite=args.suite, budget=args.budget, noise=args.noise))
                r = runs[-1]
                print(f"{profile} {strategy} seed {seed}: both within {WITHIN:.0%} at launch "
                      f"{r.both_launches or 'never'} ({r.launches} launches, {r.proposals} proposals, "
                      f"{r.seconds:.1f} s)", file=sys.stderr, flush=True)
            summaries[profile][strategy] = summarize(runs)
            all_runs.extend(runs)
    print_table(summaries, truths, args)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({"summaries": summaries,
                                                    "runs": [r.__dict__ for r in all_runs]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
