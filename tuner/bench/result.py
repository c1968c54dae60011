"""``SuiteResult``: every request record of one suite run, and the figures people read.

Figures are derived from the records (the one source of truth; :meth:`SuiteResult.from_dict`
recomputes them), and are in **model time**. ``time_scale`` is model seconds per wall second: 1.0
for SGLang, the simulator's ``sim_speedup`` otherwise (its wall clock runs that many times faster
than model time, ``tuner/sim/scheduler.py``). So a model duration is the wall duration times
``time_scale`` and a model throughput is the wall throughput over it, and a simulated run reads like
the GPU run it stands for. End-to-end latencies, request tok/s and batch spans count only the part
the server's own clock covers (its ``e2e_latency``) times ``time_scale`` and the rest (HTTP, JSON,
the client) as it is (:func:`~tuner.bench.records.model_duration_s`), so the figures do not depend
on the speedup; TTFT and inter-token gaps are scaled whole. Raw wall times stay in the records.

Definitions (the article's method):

* single row (prompt, length): tok/s of each request = completion_tokens / end-to-end latency;
  the row's figure is the mean over its repeats;
* overall single-request tok/s: the mean over prompts x lengths of the row means; its spread is that
  of the same mean taken repeat by repeat (how much the whole figure moves between repeats);
* sweep row (concurrency C): aggregate tok/s of a batch = total completion tokens / (last completion
  - first submission); the row's figure is the mean over batches (one batch unless repeated, and then
  its cv is unknown); per-request tok/s, latency percentiles, TTFT and ITL percentiles over all its
  requests;
* accept length: tokens per verify step per request (completion_tokens / spec_verify_ct), mean over
  the single requests;
* latency percentiles at a concurrency (:meth:`SuiteResult.latency_percentile_ms`): ``ttft`` and
  ``e2e`` over its successful requests, ``itl`` over all their inter-token gaps (streaming only);
* goodput at a concurrency (:meth:`SuiteResult.goodput`): SGLang's ``benchmark/goodput.py``
  definition: a request is good when its TTFT, TPOT ((latency - TTFT) / (tokens - 1); an ITL limit
  is judged on it too, as SGLang's goodput has no per-gap figure) and end-to-end latency are each
  within the given limit; good requests (and their tokens) per second of
  the batch span.

Failed requests count in ``n_failed`` and in a batch's wall span, never in tok/s means.

Why one module of over 400 lines: :class:`SuiteResult` is one record and every figure derived from
it; the records are the single source of truth, so the figures, their JSON form and
:meth:`SuiteResult.from_dict` (which recomputes them) must change together. The request record and
its time arithmetic live in :mod:`tuner.bench.records`, the statistics in :mod:`tuner.bench.stats`.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..config.files import write_text_atomic
from ..config.yamlfile import MAX_DATASET_BYTES, ConfigError, read_text_capped
from ..config.slo import METRICS, PERCENTILES
from ..sglang.rules import SpecConfig
from .records import RequestRecord, model_duration_s
from .stats import Figure, figure, percentile, percentile_of_sorted, t975

#: Bump when a field changes meaning; :meth:`SuiteResult.from_dict` refuses other versions.
SCHEMA_VERSION = 1
_SPEC_KEYS = ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")


#: Keys of ``/server_info`` that only the simulator sends (tuner/sim/server_info.py), and the suffix
#: of its version: a server that has one says it runs on a sped-up clock.
SIM_KEYS = ("sim_speedup", "sim_profile")
SIM_VERSION_SUFFIX = "+sim"


def says_simulator(info: dict) -> bool:
    """Whether a ``/server_info`` body says its server is the simulator (a sped-up clock)."""
    return any(k in info for k in SIM_KEYS) or str(info.get("version") or "").endswith(SIM_VERSION_SUFFIX)


def first_internal_state(info: dict) -> dict:
    """The scheduler's view in ``/server_info``: SGLang returns ``internal_states`` as one dict per
    data-parallel rank (older servers: one dict); ``{}`` when there is none."""
    states = info.get("internal_states")
    if isinstance(states, list) and states and isinstance(states[0], dict):
        return states[0]
    return states if isinstance(states, dict) else {}


def resolved_spec_from_info(info: dict | None) -> SpecConfig | None:
    """The speculative flags as the server really runs them, from ``/server_info``.

    SGLang rewrites the flags during argument handling (e.g. draft tokens = steps + 1 when
    topk == 1), and ``/server_info`` reports the rewritten server args; ``internal_states`` (per
    data-parallel rank) is read first since it is what the scheduler uses. ``None`` when the server
    runs no speculative algorithm or says nothing.
    """
    if not info:
        return None
    state = first_internal_state(info)
    algorithm = state.get("speculative_algorithm", info.get("speculative_algorithm"))
    if not algorithm:
        return None
    values = [flag_int(state.get(k, info.get(k))) for k in _SPEC_KEYS]
    if any(v is None for v in values):
        # not integers: unverifiable (tuner.engine.verify says so), never read as some other setting
        # (QA: int() made speculative_num_steps true "steps=1" and 2.9 "steps=2" in `tuner bench`'s header)
        return None
    return SpecConfig(*values)


def flag_int(value) -> int | None:
    """A speculative flag as ``/server_info`` says it: SGLang 0.5.23 sends each as a JSON integer
    (``ServerArgs`` fields typed int). Anything else -- a bool, a fraction, text, null -- is None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def says_adaptive(info: dict | None) -> bool:
    """Whether ``/server_info`` says the server runs SGLang's adaptive speculative decoding, read where
    :func:`resolved_spec_from_info` reads the flags. Such a server's ``speculative_num_steps`` is only
    the steps it starts at: SGLang 0.5.23 keeps ``speculative_adaptive`` true only where adaptive
    speculation runs (``srt/arg_groups/speculative_hook.py`` ``_maybe_disable_adaptive`` resolves it to
    false, with a warning, where it is unsupported; ``_init_adaptive_speculative_params`` requires the
    steps to be one of the policy's ``candidate_steps`` and sets draft tokens to steps + 1), then moves
    each decode step among every threshold's candidate steps by batch size and accepted length
    (``srt/speculative/adaptive_spec_params.py`` ``AdaptiveStepSlot``; with no policy file,
    ``DEFAULT_ADAPTIVE_CONFIG``'s steps 0 to 7). So its flags do not bound a request's verify steps
    (QA: a server saying adaptive at steps 1, whose policy runs steps 3 at batch size 1, answered 4
    tokens a verify step; ``tuner bench`` refused them as answers that "cannot be true", exit 1)."""
    return bool(info) and _said(info, "speculative_adaptive") is True


