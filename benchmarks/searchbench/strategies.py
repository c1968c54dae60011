"""The strategies the benchmark compares: what a study file says in ``sampler`` and its seed trials.

``default`` is exactly what a study file without a sampler section gets. The others keep the
engine's default seed trials, except ``grid``, which replays SGLang's own
``scripts/playground/bench_speculative.py`` grid and nothing else, and ``previous``.
"""

from __future__ import annotations

from pathlib import Path

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


#: ``previous`` is the default before issue 10 (multivariate TPE, 6 startup trials, constant liar;
#: seeds (3, 1, 4) and (1, 1, 3) only).
STRATEGIES: dict[str, dict] = {
    "default": {"sampler": {}},
    "local-tpe": {"sampler": {"name": "local-tpe"}},
    "previous": {"sampler": {"name": "tpe"}, "seeds": [(3, 1, 4), (1, 1, 3)]},
    "random": {"sampler": {"name": "random"}},
    "grid": {"grid": True},
    "tpe": {"sampler": {"name": "tpe", "options": {"multivariate": False, "n_startup_trials": 10,
                                                    "constant_liar": False}}},
    "tpe-mv": {"sampler": {"name": "tpe", "options": {"multivariate": True, "n_startup_trials": 10}}},
    "nsgaii": {"sampler": {"name": "nsgaii"}},
    "nsgaii-p8": {"sampler": {"name": "nsgaii", "options": {"population_size": 8}}},
}
QUICK_STRATEGIES = ("default", "local-tpe", "random", "grid")


def study_data(strategy: str, seed: int, table: Path, objectives, space: Path, suite: str, budget: int,
               noise: float, prune: bool | dict = False, hours: float | None = None,
               load_s: float | None = None) -> dict:
    """The study file (as data) of one run: ``server.backend: model`` on the landscape table.

    ``budget`` launches, or with ``hours`` a modelled-time budget (``budget.timeout``) and no launch
    limit; ``prune``: the study's ``budget.prune`` (off unless asked: a launch measures the whole
    suite, as the launch-based figures assume); ``load_s``: the modelled load time of every launch
    instead of the table's (a what-if on the night's figures)."""
    spec = STRATEGIES[strategy]
    limit = {"timeout": f"{hours}h"} if hours else {"n_trials": budget}
    data: dict = {
        "name": f"eff-{strategy}-{seed}", "search_space": str(space),
        "server": {"backend": "model", "model_path": "sim/model", "draft_model_path": "sim/draft",
                   "model": {"landscape": str(table), "noise": noise, "seed": seed,
                             **({"load_s": load_s} if load_s is not None else {})}},
        "bench": {"suite": suite}, "objectives": list(objectives),
        "sampler": {**spec.get("sampler", {}), "seed": seed}, "budget": {**limit, "prune": prune},
    }
    seeds = bench_speculative_grid() if spec.get("grid") else spec.get("seeds")
    if seeds is not None:
        from tuner.sglang.rules import SpecConfig

        data["default_seed_trials"] = False
        data["seed_trials"] = [SpecConfig(*c).server_args() for c in seeds]
    return data


def grid_launches(space: Path) -> int:
    """How many launches the bench_speculative grid takes (rewritten repeats are reused)."""
    from tuner.config.space import SearchSpace
    from tuner.sglang.rules import SpecConfig

    sp = SearchSpace.load(space)
    return len({sp.resolve(SpecConfig(*c)).effective for c in bench_speculative_grid()})
