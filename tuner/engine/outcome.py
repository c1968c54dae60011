"""What one measurement means for its trial: status, objective values and the attributes stored.

Pure functions of a :class:`tuner.engine.backends.Measurement` and the baseline's figures; the
trial runner (:mod:`tuner.engine.trial`) writes what they return. A measurement that cannot be
compared (a figure an objective needs is missing) is ``incomplete``; a server that ran another
setting than asked, another SGLang release than the baseline's (:func:`release_problem`), or one
that counts the suite's prompts as other token counts (:func:`tokenizer_problem`), is
``args_mismatch``: all are failed trials, never values on the front. A
measured trial also carries its SLO checks, goodput and lossless check (:mod:`tuner.engine.limits`);
breaking a limit leaves it ``measured`` with its values, and infeasible through its constraints.
A speedup beyond what the setting's accept length allows (:func:`speedup_problem`) fails the trial as
``bad_response``: a server (or a baseline) whose clock cannot be true (not on ``backend: model``,
which has no clock).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..config.landscape import SPEEDUP_BOUND  # one bound for a measured trial and a table's row alike
from ..sglang.rules import SpecConfig
from .limits import OUTPUTS_ATTR, SLO_ATTR, baseline_outputs, goodput_attrs, lossless_attrs, slo_checks
from .objectives import objective_values
from .records import FAILED, MEASURED, StoredFigures, figure_attrs

#: Attributes a reused trial copies from the measurement it reuses, besides the figures.
FAILURE_KEYS = ("failure_class", "failure_message", "log_tail")


@dataclass
class TrialOutcome:
    """A measured trial's verdict: ``status`` (measured or failed), its objective ``values`` (None
    when they could not be computed) and every attribute to store."""

    status: str
    values: list[float] | None
    attrs: dict
    #: failed as ``bad_response`` by :func:`speedup_problem` alone: faster over the baseline than its
    #: accept length allows, which a baseline that read slow explains as well (:mod:`tuner.engine.suspect`)
    too_fast: bool = False


def judge_measurement(m, spec: SpecConfig, objectives, baseline: StoredFigures, config=None,
                      baseline_attrs: dict | None = None, way_on: str | None = None) -> TrialOutcome:
    """Status, values and attributes of a trial's measurement ``m`` against the ``baseline``;
    ``config`` (the study's) brings the SLOs and the lossless check, ``baseline_attrs`` the
    baseline's stored outputs; ``way_on`` ends a too-fast message (:func:`speedup_problem`)."""
    attrs = measurement_attrs(m, spec)
    values, status = None, FAILED
    if not m.failure_class:
        extra = limit_attrs(m.figures, config, baseline_attrs) if config is not None else {}
        attrs.update(extra)
        try:
            values = objective_values(objectives, m.figures, baseline, extra)
            status = MEASURED
        except ValueError as exc:
            attrs.update(failure_class="incomplete", failure_message=str(exc))
    if status == MEASURED and attrs.get("args_mismatch"):
        status = FAILED
        attrs.update(failure_class="args_mismatch", failure_message=(
            f"the server ran {attrs.get('resolved_spec')} instead of {spec.label()}: "
            "SGLang rewrote the setting in a way tuner.sglang.rules does not know"))
    if status == MEASURED and (problem := release_problem(attrs, baseline_attrs)
                               or tokenizer_problem(m.figures, baseline_attrs)):
        # no figure kept, as for a speedup that cannot be true: its suite.json stays as the evidence
        return TrialOutcome(FAILED, None, {k: v for k, v in attrs.items() if not is_figure(k)}
                            | {"failure_class": "args_mismatch", "failure_message": problem})
    if status == MEASURED:
        speeds = speedups(m.figures, baseline)
        problem = timed_speedup_problem(speeds, getattr(m.figures, "accept_length", None), spec.num_steps,
                                        config, way_on or REBASELINE, spec.num_draft_tokens)
        if problem:
            return TrialOutcome(FAILED, None, {k: v for k, v in attrs.items() if not is_figure(k)}
                                | {"failure_class": "bad_response", "failure_message": problem}, too_fast=True)
        attrs.update(speeds)
    return TrialOutcome(status, values, attrs)


def release_problem(attrs: dict, baseline_attrs: dict | None) -> str | None:
    """Why a trial's figures cannot be read against the study's baseline: its server said another
    SGLang release (``/server_info``'s ``version``, stored as ``sglang_version``) than the baseline's
    (an upgrade during the night or between two runs of the study, or a worker on a node running
    another release): its speedups would compare two releases, not a setting with autoregressive
    decoding (QA: a trial on 0.5.24 was read against a 0.5.23 baseline and kept on the front). None
    when either does not say (``backend: model``, an older baseline)."""
    ran, base = attrs.get("sglang_version"), (baseline_attrs or {}).get("sglang_version")
    if not isinstance(ran, str) or not isinstance(base, str) or ran == base:
        return None
    return (f"the server runs SGLang {ran!r}, the baseline was measured on {base!r}: its speedups would "
            "compare two releases, not this setting with autoregressive decoding; measure the baseline "
            "again on this release (tuner study run --rebaseline)")


#: The baseline's ``{prompt name: prompt_tokens}`` (:func:`tuner.bench.records.prompt_token_counts`),
#: stored with it so that any worker's trial is checked against it (:func:`tokenizer_problem`)
PROMPT_TOKENS_ATTR = "prompt_token_counts"


def tokenizer_problem(figures, baseline_attrs: dict | None) -> str | None:
    """Why a trial's figures cannot be read against the study's baseline: its server counted a prompt
    of the suite as another number of input tokens than the baseline's did (SGLang 0.5.23 counts a
    prompt's token ids, the same every time on one tokenizer and chat template): another tokenizer,
    chat template or model revision (a node that fetched ``model_path`` from the hub after its chat
    template changed), so the two measured two workloads. None when either does not say (an older
    baseline, ``backend: model``, a server that gives no ``prompt_tokens``)."""
    from ..bench.records import other_token_count, prompt_token_counts

    theirs = (baseline_attrs or {}).get(PROMPT_TOKENS_ATTR)
    if not theirs or not hasattr(figures, "records"):
        return None
    other = other_token_count(theirs, prompt_token_counts(figures.records))
    if other is None:
        return None
    prompt, said, n = other
    return (f"the server counts prompt {prompt!r} as {n} input tokens, the baseline's counted {said}: another "
            "tokenizer, chat template or model revision, so its speedups would compare two workloads; give "
            "every node the same model files, or measure the baseline again (tuner study run --rebaseline)")


#: What a study's trial reading too fast says to do: its baseline is the study's stored one.
REBASELINE = ("every trial reading so points at the baseline: measure it again with tuner study run "
              "--rebaseline")


def speedup_problem(speeds: dict, accept_length, num_steps: int | None = None,
                    way_on: str = REBASELINE, num_draft_tokens: int | None = None) -> str | None:
    """Why these speedups cannot be true (a speedup above :data:`SPEEDUP_BOUND` times the accept
    length), or None. A server that reports no accept length is bounded by the most a draft of
    ``num_steps`` can accept, ``num_steps + 1`` tokens per step, or ``num_draft_tokens`` when that
    is fewer (:func:`tuner.config.landscape.most_accepted`, as ``verify.speculation_problem`` bounds
    a step; QA qa206: steps=5 draft=3 was bounded by 6); with neither there is nothing to bound by.
    ``way_on`` ends the line: what to do about the baseline the speedups are over (a confirm round's
    is not the study's)."""
    usable = isinstance(accept_length, (int, float)) and not isinstance(accept_length, bool)
    if usable and accept_length >= 1:
        most, what = float(accept_length), f"an accept length of {accept_length:.2f}"
    elif num_steps is not None:
        if num_draft_tokens is not None and num_draft_tokens < num_steps + 1:
            most = float(num_draft_tokens)
            what = f"no accept length reported and {num_draft_tokens} draft tokens (at most {num_draft_tokens})"
        else:
            most = float(num_steps + 1)
            what = f"no accept length reported and {num_steps} steps (at most {num_steps + 1})"
    else:
        return None
    name, top = max(speeds.items(), key=lambda kv: kv[1], default=(None, 0.0))
    if top <= SPEEDUP_BOUND * most:
        return None
    return (f"{name} {top:.2f}x over the baseline with {what}: a speculative step commits about its "
            "accept length in tokens and costs at least one forward of the target, so no setting runs "
            f"more than {SPEEDUP_BOUND:g} x its accept length faster; this server's timing (or the "
            f"baseline's) cannot be true ({way_on})")


def timed_speedup_problem(speeds: dict, accept_length, num_steps: int | None, config,
                          way_on: str = REBASELINE, num_draft_tokens: int | None = None) -> str | None:
    """:func:`speedup_problem` for a study's measurement (a trial, a confirm repeat), except on
    ``backend: model``: it has no server clock to doubt, its figures being a table's or the
    performance model's times noise the study chose (at 20% noise a true 0.95 x reads above the
    bound). ``config`` None: judged."""
    if config is not None and config.server.backend == "model":
        return None
    return speedup_problem(speeds, accept_length, num_steps, way_on, num_draft_tokens)


def limit_attrs(figures, config, baseline_attrs: dict | None) -> dict[str, Any]:
    """Goodput, SLO checks and the lossless check of a measurement (see :mod:`tuner.engine.limits`)."""
    attrs: dict[str, Any] = goodput_attrs(figures, config.slo)
    if config.slo:
        flat = figure_attrs(figures)
        attrs[SLO_ATTR] = slo_checks(flat, config.slo)
    lossless = config.bench.lossless
    attrs.update(lossless_attrs(figures, baseline_attrs, lossless.min_share, lossless.enforce))
    return attrs


def baseline_attrs(m, config) -> dict[str, Any]:
    """The baseline's attributes: its figures, judged against the same SLOs (it may break them
    itself), and its single-request outputs for the lossless check of every trial."""
    attrs = measurement_attrs(m, None)
    if m.figures is not None and not m.failure_class:
        attrs.update(limit_attrs(m.figures, config, None))
        outputs = baseline_outputs(m.figures)
        if outputs:
            attrs[OUTPUTS_ATTR] = outputs
        if hasattr(m.figures, "records"):
            from ..bench.records import prompt_token_counts

            counts = prompt_token_counts(m.figures.records)
            if counts:
                attrs[PROMPT_TOKENS_ATTR] = counts
    return attrs


def is_figure(key: str) -> bool:
    """Whether a trial attribute is a measured figure (copied when a trial reuses a measurement)."""
    return ("tok_per_s" in key or "latency" in key or "ttft" in key
            or key.startswith(("accept_length", "speedup@", "single_speedup", "errors@", "itl_", "e2e_",
                               "goodput", "slo_", "lossless_")))


def speedups(figures, base: StoredFigures) -> dict:
    """``single_speedup`` and ``speedup@C`` for every concurrency the baseline measured."""
    out = {}
    if figures.single_tok_per_s and base.single_tok_per_s:
        out["single_speedup"] = figures.single_tok_per_s / base.single_tok_per_s
    for c, b in base.tok_per_s.items():
        v = figures.tok_per_s_at(c)
        if v is not None and b:
            out[f"speedup@{c}"] = v / b
    return out


def measurement_attrs(m, spec: SpecConfig | None) -> dict:
    """Every attribute of a measurement, JSON-safe: figures, failure, resolved args, provenance."""
    attrs: dict[str, Any] = {"duration_s": round(m.duration_s, 3), "log_path": m.log_path}
    if getattr(m, "model_duration_s", None) is not None:  # modelled GPU time (backend model)
        attrs["model_duration_s"] = round(m.model_duration_s, 3)
    if m.failure_class:
        attrs.update(failure_class=m.failure_class, failure_message=m.failure_message,
                     log_tail=m.log_tail)
    if getattr(m, "result_path", None):
        attrs["suite_json"] = m.result_path  # a failed one's partial or rejected result too
    if m.figures is not None:
        attrs.update(figure_attrs(m.figures))
        resolved = getattr(m.figures, "resolved_spec", None)
        if resolved is not None and spec is not None:
            attrs["resolved_spec"] = resolved.label()
            attrs["args_mismatch"] = resolved != spec
        info = getattr(m.figures, "server_info", None)
        if info:
            attrs["server_args"] = {k: v for k, v in info.items() if isinstance(v, (int, float, str, bool))}
        version = getattr(m.figures, "server_version", None)
        if version:
            attrs["sglang_version"] = version
        wall = getattr(m.figures, "duration_s", None)
        if wall:
            attrs["suite_wall_s"] = round(wall, 3)  # the baseline's sets every trial's deadline
    return json.loads(json.dumps(attrs, default=str))