def spec_flags_said(info: dict) -> str:
    """The three speculative flags as ``/server_info`` said them (``key=value`` each, repr'd), read
    where :func:`resolved_spec_from_info` reads them: for a line that says why they cannot be read."""
    state = first_internal_state(info)
    return ", ".join(f"{k}={state.get(k, info.get(k))!r}" for k in _SPEC_KEYS)


def says_autoregressive(info: dict | None) -> bool:
    """Whether ``/server_info`` says the server runs no speculative algorithm, read where
    :func:`resolved_spec_from_info` reads it: SGLang 0.5.23 answers every ``ServerArgs`` field, so
    ``speculative_algorithm`` is there, null without speculation. False for a server that says
    nothing of it (another server, or none answered): only a server that said so bounds its verify
    steps at none."""
    if not info:
        return False
    algorithm = _said(info, "speculative_algorithm")
    return algorithm is not _UNSAID and not algorithm


#: What :func:`_said` gives for a key ``/server_info`` does not hold (a null is a value said).
_UNSAID = object()


def _said(info: dict, key: str):
    """``key`` of ``/server_info`` where the scheduler reads it (``internal_states`` first, then the
    top level, as :func:`resolved_spec_from_info`), or :data:`_UNSAID`."""
    return first_internal_state(info).get(key, info.get(key, _UNSAID))


