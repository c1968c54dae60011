"""The performance model, or a landscape table, as a backend (``server.backend: model``): no
process, no HTTP, seeded noise. The search-efficiency benchmark runs thousands of trials through it;
the contract is every backend's (:mod:`tuner.engine.backends`).
"""

from __future__ import annotations

import random
from typing import Any, Mapping

from ..config.wording import counted
from ..sglang.rules import SpecConfig
from .measurement import Event, Measurement, OnStage, Record
from .model_suite import ModelFigures, request_token_needs, staged_figures

#: Modelled seconds a launch takes before the suite runs when neither the study (``server.model.
#: load_s``), the landscape table (``load_s``) nor the profile (``runtime.load_s``) says: ten
#: minutes, a large model's load.
DEFAULT_LOAD_S = 600.0
#: The failure class of a setting a landscape table does not list (it fails at launch).
NOT_IN_LANDSCAPE = "not_in_landscape"


class RefusedServerArgs(ValueError):
    """``server.args`` the simulated server's parser refuses: ``argparse_message`` is what argparse
    says (``argument --stream-interval: invalid int value: 'often'``)."""

    def __init__(self, argparse_message: str):
        self.argparse_message = argparse_message
        super().__init__(f"server.args: {argparse_message}")


def parsed_server_args(args: Mapping[str, Any]) -> dict:
    """``args`` (a study's ``server.args``: SGLang's underscore names) with the values a launched
    server would hold: each written as the launcher writes it for the simulator
    (:func:`tuner.server.command.arg_tokens`) and parsed by the simulator's parser
    (:func:`tuner.sim.args.build_parser`: SGLang 0.5.23's flags from its server-args table, each
    converted by its type as SGLang's argparse does, so ``mem_fraction_static: "0.8"`` is 0.8).
    Keyed by SGLang's ``dest``; a switch given false keeps false.

    The study file's check (:func:`tuner.config.server_arg_checks.check_server_args`) refuses a value argparse
    would refuse, so this parse succeeds for a loaded study; ``ValueError`` with argparse's message
    otherwise (args handed in by code; :class:`RefusedServerArgs`), never argparse's exit."""
    from ..server.command import arg_tokens
    from ..sim.args import parse_to_check

    if not args:
        return {}
    # --model-path is the one required flag; a server argument never sets it (it is reserved)
    argv = ["--model-path", "m", *(token for name, value in args.items() for token in arg_tokens(name, value))]
    try:
        parsed = vars(parse_to_check(argv))
    except ValueError as exc:
        raise RefusedServerArgs(str(exc)) from None
    return {name: parsed.get(name, value) for name, value in args.items()}


