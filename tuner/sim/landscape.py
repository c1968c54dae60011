"""The performance model's answer for every setting of a search space: the ground truth of a study.

:func:`landscape` evaluates :meth:`PerfModel.expected_figures` for the autoregressive baseline and
every valid effective setting of a search space, with no HTTP and no server, and finds the true
Pareto front and the optimum of each objective. Objectives are named as the study names its trial
attributes: ``single_speedup`` and ``speedup@C`` (throughput speedup at concurrency ``C``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from ..config.space import SearchSpace
from ..config.yamlfile import ConfigError
from ..sglang.rules import SpecConfig
from .model import ExpectedFigures, PerfModel
from .profile import Profile, load_profile


@dataclass(frozen=True)
class SuiteInputs:
    """What the model needs from a benchmark suite file."""

    name: str
    prompts: tuple[str, ...]
    single_lengths: tuple[int, ...]
    sweep_tokens: int


def load_suite_inputs(name_or_path: str | Path) -> SuiteInputs:
    """Prompts, single-request lengths and sweep length of a suite (``seed``, ``quick`` or a path),
    read by the suite loader (:func:`tuner.config.suite.load_suite`, the schema ``tuner bench --suite``
    and a study's ``bench.suite`` hold a suite to) and reduced as :class:`tuner.engine.model_backend.
    ModelBackend` reduces it for the model (one set of lengths for every prompt): every request's
    text, the single requests' distinct lengths, the mean sweep length. So a suite no study could
    measure is no landscape's either (QA fuzz, qa138: ``single: x`` or ``prompts: -.inf`` ended in a
    traceback, and ``lengths: [true]``, an unknown key or ``temperature: hot`` computed one), and
    one a study measures is one (a sweep without ``max_tokens`` takes the suite's default, as it
    does there). Raises :class:`ConfigError` naming the file and key."""
    from ..config.suite import load_suite

    suite = load_suite(name_or_path)
    lengths = sorted({n for p in suite.single_prompts() for n in suite.single_lengths(p)})
    if not suite.prompts or not lengths:
        # a landscape's first objective is single_speedup: the model needs single requests
        raise ConfigError(name_or_path, "single.lengths", "expected at least one single-request length (the "
                          "landscape's single_speedup needs single requests)")
    tokens = round(sum(suite.sweep_tokens(p) for p in suite.prompts) / len(suite.prompts))
    return SuiteInputs(suite.name, tuple(p.text for p in suite.prompts), tuple(lengths), tokens)


@dataclass(frozen=True)
class LandscapeRow:
    """The model's figures for one effective setting (``config`` None: the autoregressive baseline)."""

    config: SpecConfig | None
    single_tok_per_s: float
    tok_per_s: dict[int, float]
    single_speedup: float
    speedup: dict[int, float]
    accept_length: float

    def objective(self, name: str) -> float:
        """``single_speedup`` or ``speedup@C``."""
        if name == "single_speedup":
            return self.single_speedup
        if name.startswith("speedup@") and name[8:].isdigit() and int(name[8:]) in self.speedup:
            return self.speedup[int(name[8:])]
        raise ValueError(f"unknown objective {name!r}; use single_speedup or speedup@C for a computed C")

    def to_dict(self) -> dict:
        """Flat, JSON-ready; figure names match the study's trial attributes."""
        cfg = self.config.as_dict() if self.config else {"num_steps": None, "eagle_topk": None,
                                                         "num_draft_tokens": None}
        out: dict = {**cfg, "accept_length": round(self.accept_length, 4),
                     "single_tok_per_s": round(self.single_tok_per_s, 3),
                     "single_speedup": round(self.single_speedup, 4)}
        for c in sorted(self.tok_per_s):
            out[f"tok_per_s@{c}"] = round(self.tok_per_s[c], 3)
            out[f"speedup@{c}"] = round(self.speedup[c], 4)
        return out


@dataclass(frozen=True)
class Landscape:
    """Every setting's figures, the true Pareto front and the optimum of each objective.

    Iterating (or ``len``) goes over :attr:`rows`, one per valid effective setting, sorted.
    """

    profile: str
    space: str
    suite: str
    concurrencies: tuple[int, ...]
    objectives: tuple[str, ...]
    baseline: LandscapeRow
    rows: list[LandscapeRow]
    front: list[LandscapeRow] = field(default_factory=list)
    optima: dict[str, LandscapeRow] = field(default_factory=dict)
    load_s: float | None = None  #: the profile's modelled load time (``runtime.load_s``)

    def __iter__(self) -> Iterator[LandscapeRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def best(self, objective: str, n: int = 1) -> list[LandscapeRow]:
        """The ``n`` best rows by one objective (ties broken by fewer draft tokens, then steps)."""
        return sorted(self.rows, key=lambda r: (-r.objective(objective), _cost_key(r)))[:n]

    def to_table(self, keep=None, load_s: float | None = None) -> dict:
        """The landscape as a landscape table (:mod:`tuner.config.landscape`'s file format): the
        baseline and every row ``keep(config)`` accepts (default: all), at every concurrency;
        ``load_s`` defaults to the profile's."""
        def figures(row: LandscapeRow) -> dict:
            out = {"single_tok_per_s": round(row.single_tok_per_s, 4)}
            out.update({f"tok_per_s@{c}": round(v, 4) for c, v in sorted(row.tok_per_s.items())})
            return out

        table: dict = {"name": self.profile, "description": f"tuner sim landscape: profile {self.profile}, "
                       f"suite {self.suite}", "concurrency": list(self.concurrencies)}
        load_s = self.load_s if load_s is None else load_s
        if load_s is not None:
            table["load_s"] = load_s
        table["baseline"] = figures(self.baseline)
        table["configs"] = [{**r.config.as_dict(), "accept_length": round(r.accept_length, 4), **figures(r)}
                            for r in self.rows if keep is None or keep(r.config)]
        return table

    def to_dict(self) -> dict:
        return {
            "profile": self.profile, "space": self.space, "suite": self.suite,
            "concurrencies": list(self.concurrencies), "objectives": list(self.objectives),
            "baseline": self.baseline.to_dict(), "count": len(self.rows),
            "rows": [r.to_dict() for r in self.rows],
            "front": [r.to_dict() for r in self.front],
            "optima": {k: r.to_dict() for k, r in self.optima.items()},
        }


def table_that_fits(land: Landscape, model: PerfModel) -> tuple[dict, int]:
    """``land`` as a landscape table (:meth:`Landscape.to_table`) of the settings whose weights,
    speculative workspace and KV cache fit ``model``'s GPUs at the largest computed concurrency and
    the profile's default context (:meth:`PerfModel.kv_budget_ok`), as a study on the profile with
    no server arguments judges them: one that does not fit fails at launch (``oom``) there, so the
    table lists it as such (``"failure": "oom"``, no figures): the table holds every setting of the
    space, as a grid measured on a node holds those it launched. Returns the table and how many
    settings fail so; ``ValueError`` when the baseline itself, or no setting, fits (no table is the
    profile's landscape then)."""
    mrr = max(land.concurrencies)
    context = model.profile.runtime.default_context_tokens
    ok, message = model.kv_budget_ok(None, mrr, context)
    if not ok:
        raise ValueError(f"profile {model.profile.name}: the autoregressive baseline itself does not fit in "
                         f"memory at concurrency {mrr} (a study fails it as oom: {message})")
    fits = {r.config for r in land.rows if model.kv_budget_ok(r.config, mrr, context)[0]}
    if not fits:
        raise ValueError(f"profile {model.profile.name}: none of the {len(land)} settings fits in memory at "
                         f"concurrency {mrr} (every launch fails as oom)")
    table = land.to_table()
    table["configs"] = [row if SpecConfig(row["num_steps"], row["eagle_topk"], row["num_draft_tokens"]) in fits
                        else {**{k: row[k] for k in ("num_steps", "eagle_topk", "num_draft_tokens")}, "failure": "oom"}
                        for row in table["configs"]]
    return table, len(land) - len(fits)


def _cost_key(row: LandscapeRow) -> tuple:
    c = row.config
    return (c.num_draft_tokens, c.num_steps, c.eagle_topk) if c else (0, 0, 0)


def pareto_front(rows: Sequence[LandscapeRow], objectives: Sequence[str]) -> list[LandscapeRow]:
    """Rows no other row beats on every objective (all maximised) and strictly on one; rows with
    identical values all stay. Sorted by the first objective, best first."""
    values = [tuple(r.objective(o) for o in objectives) for r in rows]
    # Sweep in order of the first objective: a row is dominated iff an earlier row (better or
    # equal on the first) is >= on all and > on one.
    order = sorted(range(len(rows)), key=lambda i: tuple(-v for v in values[i]))
    front: list[int] = []
    for i in order:
        v = values[i]
        dominated = any(all(a >= b for a, b in zip(values[j], v)) and values[j] != v for j in front)
        if not dominated:
            front.append(i)
    return [rows[i] for i in sorted(front, key=lambda i: (-values[i][0], _cost_key(rows[i])))]


def _row(config: SpecConfig | None, fig: ExpectedFigures, base: ExpectedFigures | None) -> LandscapeRow:
    ref = base or fig
    return LandscapeRow(
        config=config, single_tok_per_s=fig.single_tok_per_s, tok_per_s=dict(fig.tok_per_s),
        single_speedup=fig.single_tok_per_s / ref.single_tok_per_s,
        speedup={c: v / ref.tok_per_s[c] for c, v in fig.tok_per_s.items()},
        accept_length=fig.accept_length,
    )


def landscape(profile: str | Path | Profile | PerfModel, space_path: str | Path,
              concurrencies: Sequence[int] = (1, 32), suite: str | Path = "seed",
              objectives: Sequence[str] | None = None) -> Landscape:
    """The model's expected figures for every valid effective setting of ``space_path``.

    ``profile`` is a shipped name, a path, a :class:`Profile` or a ready :class:`PerfModel`.
    Objectives default to the study's: ``single_speedup`` and ``speedup@C`` at the largest
    concurrency given. The space's fixed decode CUDA-graph sizes (``cuda_graph_max_bs_decode``, a
    ``cuda_graph_bs_decode`` list, ``cuda_graph_config``), if any, are honoured. Raises
    :class:`ConfigError` for a bad profile, space or suite file, ``ValueError`` for an empty
    concurrency list or an objective at a concurrency not computed.
    """
    if isinstance(profile, PerfModel):
        model = profile
    else:
        model = PerfModel(profile if isinstance(profile, Profile) else load_profile(profile))
    concs = tuple(sorted({int(c) for c in concurrencies}))
    if not concs or concs[0] < 1:
        raise ValueError("concurrencies must be a non-empty list of positive integers")
    objectives = tuple(objectives or ("single_speedup", f"speedup@{concs[-1]}"))
    space = SearchSpace.load(space_path)
    inputs = load_suite_inputs(suite)
    # SGLang 0.5.23's decode sizes as the simulator reads them (tuner/sim/server.py): max_bs, a bs list,
    # the JSON config's (arg_types.decode_graph_max_bs); the older cuda_graph_max_bs is refused in a space
    from ..sglang.arg_types import decode_graph_max_bs

    graph_bs = decode_graph_max_bs(space.config.fixed)
    kwargs = dict(prompts=list(inputs.prompts), single_lengths=list(inputs.single_lengths),
                  concurrencies=list(concs), sweep_tokens=inputs.sweep_tokens,
                  cuda_graph_max_bs=graph_bs if isinstance(graph_bs, int) and graph_bs > 0 else None)
    base_fig = model.expected_figures(None, **kwargs)
    rows = [_row(cfg, model.expected_figures(cfg, **kwargs), base_fig) for cfg in space.effective_configs()]
    baseline = _row(None, base_fig, None)
    for name in objectives:
        baseline.objective(name)  # ValueError for an objective at a concurrency not computed
    out = Landscape(profile=model.profile.name, space=str(space_path), suite=inputs.name,
                    concurrencies=concs, objectives=objectives, baseline=baseline, rows=rows,
                    load_s=model.profile.runtime.load_s)
    if rows:
        out.front.extend(pareto_front(rows, objectives))
        out.optima.update({name: out.best(name)[0] for name in objectives})
    return out
