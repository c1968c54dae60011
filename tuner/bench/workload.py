"""The workload a suite sends: how many requests, how long, of which kinds.

Computed from a loaded :class:`tuner.config.suite.Suite` (inline prompts or a drawn dataset), so it
describes exactly the requests every trial and the baseline get. Prompt lengths are in characters,
and in tokens estimated (:func:`tuner.config.dataset.estimate_tokens`: a CJK character or an emoji one, other
text four characters one; no tokenizer here; the server's own ``prompt_tokens`` are in every request
record). Output lengths are the requests' ``max_tokens`` in the sweep (with
``ignore_eos``, what the server generates); in a suite that sweeps nothing, the single requests'
lengths, the only ones it sends.
"""

from __future__ import annotations

from typing import Any

from ..config.dataset import estimate_tokens
from ..config.names import shown
from ..config.wording import counted
from .stats import percentile

#: the percentiles reported
QUANTILES = (50, 90, 99)


def _percentiles(values: list[float]) -> dict[str, float | None]:
    out: dict[str, float | None] = {f"p{q}": percentile(values, q) for q in QUANTILES}
    out["max"] = max(values) if values else None
    return out


def sent_prompts(suite) -> list:
    """The suite's prompts a measurement sends, in the suite's order: the single phase's (its first
    ``single.prompts``, at one length or more) and the sweep's (a batch of C takes prompts ``i % n``
    for i < C, so the first C of them). Warm-up requests are not measured, so not counted."""
    names = {p.name for p in suite.single_prompts() if suite.single_lengths(p)}
    for c in suite.sweep.concurrencies:
        names.update(p.name for p in suite.cycled(c))
    return [p for p in suite.prompts if p.name in names]


def workload_stats(suite) -> dict[str, Any]:
    """Plain data about the requests the suite sends (stored with a study, shown in status and the
    report): ``requests`` is how many the suite holds (drawn from its dataset, or written inline),
    ``sent`` how many of them a measurement sends (:func:`sent_prompts`), and the lengths, chat turns
    and categories are those of the ones sent (QA: 40 drawn with a sweep up to C=8 and
    ``single.prompts: 2`` sent 8 of them, and the line gave the lengths of all 40)."""
    drawn = list(suite.prompts)
    prompts = sent_prompts(suite)
    chars = [len(p.text or "") for p in prompts]
    source: dict[str, Any] = {"kind": "inline"}
    if suite.dataset is not None:
        d = suite.dataset
        source = {"kind": "dataset", "path": d.path, "format": d.layout(), "n": d.n, "seed": d.seed,
                  "sha256": d.sha256, "dropped_short": d.dropped_short,
                  "dropped_by_filters": d.dropped_by_filters}
    categories: dict[str, int] = {}
    for p in prompts:
        key = p.category or "(none)"
        categories[key] = categories.get(key, 0) + 1
    single = [(p.name, length) for p in suite.single_prompts() for length in suite.single_lengths(p)]
    # A suite without a sweep sends its single requests alone: the sweep's length (512 by default)
    # would state an output length no request has (QA: `single: {lengths: [8]}`, `sweep:
    # {concurrencies: []}` printed "output tokens 512/512/512")
    # the sweep's requests: a batch of C takes the first C prompts (request i is prompt i % n)
    swept = suite.prompts[:max(suite.sweep.concurrencies, default=0)]
    outputs = ([suite.sweep_tokens(p) for p in swept] if suite.sweep.concurrencies
               else [length for _, length in single])
    return {
        "suite": suite.name,
        "source": source,
        "requests": len(drawn),
        "sent": len(prompts),
        "largest_batch": max(suite.sweep.concurrencies, default=0),
        "single_prompts_sent": len({name for name, _ in single}),
        "chat_turns": sum(1 for p in prompts if p.messages),
        "prompt_chars": _percentiles(chars),
        "prompt_tokens_est": _percentiles([estimate_tokens(p.text or "") for p in prompts]),
        "output_tokens": _percentiles(outputs),
        "single_requests": len(single),
        "single_output_tokens": _percentiles([length for _, length in single]),
        "categories": dict(sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))),
        "temperature": suite.temperature,
        "ignore_eos": suite.ignore_eos,
    }


