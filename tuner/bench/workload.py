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


def workload_stats(suite) -> dict[str, Any]:
    """Plain data about the suite's requests (stored with a study, shown in status and the report)."""
    prompts = list(suite.prompts)
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
    outputs = ([suite.sweep_tokens(p) for p in prompts] if suite.sweep.concurrencies
               else [length for _, length in single])
    return {
        "suite": suite.name,
        "source": source,
        "requests": len(prompts),
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


def workload_line(stats: dict[str, Any]) -> str:
    """One line for people: source, size, lengths, categories; characters that would drive a terminal
    or reorder the line escaped (:func:`tuner.config.names.shown`)."""
    src = stats.get("source") or {}
    if src.get("kind") == "dataset":
        drawn = f"{stats['requests']} drawn" + (f" (n={src['n']}, seed {src['seed']})" if src.get("n") else "")
        head = f"dataset {src.get('path')} ({src.get('format')}), {drawn}" + dropped_note(src)
    else:
        n = stats.get("requests")
        head = counted(n, "inline prompt") if isinstance(n, int) else f"{n} inline prompts"

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
    cat_text = ", ".join(f"{k} {v}" for k, v in list(cats.items())[:8]) if set(cats) != {"(none)"} else ""
    # the dataset's path and its categories are a user's text: escaped (tuner.config.names.shown)
    return shown(f"suite {stats.get('suite')}: {head}; prompt chars p50/p90/p99 {pct(stats['prompt_chars'])}, "
            f"{outputs}; temperature {stats.get('temperature'):g}"
            + (f"; {stats['chat_turns']} with chat turns" if stats.get("chat_turns") else "")
            + (f"; categories: {cat_text}" if cat_text else ""))
