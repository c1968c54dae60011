"""``tuner bench --compare FILE``: the saved result read as a baseline, and judged as a measurement.

A baseline is a file the user gives: anything ``tuner bench --json`` cannot have saved (not a
result; a record whose numbers are of another type, negative, NaN or infinite; an answer whose
token count or verify steps cannot be true, judged as a fresh run's are) is refused before any
request, one line naming ``--compare`` and the file: a speedup printed against it would be no
number at all (QA fuzz: a traceback; ``nanx`` and ``0.00x`` rows, exit 0).
"""

from __future__ import annotations

from pathlib import Path

from ..bench import SuiteResult
from ..config.wording import counted
from ..config.yamlfile import ConfigError
from ..engine.records import finite_number


def untrue_answers(res: SuiteResult, ignore_eos: bool) -> list[str]:
    """Each answered request of ``res`` whose token count cannot be true (more than asked, none, or
    not what ``ignore_eos`` asks) or whose verify steps cannot come from the speculative setting the
    server says it runs (:func:`tuner.engine.verify.speculation_problem`), as ``PHASE PROMPT at N
    tokens: why``."""
    from ..bench.result import says_adaptive, says_autoregressive
    from ..engine.verify import speculation_problem

    spec = res.resolved_spec
    if spec is not None and (not isinstance(spec.num_steps, int) or says_adaptive(res.server_info)):
        # flags not said as numbers, or an adaptive server's (only the steps it starts at: SGLang moves
        # among its policy's steps by batch size): nothing to bound the accept length by; the client
        # bounded each answer by its own counts (tuner.bench.client BenchClient._accept_problem)
        spec = None
    # A server that says it runs no speculative algorithm gives no verify steps either (QA: one that
    # said speculative_algorithm null answered spec_verify_ct, exit 0, its header "no speculative
    # decoding"); one that says nothing of it bounds nothing.
    bounded = spec is not None or (res.resolved_spec is None and says_autoregressive(res.server_info))

    def problem(r) -> str | None:
        return r.count_problem(ignore_eos) or (speculation_problem(r, spec) if bounded else None)

    return [f"{r.phase} {r.prompt} at {counted(r.max_tokens, 'token')}: {why}" for r in res.records if r.ok
            for why in [problem(r)] if why]


#: A saved request record's numbers: (field, a whole number, may be None). A measured figure is
#: never negative, NaN or infinite, and a count is never a fraction or a boolean.
_RECORD_NUMBERS = (("max_tokens", True, False), ("repeat", True, False), ("concurrency", True, False),
                   ("index", True, False), ("start_s", False, False), ("end_s", False, False),
                   ("http_status", True, True), ("completion_tokens", True, True), ("prompt_tokens", True, True),
                   ("spec_verify_ct", True, True), ("spec_accept_length", False, True),
                   ("server_latency_s", False, True), ("ttft_s", False, True))


def _not_a_figure(v, whole: bool) -> bool:
    return not finite_number(v) or v < 0 or (whole and not isinstance(v, int))


def _record_problem(r) -> str | None:
    """Why a saved record's fields cannot be what ``tuner bench`` recorded (a number of another type,
    negative, NaN or infinite; an end before its start; a first token or a server latency later than
    the request's end),
    or None."""
    if r.phase not in ("warmup", "single", "sweep") or not isinstance(r.prompt, str) or not isinstance(r.ok, bool):
        return f"phase {r.phase!r}, prompt {r.prompt!r}, ok {r.ok!r} are no request's"
    for name, whole, optional in _RECORD_NUMBERS:
        v = getattr(r, name)
        if not (v is None and optional) and _not_a_figure(v, whole):
            return f"{name} {v!r} is no {'count' if whole else 'measured figure'}"
    if not isinstance(r.itl_s, list) or any(_not_a_figure(x, False) for x in r.itl_s):
        return f"itl_s {str(r.itl_s)[:40]} is no list of measured seconds"
    if r.end_s < r.start_s:
        return f"end_s {r.end_s} is before start_s {r.start_s}"
    if r.ttft_s is not None and r.ttft_s > r.latency_s + 1e-6:
        return f"ttft_s {r.ttft_s} is longer than the {r.latency_s:.4g} s the request took"
    return r.latency_problem() if r.ok else None


def load_baseline(path: Path) -> SuiteResult:
    """The ``--compare`` result at ``path``, its records of the types ``tuner bench --json`` saves;
    :class:`ConfigError` naming ``--compare`` and the file otherwise: not a result (a list where the
    records go, an unknown record field, JSON nested thousands deep), a clock rate that is none, or
    a record whose numbers cannot be a measurement (:func:`_record_problem`)."""
    try:
        base = SuiteResult.load(path)
    except ValueError as exc:  # not a result, of any shape (SuiteResult.load names the file)
        raise ConfigError("--compare", "", str(exc)) from None
    if not isinstance(base.suite, dict):
        raise ConfigError("--compare", "", f"{path}: suite {str(base.suite)[:40]} is no suite; give a file saved "
                                           "with --json")
    if _not_a_figure(base.time_scale, False) or base.time_scale == 0:
        raise ConfigError("--compare", "", f"{path}: time_scale {base.time_scale} is no clock rate (model seconds "
                                           "per wall second, 1 on SGLang); give a file saved with --json")
    bad = [(i, why) for i, r in enumerate(base.records) for why in [_record_problem(r)] if why]
    if bad:
        i, why = bad[0]
        raise ConfigError("--compare", "", f"{path}: records[{i}]: {why} ({counted(len(bad), 'record')} such); "
                                           "give a file saved with --json")
    return base


def refuse_untrue_baseline(base: SuiteResult, ignore_eos: bool, path: Path) -> None:
    """Raise :class:`ConfigError` naming ``--compare`` when an answer of ``base`` cannot be true, as a
    fresh run's answers are judged (:func:`untrue_answers`): its figures would be no measurement of
    the suite (a count of 10^30 tokens read as a baseline of 10^28 tok/s, every speedup 0.00x).
    Asked after the suites are found the same (``ignore_eos`` is this run's)."""
    untrue = untrue_answers(base, ignore_eos)
    if untrue:
        raise ConfigError("--compare", "", f"{path}: {counted(len(untrue), 'answer')} cannot be true (first: "
                                           f"{untrue[0][:200]}); measure the baseline again with --json")


def other_prompt_tokens(base: SuiteResult, res: SuiteResult) -> str | None:
    """Why ``base`` and ``res`` were answered by servers that tokenize the suite's prompts differently,
    or None: the first prompt that ``base`` counts as other ``prompt_tokens`` than ``res`` does
    (:func:`tuner.bench.records.other_token_count`; the suites are the same,
    :func:`tuner.cli.bench._refuse_other_workload`): the speedups would compare two workloads of other
    lengths (QA: a baseline counting ``fib`` as 15 tokens against a server counting it as 21 read
    2.21x, exit 0). A prompt either side does not count is not judged."""
    from ..bench.records import other_token_count, prompt_token_counts

    other = other_token_count(prompt_token_counts(base.records), prompt_token_counts(res.records))
    if other is None:
        return None
    prompt, said, n = other
    return (f"the --compare result counts prompt {prompt!r} as {said} input tokens, this server as {n}: another "
            "tokenizer, chat template or model, so the speedups above compare two workloads; measure the "
            "baseline on a server of this one's model and tokenizer")