def dropped_note(src: dict[str, Any]) -> str:
    """The rows of the file left out of the draw, when any (:class:`tuner.config.dataset.DatasetSpec`
    ``dropped_short``, ``dropped_by_filters``): a workload cut short says by how much, in the status
    line and the report; "" when none were."""
    parts = []
    if src.get("dropped_short"):
        parts.append(f"{src['dropped_short']} by SGLang's {src.get('format')} rule (under two turns, or a "
                     "prompt or reply under 2 tokens)")
    if src.get("dropped_by_filters"):
        parts.append(f"{src['dropped_by_filters']} by the length filters")
    return f"; rows dropped: {', '.join(parts)}" if parts else ""


def sent_note(stats: dict[str, Any]) -> str:
    """", 8 of them sent (...)" when a measurement sends fewer of the suite's requests than it holds
    (``sent``; a study stored before it was counted has none: ""). The statistics after it are the
    sent ones'."""
    sent, held = stats.get("sent"), stats.get("requests")
    if not isinstance(sent, int) or not isinstance(held, int) or sent >= held:
        return ""
    single = stats.get("single_prompts_sent")
    # a suite that sends no single request (single.lengths []) has no single phase to name (QA qa152:
    # "8 of them sent (the single phase's first 0; a sweep batch ...)")
    said = [f"the single phase's first {single}"] if single else []
    if stats.get("largest_batch"):
        said.append(f"a sweep batch of C sends the first C, up to {stats['largest_batch']}")
    return f", {sent} of them sent ({'; '.join(said)})"


def workload_line(stats: dict[str, Any]) -> str:
    """One line for people: source, size, lengths, categories; characters that would drive a terminal
    or reorder the line escaped (:func:`tuner.config.names.shown`)."""
    src = stats.get("source") or {}
    if src.get("kind") == "dataset":
        drawn = f"{stats['requests']} drawn" + (f" (n={src['n']}, seed {src['seed']})" if src.get("n") else "")
        head = f"dataset {src.get('path')} ({src.get('format')}), {drawn}" + sent_note(stats) + dropped_note(src)
    else:
        n = stats.get("requests")
        head = (counted(n, "inline prompt") if isinstance(n, int) else f"{n} inline prompts") + sent_note(stats)

    def pct(d: dict) -> str:
        return "/".join("-" if d.get(k) is None else f"{d[k]:.0f}" for k in ("p50", "p90", "p99"))

    outputs = f"output tokens {pct(stats['output_tokens'])}"
    if stats.get("ignore_eos") is False:
        # the lengths asked are caps then: a real model ends a request at its end of sequence (SGLang
        # 0.5.23 checks the EOS tokens unless ignore_eos, managers/schedule_batch.py check_finished;
        # finish reason stop), often far sooner (QA: a model stopping after 60 tokens read "output tokens
        # 512/512/512"); only the simulator, an ideal model, generates them whole either way
        outputs = f"output tokens at most {pct(stats['output_tokens'])} (ignore_eos false: the model may stop sooner)"
    cats = stats.get("categories") or {}
    # the eight largest, and how many more there are (QA qa188: 12 categories showed 8, counting 22 of the 30
    # requests, with no word of the other 4)
    listed, rest = list(cats.items())[:8], list(cats.items())[8:]
    cat_text = (", ".join(f"{k} {v}" for k, v in listed)
                + (f", {counted(len(rest), 'more category', 'more categories')} of "
                   f"{counted(sum(v for _, v in rest), 'request')}" if rest else "")) if set(cats) != {"(none)"} else ""
    # the dataset's path and its categories are a user's text: escaped (tuner.config.names.shown)
    return shown(f"suite {stats.get('suite')}: {head}; prompt chars p50/p90/p99 {pct(stats['prompt_chars'])}, "
            f"{outputs}; temperature {stats.get('temperature'):g}"
            + (f"; {stats['chat_turns']} with chat turns" if stats.get("chat_turns") else "")
            + (f"; categories: {cat_text}" if cat_text else ""))