class ModelBackend:
    """The performance model, or a landscape table, as a backend: no process, no HTTP, seeded noise.

    ``source`` is a simulator profile (a shipped name or a YAML path: the model's expected figures
    for the suite) or a :class:`tuner.config.landscape.LandscapeTable` (its rows as they are, at the
    levels the suite sweeps: a level of the table the suite never runs is not reported; a
    setting it lists as failed fails at launch as it failed there, one it does not list as
    ``not_in_landscape``, as a tree fails on some model/backend pairs). With a profile, a setting
    whose weights, speculative workspace and KV cache do not fit the GPUs fails at launch as
    ``oom``, exactly as the simulated server
    would (``PerfModel.kv_budget_ok`` with the launcher's pinned ``max_running_requests``), reading
    ``server_args`` (``context_length``, ``mem_fraction_static``) as that server's parser does
    (:func:`parsed_server_args`).

    ``noise`` is the relative standard deviation applied to every throughput figure, standing in
    for the run-to-run spread of a real measurement (the accept length is left exact: a real
    server averages it over thousands of verify steps). With a ``seed``, each measurement's draw is
    a pure function of the seed and the measurement's label (``trials/12``, ``baseline``), so a
    continued or restarted study does not replay earlier draws and a re-measurement (a new trial)
    draws anew; without one every run draws fresh noise.

    Every measurement follows the study's staged order (``plan``, :func:`~tuner.engine.backends.study_plan`) request by
    request (:mod:`tuner.engine.model_suite`): the figures after each stage go to ``on_stage``, the
    last stage's are the whole-suite figures drawn above, and a suite stopped after a stage costs
    only what it measured. Every measurement carries ``model_duration_s``: the modelled GPU time it
    took: ``load_s`` (the study's, else the table's or the profile's ``runtime.load_s``, else
    :data:`DEFAULT_LOAD_S`), the warm-up, the flushes and every request at its rate.
    """

    def __init__(self, source, suite, noise: float = 0.02, seed: int | None = 0, load_s: float | None = None,
                 max_running_requests: int | None = None, server_args: dict | None = None, plan=None,
                 api: str = "generate"):
        from ..config.landscape import LandscapeTable

        self.suite = suite
        self.noise = noise
        self.seed = seed
        self.rng = random.Random(seed)
        self.calls = 0
        self._cache: dict = {}
        self.table = source if isinstance(source, LandscapeTable) else None
        self.model = None
        if self.table is None:
            from ..sim.model import PerfModel, load_profile

            self.model = PerfModel(load_profile(source))
        source_load = self.table.load_s if self.table is not None else self.model.profile.runtime.load_s
        self.load_s = load_s if load_s is not None else (source_load if source_load is not None else DEFAULT_LOAD_S)
        from ..bench.plan import stage_plan

        self.plan = list(plan) if plan is not None else stage_plan(suite)
        self._rows: dict = {}
        self.max_running_requests = max_running_requests or max(suite.sweep.concurrencies, default=1)
        # read as the simulated server reads them (a string "0.8" is the number 0.8); arguments its
        # parser refuses (handed in by code: the study check refuses them in a study file) fail every
        # launch as the simulated server's would, argparse's exit 2: invalid_args with its message
        self.args_problem: str | None = None
        try:
            self.server_args = parsed_server_args(server_args or {})
        except RefusedServerArgs as exc:
            self.server_args, self.args_problem = {}, f"python -m tuner.sim: error: {exc.argparse_message}"
        # every request's input tokens and largest max_tokens, as the simulated server counts them
        self.api = api
        self._needs = [] if self.model is None else [
            (p, n_in, out) for _, p, n_in, out in request_token_needs(suite, self.model.prompt_tokens, api == "chat")]

    @property
    def listed(self) -> frozenset[SpecConfig] | None:
        """The settings a landscape table lists, measured or failed (the grid it holds: the default
        sampler proposes no other); None for a profile, whose model answers for every setting."""
        return None if self.table is None else self.table.listed

    @property
    def source_label(self) -> str:
        return f"landscape {self.table.source}" if self.table is not None else f"profile {self.model.profile.name}"

    def expected(self, spec: SpecConfig | None):
        """The true (noise-free) figures of ``spec`` (None: the baseline); None when ``spec`` has
        none (not in the landscape table)."""
        if spec not in self._cache:
            self._cache[spec] = self._table_figures(spec) if self.table is not None else self._model_figures(spec)
        return self._cache[spec]

    def row_rates(self, spec: SpecConfig | None) -> dict[tuple[str, int], float]:
        """The true tok/s of each single-request row (prompt name, length): the model's for that
        prompt and length, or a table's one single-request figure for every row."""
        if spec not in self._rows:
            s = self.suite
            rows = [(p, n) for p in s.single_prompts() for n in s.single_lengths(p)]
            if self.table is not None:
                rate = self.expected(spec).single_tok_per_s
                self._rows[spec] = {(p.name, n): rate for p, n in rows}
            else:
                tokens = round(sum(s.sweep_tokens(p) for p in s.prompts) / len(s.prompts))
                self._rows[spec] = {(p.name, n): self.model.expected_figures(
                    spec, prompts=[p.text], single_lengths=[n], concurrencies=[], sweep_tokens=tokens).single_tok_per_s
                    for p, n in rows}
        return self._rows[spec]

    def _table_figures(self, spec):
        row = self.table.baseline if spec is None else self.table.configs.get(spec)
        if row is None:
            return None
        # the levels the suite sweeps only: a server measures no level its suite never runs
        swept = set(self.suite.sweep.concurrencies)
        return ModelFigures(row.single_tok_per_s, {c: v for c, v in row.tok_per_s.items() if c in swept},
                            row.accept_length if spec is not None else 1.0)

    def _model_figures(self, spec):
        s = self.suite
        # A dataset suite sends each request at its own length; the closed-form model takes one
        # set of lengths for every prompt: the requests' distinct lengths and their mean.
        lengths = sorted({n for p in s.single_prompts() for n in s.single_lengths(p)})
        sweep_tokens = round(sum(s.sweep_tokens(p) for p in s.prompts) / len(s.prompts))
        exp = self.model.expected_figures(
            spec, prompts=[p.text for p in s.prompts], single_lengths=lengths,
            concurrencies=list(s.sweep.concurrencies), sweep_tokens=sweep_tokens)
        return ModelFigures(exp.single_tok_per_s, dict(exp.tok_per_s), exp.accept_length)

    def launch_failure(self, spec: SpecConfig | None) -> tuple[str, str] | None:
        """``(failure_class, message)`` when a launch of ``spec`` fails, else None."""
        if self.args_problem is not None:
            return "invalid_args", self.args_problem
        if self.table is not None:
            if spec is not None and spec in self.table.failures:
                return self.table.failures[spec], (f"{spec.label()} failed at launch "
                                                   f"({self.table.failures[spec]}) where landscape "
                                                   f"{self.table.source} was measured")
            if spec is not None and spec not in self.table.configs:
                return NOT_IN_LANDSCAPE, (f"{spec.label()} is not in landscape {self.table.source}: a setting "
                                          "the table does not list fails at launch")
            return None
        # As the simulated server starts up (tuner/sim/server.py, _start_up): --context-length, else
        # the profile's default context; --mem-fraction-static, else the profile's default.
        args = self.server_args
        context = args.get("context_length") or self.model.profile.runtime.default_context_tokens
        ok, message = self.model.kv_budget_ok(spec, self.max_running_requests, int(context),
                                              mem_fraction_static=args.get("mem_fraction_static"))
        return None if ok else ("oom", message)

    def baseline_problem(self) -> str | None:
        """Why the autoregressive baseline of a profile cannot be measured, known before any launch
        (the study's preflight asks, so nothing is written): it fails at launch (``oom``: the
        profile's weights do not fit its GPUs), or the model's figures of it are no server's, outside
        :data:`~tuner.config.landscape.MIN_TOK_PER_S` to ``MAX_TOK_PER_S``, the range a landscape
        table's figures take (QA: a profile at 1000 s an all-reduce measured a baseline of 0.0 tok/s
        and every trial over it). None for a table: its baseline was checked as it loaded."""
        from ..config.landscape import MAX_TOK_PER_S, MIN_TOK_PER_S

        if self.model is None:
            return None
        failure = self.launch_failure(None)
        if failure is not None:
            return f"the autoregressive baseline fails at launch ({failure[0]}): {failure[1]}"
        exp = self.expected(None)
        figures = [("single request", exp.single_tok_per_s if self.suite.n_single_requests() else None)]
        figures += [(f"C={c}", v) for c, v in sorted(exp.tok_per_s.items())]
        for what, value in figures:
            if value is not None and not MIN_TOK_PER_S <= value <= MAX_TOK_PER_S:
                return (f"the model gives the autoregressive baseline {value:.3g} tok/s ({what}), no "
                        f"server's figure (at least {MIN_TOK_PER_S:g} and at most {MAX_TOK_PER_S:g}); "
                        "check the profile's hardware and runtime figures for a unit slip")
        return None

    def none_launches(self, specs) -> str | None:
        """Why not one of ``specs`` (a study's settings) launches, every one failing at launch on this
        source (a profile whose speculative workspace fits no tree: ``oom``), or None. The study's
        preflight asks (QA: 6 launches, every one oom, exit 0)."""
        specs = list(specs)
        failures = [self.launch_failure(spec) for spec in specs]
        if not specs or any(f is None for f in failures):
            return None
        (cls, message), first = failures[0], specs[0]
        return (f"every one of the space's {counted(len(specs), 'setting')} fails at launch ({cls}; the "
                f"first, {first.label()}: {message})")

    def request_problem(self, spec: SpecConfig | None) -> str | None:
        """Why the server of ``spec`` would refuse requests of the suite, or None: SGLang's context
        check (:class:`tuner.sim.requests.ContextCheck`, its own words) with EAGLE's reserved draft
        slots, ``max(topk x steps, draft tokens)``, on top of each request's input. The study's check
        at load (:mod:`tuner.engine.preflight`) holds the baseline's requests to the context; a
        request within a tree's reserved slots of it is refused by that tree's server only, and the
        simulated server fails such a trial as ``request_errors``: so does this backend, rather than
        measure requests SGLang never serves. None for a landscape table (no context length)."""
        if self.model is None or spec is None or not spec.num_steps:
            return None
        from ..sim.requests import ContextCheck

        reserved = max((spec.eagle_topk or 1) * spec.num_steps, spec.num_draft_tokens or 0)
        limit = int(self.server_args.get("context_length") or self.model.profile.runtime.context_length_tokens)
        check = ContextCheck(limit, reserved, count_tokens=None)  # the counts are known: check_counts
        refused = []
        for p, n_in, out in self._needs:
            try:
                check.check_counts(n_in, out)
            except ValueError as exc:
                refused.append((p, out, exc))
        if not refused:
            return None
        p, out, exc = refused[0]
        return (f"{len(refused)} of the suite's {counted(len(self._needs), 'prompt')} refused; first: {p.name} at {out} "
                f"tokens: HTTP 400: {exc} (model backend: SGLang's context check, with {reserved} draft "
                "slots reserved)")

    def _rng(self, label: str) -> random.Random:
        return self.rng if self.seed is None else random.Random(f"{self.seed}:{label}")

    def measure(self, spec: SpecConfig | None, label: str, record: Record,
                on_event: Event | None = None, on_stage: OnStage | None = None) -> Measurement:
        self.calls += 1
        failure = self.launch_failure(spec)
        refused = self.request_problem(spec) if failure is None else None
        if refused is not None:
            failure = ("request_errors", refused)
        if failure is not None:
            m = Measurement(None, failure_class=failure[0], failure_message=failure[1],
                            model_duration_s=self.load_s)
            record(m)
            return m
        figs = self._drawn(spec, label)
        warmup_s, stages = staged_figures(self.plan, self.suite, self.row_rates(spec), figs, self.noise,
                                          self._rng(label + ":stages"))
        if not self.suite.n_single_requests():  # the warm-up ran at the single rate; no figure of it
            figs.single_tok_per_s = None
            for st in stages:
                st.figures.single_tok_per_s = None
        spent = self.load_s + warmup_s
        figs.stages = [(st.name, st.figures) for st in stages]
        figs.request_cv = self.noise
        m = Measurement(figs)
        for i, st in enumerate(stages):
            spent += st.seconds
            if i < len(stages) - 1 and on_stage is not None and on_stage(i, st.name, st.figures):
                m = Measurement(st.figures, stopped_after=st.name)
                st.figures.stages = figs.stages[:i + 1]
                break
        m.model_duration_s = spent
        record(m)
        return m

    def full_figures(self, spec: SpecConfig | None, label: str) -> ModelFigures:
        """The whole-suite figures a measurement labelled ``label`` reads (its noise draw): what the
        full suite gives, whether or not ``on_stage`` stops it earlier (the benchmark's check of
        pruning asks this of pruned trials). No single-request figure when the suite sends no
        single request (a server measures none)."""
        figs = self._drawn(spec, label)
        if not self.suite.n_single_requests():
            figs.single_tok_per_s = None
        return figs

    def _drawn(self, spec: SpecConfig | None, label: str) -> ModelFigures:
        """The true figures of ``spec`` times the noise draw of ``label``."""
        exp = self.expected(spec)
        rng = self._rng(label)
        jitter = lambda v: v * max(0.01, rng.gauss(1.0, self.noise))  # noqa: E731
        return ModelFigures(jitter(exp.single_tok_per_s), {c: jitter(v) for c, v in exp.tok_per_s.items()},
                            exp.accept_length)