@dataclass(frozen=True)
class SingleRow:
    """One prompt at one length, over its repeats. Model time."""

    prompt: str
    max_tokens: int
    n_ok: int
    n_failed: int
    tok_per_s: Figure | None
    latency_ms: Figure | None
    ttft_ms: Figure | None
    accept_length: Figure | None

    def to_dict(self) -> dict:
        return {k: (v.to_dict() if isinstance(v, Figure) else v) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class SweepRow:
    """One concurrency, over its batches. Model time except ``wall_s``."""

    concurrency: int
    #: the output length every request of the row asked, or None when they asked different ones (a
    #: dataset's requests at their own lengths; QA: ``--json`` gave the first request's as the row's)
    max_tokens: int | None
    batches: int
    n_ok: int
    n_failed: int
    tok_per_s: Figure | None  #: aggregate over each batch's span, mean over batches
    per_request_tok_per_s: Figure | None
    latency_ms: Figure | None
    latency_p50_ms: float | None
    latency_p99_ms: float | None
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    itl_p50_ms: float | None
    itl_p99_ms: float | None
    accept_length: Figure | None
    wall_s: float  #: total wall-clock span of the batches

    def to_dict(self) -> dict:
        return {k: (v.to_dict() if isinstance(v, Figure) else v) for k, v in self.__dict__.items()}


@dataclass
class SuiteResult:
    """One run of a suite against one server. Mutable while the run fills it, then read-only."""

    suite: dict[str, Any]
    base_url: str = ""
    api: str = "generate"
    stream: bool = False
    started_at: str = ""
    duration_s: float = 0.0  #: wall seconds of the whole run
    server_info: dict | None = None
    #: the simulator's ``sim_timekeeping`` read again after the last phase (None: not the
    #: simulator, or not read): whether it kept up with model time while it was measured
    timekeeping: dict | None = None
    #: ``/server_info`` read again after the last phase (None: not read, or no answer then): what the
    #: server said it runs at the end, compared with :attr:`server_info` (tuner.engine.verify)
    server_info_after: dict | None = None
    server_version: str | None = None
    time_scale: float = 1.0
    resolved_spec: SpecConfig | None = None
    records: list[RequestRecord] = field(default_factory=list)
    flushes: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    complete: bool = False
    error: str | None = None
    schema_version: int = SCHEMA_VERSION
    #: a staged run (:mod:`tuner.bench.plan`): each stage's name and the number of records at its end
    stages: list[dict] = field(default_factory=list)
    stopped_after: str | None = None  #: the stage a staged run was stopped after (not complete)

    # ---- derived figures -----------------------------------------------------------------------

    _DERIVED = ("single_rows", "sweep_rows", "single", "accept")

    def refresh(self) -> None:
        """Forget figures computed so far (the runner calls this after adding records)."""
        for name in self._DERIVED:
            self.__dict__.pop(name, None)

    def _model_ms(self, wall_s: float) -> float:
        return wall_s * 1000.0 * self.time_scale

    def _pct_ms(self, values_s, q) -> float | None:
        p = percentile(values_s, q)
        return None if p is None else self._model_ms(p)

    def _model_tok(self, records) -> list[float]:
        """Model tok/s of each successful request."""
        return [v for r in records if (v := r.model_tok_per_s(self.time_scale)) is not None]

    def _model_latency_s(self, records) -> list[float]:
        return [r.model_latency_s(self.time_scale) for r in records]

    def _model_ttft_s(self, records) -> list[float]:
        return [t for r in records if (t := r.model_ttft_s(self.time_scale)) is not None]

    def _span_model_s(self, batch: list[RequestRecord]) -> float:
        """A sweep batch's span, first submission to last completion, in model seconds: the
        server's part ends with the latest end its own clock accounts for (submission + the
        server's latency); what comes after (HTTP, JSON) counts as it is (``model_duration_s``)."""
        start = min(r.start_s for r in batch)
        span = max(r.end_s for r in batch) - start
        server_end = max(r.start_s + r.server_latency_s if r.ok and r.server_latency_s is not None
                         else r.end_s for r in batch)
        return model_duration_s(span, server_end - start, self.time_scale)

    @cached_property
    def single_rows(self) -> list[SingleRow]:
        groups: dict[tuple[str, int], list[RequestRecord]] = {}
        for r in self.records:
            if r.phase == "single":
                groups.setdefault((r.prompt, r.max_tokens), []).append(r)
        rows = []
        for (prompt, max_tokens), recs in groups.items():
            ok = [r for r in recs if r.ok]
            rows.append(SingleRow(
                prompt, max_tokens, len(ok), len(recs) - len(ok),
                figure(self._model_tok(ok)),
                _scaled(figure(self._model_latency_s(ok)), 1000.0),
                _scaled(figure(t for r in ok if (t := r.model_ttft_s(self.time_scale)) is not None), 1000.0),
                figure(r.accept_length for r in ok if r.accept_length is not None),
            ))
        return rows

    @cached_property
    def sweep_rows(self) -> list[SweepRow]:
        groups: dict[int, list[RequestRecord]] = {}
        for r in self.records:
            if r.phase == "sweep":
                groups.setdefault(r.concurrency, []).append(r)
        rows = []
        for c, recs in groups.items():
            batches: dict[int, list[RequestRecord]] = {}
            for r in recs:
                batches.setdefault(r.repeat, []).append(r)
            aggregates, wall = [], 0.0
            for batch in batches.values():
                wall += max(r.end_s for r in batch) - min(r.start_s for r in batch)
                span = self._span_model_s(batch)
                tokens = sum(r.completion_tokens or 0 for r in batch if r.ok)
                if span > 0 and any(r.ok for r in batch):
                    aggregates.append(tokens / span)
            ok = [r for r in recs if r.ok]
            lat = [x * 1000.0 for x in self._model_latency_s(ok)]
            ttft = self._model_ttft_s(ok)
            itl = [x for r in ok for x in r.itl_s]
            lengths = {r.max_tokens for r in recs}
            rows.append(SweepRow(
                c, lengths.pop() if len(lengths) == 1 else None, len(batches), len(ok), len(recs) - len(ok),
                figure(aggregates), figure(self._model_tok(ok)),
                figure(lat), percentile(lat, 50), percentile(lat, 99),
                _ms(percentile(ttft, 50)), _ms(percentile(ttft, 99)),
                self._pct_ms(itl, 50), self._pct_ms(itl, 99),
                figure(r.accept_length for r in ok if r.accept_length is not None),
                wall,
            ))
        return sorted(rows, key=lambda row: row.concurrency)

    @cached_property
    def single(self) -> Figure | None:
        """Overall single-request tok/s (model time): mean over prompts x lengths of row means."""
        rows = [row for row in self.single_rows if row.tok_per_s is not None]
        if not rows:
            return None
        mean = sum(row.tok_per_s.mean for row in rows) / len(rows)
        # Spread: the overall figure recomputed from repeat r of every row, for each repeat that
        # every row answered. Repeats are paired by their number, not their order among the answered
        # ones (QA: row a read 64, 32, 64 tok/s and row b failed its repeat 0, then 32, 64: pairing
        # a's first two with b's two gave sd 0.0 where the overall figure moves by half)
        per_row: list[dict[int, float]] = []
        for row in rows:
            per_row.append({r.repeat: r.model_tok_per_s(self.time_scale) for r in self.records
                            if r.phase == "single" and r.prompt == row.prompt
                            and r.max_tokens == row.max_tokens and r.tok_per_s is not None})
        common = sorted(set.intersection(*(set(v) for v in per_row)))
        overall = [sum(v[i] for v in per_row) / len(per_row) for i in common]
        k = len(overall) or min(len(v) for v in per_row)
        spread = figure(overall)
        if spread is None or spread.sd is None or mean == 0:
            return Figure(mean, k)
        cv = spread.sd / mean
        return Figure(mean, k, spread.sd, cv, t975(k - 1) * cv / k ** 0.5)

    @property
    def single_tok_per_s(self) -> float | None:
        return None if self.single is None else self.single.mean

    @property
    def request_cv(self) -> float | None:
        """The spread of one single request between its repeats (mean cv over the rows measured
        more than once); None when nothing was repeated."""
        cvs = [row.tok_per_s.cv for row in self.single_rows if row.tok_per_s and row.tok_per_s.cv is not None]
        return sum(cvs) / len(cvs) if cvs else None

    @cached_property
    def accept(self) -> Figure | None:
        """Accept length (tokens per verify step) over single requests; None if not speculative."""
        return figure(r.accept_length for r in self.records
                      if r.phase == "single" and r.accept_length is not None)

    @property
    def accept_length(self) -> float | None:
        return None if self.accept is None else self.accept.mean

    def sweep_row(self, concurrency: int) -> SweepRow | None:
        return next((row for row in self.sweep_rows if row.concurrency == concurrency), None)

    def tok_per_s_at(self, concurrency: int) -> float | None:
        """Aggregate tok/s at a sweep concurrency, model time; None if not measured or all failed."""
        row = self.sweep_row(concurrency)
        return None if row is None or row.tok_per_s is None else row.tok_per_s.mean

    def _sweep_records(self, concurrency: int) -> list[RequestRecord]:
        return [r for r in self.records if r.phase == "sweep" and r.concurrency == concurrency]

    def latency_percentile_ms(self, metric: str, q: float, concurrency: int) -> float | None:
        """The q-th percentile (model ms) of ``ttft``, ``itl`` (every inter-token gap), ``tpot`` (per
        request) or ``e2e`` latency at a concurrency; None when nothing measured it (TTFT, ITL and
        TPOT need streamed responses)."""
        xs, to_ms = self._latency_sample(metric, concurrency)
        p = percentile_of_sorted(xs, q)
        return None if p is None else to_ms(p)

    def _latency_sample(self, metric: str, concurrency: int):
        """``(sorted values, their percentile in model ms)`` of one latency metric at a concurrency
        (:meth:`latency_percentile_ms`), for several percentiles of one sample sorted once. The values
        are kept as measured and a percentile converted after it is taken, as before."""
        ok = [r for r in self._sweep_records(concurrency) if r.ok]
        if metric == "ttft":
            values, to_ms = self._model_ttft_s(ok), _ms
        elif metric == "tpot":
            values, to_ms = [r.tpot_s for r in ok if r.tpot_s is not None], self._model_ms
        elif metric == "itl":
            values, to_ms = [x for r in ok for x in r.itl_s], self._model_ms
        elif metric == "e2e":
            values, to_ms = self._model_latency_s(ok), _ms
        else:
            raise ValueError(f"unknown latency metric {metric!r}")
        return sorted(float(v) for v in values), to_ms

    def goodput(self, concurrency: int, limits_ms: dict[str, float]) -> dict[str, float] | None:
        """Good requests per second and their tokens per second at a concurrency (model time),
        with ``limits_ms`` per metric (``ttft``, ``itl`` judged as TPOT, ``e2e``): a request is good
        when it succeeded and meets every limit (SGLang's ``benchmark/goodput.py``). The span is each
        batch's, summed over batches. None when the concurrency was not measured, or a limit needs
        a figure the run does not have (TTFT without streaming)."""
        recs = self._sweep_records(concurrency)
        if not recs:
            return None
        span = 0.0
        batches: dict[int, list[RequestRecord]] = {}
        for r in recs:
            batches.setdefault(r.repeat, []).append(r)
        for batch in batches.values():
            span += self._span_model_s(batch)
        if span <= 0:
            return None
        good = tokens = 0
        for r in recs:
            if not r.ok:
                continue
            observed = {"itl": r.tpot_s, "tpot": r.tpot_s}
            model_ms = {m: None if v is None else self._model_ms(v) for m, v in observed.items()}
            model_ms["ttft"] = _ms(r.model_ttft_s(self.time_scale))
            model_ms["e2e"] = r.model_latency_s(self.time_scale) * 1000.0
            if any(model_ms[m] is None for m in limits_ms):
                return None
            if all(model_ms[m] <= limit for m, limit in limits_ms.items()):
                good += 1
                tokens += r.completion_tokens or 0
        return {"requests_per_s": good / span, "tok_per_s": tokens / span,
                "good": good, "requests": len(recs)}

    def latency_p50_ms_at(self, concurrency: int) -> float | None:
        row = self.sweep_row(concurrency)
        return None if row is None else row.latency_p50_ms

    def latency_p99_ms_at(self, concurrency: int) -> float | None:
        row = self.sweep_row(concurrency)
        return None if row is None else row.latency_p99_ms

    @property
    def n_failed(self) -> int:
        return sum(1 for r in self.records if not r.ok)

    def summary(self) -> dict[str, Any]:
        """Flat figures for storage beside a trial: the names of the study's trial attributes."""
        out: dict[str, Any] = {
            "single_tok_per_s": self.single_tok_per_s,
            "single_tok_per_s_cv": self.single.cv if self.single else None,
            "accept_length": self.accept_length,
        }
        for row in self.sweep_rows:
            c = row.concurrency
            out[f"tok_per_s@{c}"] = row.tok_per_s.mean if row.tok_per_s else None
            out[f"tok_per_s_cv@{c}"] = row.tok_per_s.cv if row.tok_per_s else None
            out[f"latency_p50_ms@{c}"] = row.latency_p50_ms
            out[f"latency_p99_ms@{c}"] = row.latency_p99_ms
            # every latency percentile an SLO may name, in one attribute (``ttft_p99`` ... model ms)
            pcts = {}
            for metric in METRICS:
                xs, to_ms = self._latency_sample(metric, c)
                for q in PERCENTILES:
                    p = percentile_of_sorted(xs, q)
                    pcts[f"{metric}_p{q}"] = None if p is None else to_ms(p)
            out[f"latency_ms@{c}"] = {k: v for k, v in pcts.items() if v is not None} or None
        out.update(n_requests=len(self.records), n_failed=self.n_failed, time_scale=self.time_scale,
                   complete=self.complete)
        return out

    def stage_results(self) -> list[tuple[str, "SuiteResult"]]:
        """``(stage name, the result as it stood at the end of that stage)`` for a staged run, in
        order ([] for the article's order): the partial figures the study compares stage by stage."""
        return [(st["name"], dataclasses.replace(self, records=self.records[:st["records"]], stages=self.stages[:i + 1],
                                                 complete=False))
                for i, st in enumerate(self.stages)]

    # ---- serialization -------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "complete": self.complete,
            "error": self.error,
            "stages": list(self.stages),
            "stopped_after": self.stopped_after,
            "base_url": self.base_url,
            "api": self.api,
            "stream": self.stream,
            "started_at": self.started_at,
            "duration_s": self.duration_s,
            "time_scale": self.time_scale,
            "figures_in": "model time" if self.time_scale != 1.0 else "wall time",
            "server_version": self.server_version,
            "resolved_spec": None if self.resolved_spec is None else self.resolved_spec.as_dict(),
            "figures": {
                "single_tok_per_s": _fig(self.single),
                "accept_length": _fig(self.accept),
                "single": [row.to_dict() for row in self.single_rows],
                "sweep": [row.to_dict() for row in self.sweep_rows],
            },
            "warnings": list(self.warnings),
            "flushes": list(self.flushes),
            "suite": self.suite,
            "server_info": self.server_info,
            "timekeeping": self.timekeeping,
            "server_info_after": self.server_info_after,
            "records": [r.to_dict() for r in self.records],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "SuiteResult":
        """Rebuild from :meth:`to_dict` output; figures are recomputed from the records.
        Raises ``ValueError`` for anything that is not a suite result of this schema version."""
        if not isinstance(d, dict) or "schema_version" not in d or "records" not in d:
            raise ValueError("not a tuner suite result (no schema_version/records)")
        if d["schema_version"] != SCHEMA_VERSION:
            raise ValueError(f"suite result schema_version {d['schema_version']}; "
                             f"this tuner reads version {SCHEMA_VERSION}")
        spec = d.get("resolved_spec")
        return cls(
            suite=d.get("suite") or {}, base_url=d.get("base_url", ""), api=d.get("api", "generate"),
            stream=bool(d.get("stream", False)), started_at=d.get("started_at", ""),
            duration_s=float(d.get("duration_s", 0.0)), server_info=d.get("server_info"),
            timekeeping=d.get("timekeeping"), server_info_after=d.get("server_info_after"),
            server_version=d.get("server_version"), time_scale=float(d.get("time_scale", 1.0)),
            resolved_spec=None if spec is None else SpecConfig(**spec),
            records=[RequestRecord.from_dict(r) for r in d["records"]],
            flushes=list(d.get("flushes") or []), warnings=list(d.get("warnings") or []),
            complete=bool(d.get("complete", False)), error=d.get("error"),
            stages=list(d.get("stages") or []), stopped_after=d.get("stopped_after"),
        )

    def save(self, path: str | Path) -> Path:
        """Write JSON atomically (a temporary file renamed over ``path``): never half-written."""
        return write_text_atomic(path, json.dumps(self.to_dict(), indent=1, default=str))

    @classmethod
    def load(cls, path: str | Path) -> "SuiteResult":
        """Read a saved result; ``ValueError`` (naming the file) for anything else."""
        path = Path(path)
        try:
            # bounded like every file a user names: a regular file, capped, UTF-8
            data = json.loads(read_text_capped(path, MAX_DATASET_BYTES))
            return cls.from_dict(data)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        except (TypeError, AttributeError, KeyError, RecursionError) as exc:
            # a field of another shape than to_dict writes ("records": 5, a record that is a list, JSON
            # nested thousands deep): no result, as the docstring promises (QA fuzz, qa138: TypeError,
            # AttributeError and RecursionError reached callers of the Python API)
            why = "nested too deeply" if isinstance(exc, RecursionError) else f"{type(exc).__name__}: {exc}"
            raise ValueError(f"{path}: not a result `tuner bench --json` saves ({why[:200]}); give a file saved "
                             "with --json") from None


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000.0


def _fig(f: Figure | None) -> dict | None:
    return None if f is None else f.to_dict()


def _scaled(f: Figure | None, factor: float) -> Figure | None:
    return None if f is None else f.scaled(factor)
