"""``tuner bench``'s tables: the server's line, what was sent, then the article's tables (single
requests per prompt and length, the concurrency sweep), with a baseline column and the speedup of
every row under ``--compare``. Prints only; the command (:mod:`tuner.cli.bench`) decides what.
"""

from __future__ import annotations

from ..bench import SuiteResult
from ..bench.result import first_internal_state, says_adaptive, says_autoregressive, spec_flags_said
from ..config.names import shown as escaped
from ..config.wording import counted
from .output import console, print_table


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _pct(fig) -> str:
    return "-" if fig is None or fig.cv is None else f"{100 * fig.cv:.1f}%"


def _speedup(cur: float | None, base: float | None) -> str:
    return "-" if cur is None or not base else f"{cur / base:.2f}x"


def _mean(fig) -> float | None:
    return None if fig is None else fig.mean


def _base_single(res: SuiteResult, base: SuiteResult) -> float | None:
    """The baseline's "all (mean)" over the rows this run measured: a row whose every request failed
    here is out of this run's mean, so it is out of the baseline's too; else the speedup compares
    the mean of some rows with the mean of all (QA: a server identical to its baseline, 1.00x on the
    row it answered, read 1.19x on "all (mean)" once the slower row's requests failed). None when a
    row measured here has no baseline figure."""
    mine = [(r.prompt, r.max_tokens) for r in res.single_rows if r.tok_per_s is not None]
    theirs = {(r.prompt, r.max_tokens): _mean(r.tok_per_s) for r in base.single_rows if r.tok_per_s is not None}
    if set(mine) == set(theirs):
        return base.single_tok_per_s
    values = [theirs.get(key) for key in mine]
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)


def _unresolved(info: dict) -> str:
    """What the header says of a server whose flags :func:`tuner.bench.result.resolved_spec_from_info`
    could not read: it said it runs no speculation, or it named an algorithm with flags that are not
    integers (QA: ``speculative_num_steps: "lots"`` beside EAGLE3 read "no speculative decoding"), or
    it said nothing of it."""
    if says_autoregressive(info):
        return "no speculative decoding"
    algorithm = first_internal_state(info).get("speculative_algorithm", info.get("speculative_algorithm"))
    if algorithm:
        return f"speculative ({algorithm}), its flags not integers in /server_info ({spec_flags_said(info)})"
    return "speculation not said (/server_info has no speculative_algorithm)"


def _header(res: SuiteResult) -> str:
    if res.server_info is None:
        spec = "server args unknown (no /server_info)"
    elif res.resolved_spec is None:
        spec = _unresolved(res.server_info)
    elif says_adaptive(res.server_info):
        spec = (f"speculative, adaptive: SGLang changes the steps by batch size, from "
                f"{res.resolved_spec.label()}")
    else:
        spec = f"speculative, as the server runs it: {res.resolved_spec.label()}"
    clock = ("wall time" if res.time_scale == 1.0 else
             f"model time (simulated server, 1 wall s = {res.time_scale:g} model s)")
    return f"{res.base_url}  version {res.server_version or '?'}  {spec}  figures in {clock}"


def print_result(res: SuiteResult, base: SuiteResult | None = None, workload: str | None = None) -> None:
    """The article's tables: single requests per prompt and length, then the concurrency sweep;
    with ``base`` a baseline column and the speedup of every row; ``workload``: the line that says
    what was sent (as `tuner study status` says it), under the server's."""
    console.print(escaped(_header(res)), markup=False, highlight=False)
    if workload:
        console.print(f"workload: {workload}", markup=False, highlight=False)  # escaped by workload_line
    # with ignore_eos false the lengths asked are caps: a real model may end a request sooner (its
    # end of sequence, finish reason stop), as the workload line says (tuner.bench.workload)
    capped = isinstance(res.suite, dict) and res.suite.get("ignore_eos") is False
    if res.single_rows:
        single_streamed = any(row.ttft_ms is not None for row in res.single_rows)
        cols = ["prompt", "max tokens" if capped else "tokens", "tok/s", "cv", "accept"] + (["TTFT ms"] if single_streamed else []) + ["failed"]
        if base is not None:
            cols += ["base", "speedup"]
        base_rows = {(r.prompt, r.max_tokens): r for r in (base.single_rows if base else [])}
        rows = []
        for row in res.single_rows:
            cells = [row.prompt, row.max_tokens, _num(_mean(row.tok_per_s)), _pct(row.tok_per_s),
                     _num(_mean(row.accept_length), 2)]
            cells += [_num(_mean(row.ttft_ms))] if single_streamed else []
            cells.append(row.n_failed or "")
            if base is not None:
                b = _mean(getattr(base_rows.get((row.prompt, row.max_tokens)), "tok_per_s", None))
                cells += [_num(b), _speedup(_mean(row.tok_per_s), b)]
            rows.append(cells)
        total = ["all (mean)", "", _num(res.single_tok_per_s), _pct(res.single), _num(res.accept_length, 2),
                 *([""] if single_streamed else []), sum(r.n_failed for r in res.single_rows) or ""]
        if base is not None:
            b = _base_single(res, base)
            total += [_num(b), _speedup(res.single_tok_per_s, b)]
        rows.append(total)
        print_table(cols, rows, title="single request (tok/s per request, mean over repeats)")
    if res.sweep_rows:
        streamed = any(r.ttft_p50_ms is not None for r in res.sweep_rows)
        cols = ["C", "agg tok/s", "cv", "req tok/s", "p50 ms", "p99 ms"]
        cols += ["TTFT p50 ms", "TTFT p99 ms", "ITL p50 ms", "ITL p99 ms"] if streamed else []
        cols += ["failed"] + (["base", "speedup"] if base is not None else [])
        rows = []
        for row in res.sweep_rows:
            cells = [row.concurrency, _num(_mean(row.tok_per_s)), _pct(row.tok_per_s),
                     _num(_mean(row.per_request_tok_per_s)), _num(row.latency_p50_ms),
                     _num(row.latency_p99_ms)]
            if streamed:
                cells += [_num(row.ttft_p50_ms), _num(row.ttft_p99_ms), _num(row.itl_p50_ms, 2),
                          _num(row.itl_p99_ms, 2)]
            cells.append(row.n_failed or "")
            if base is not None:
                b = base.tok_per_s_at(row.concurrency)
                cells += [_num(b), _speedup(_mean(row.tok_per_s), b)]
            rows.append(cells)
        lengths = {r.max_tokens for r in res.records if r.phase == "sweep"}
        each = (f"{'at most ' if capped else ''}{counted(lengths.pop(), 'token')} per request" if len(lengths) == 1
                else "each request at its own length" + (" (a cap)" if capped else ""))
        print_table(cols, rows, title=f"concurrency sweep, {each} "
                                      "(agg: total tokens / first submission to last completion)")
