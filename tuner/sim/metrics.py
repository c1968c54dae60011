"""``GET /metrics``: SGLang's Prometheus metrics that the tuner reads, in the text exposition format.

Names and help texts follow ``srt/observability/metrics_collector.py``; every series carries the
``model_name`` label as SGLang's do. Counters count finished requests (SGLang's tokenizer manager
counts at completion too).
"""

from __future__ import annotations


def _series(lines: list, name: str, kind: str, help_text: str, value, labels: str) -> None:
    lines.append(f"# HELP {name} {help_text}")
    lines.append(f"# TYPE {name} {kind}")
    lines.append(f"{name}{{{labels}}} {float(value)!r}")


def prometheus_text(service) -> str:
    """The exposition text for a :class:`tuner.sim.api.SimService`."""
    engine, stats = service.engine, service.engine.stats
    labels = f'model_name="{service.model_name}"'
    out: list[str] = []
    _series(out, "sglang:num_running_reqs", "gauge", "The number of running requests.",
            len(engine.running), labels)
    _series(out, "sglang:num_queue_reqs", "gauge", "The number of requests in the waiting queue.",
            len(engine.waiting), labels)
    _series(out, "sglang:prompt_tokens_total", "counter", "Number of prefill tokens processed.",
            stats.prompt_tokens, labels)
    _series(out, "sglang:generation_tokens_total", "counter", "Number of generation tokens processed.",
            stats.generation_tokens, labels)
    _series(out, "sglang:num_requests_total", "counter", "The number of requests finished.",
            stats.requests_finished, labels)
    if service.plan.speculative:
        _series(out, "sglang:spec_accept_length", "gauge",
                "Mean acceptance length of speculative decoding (accepted drafts + bonus token per forward).",
                stats.avg_spec_accept_length or 0.0, labels)
        proposed = stats.spec_verify_calls * (service.plan.spec.num_draft_tokens - 1)
        _series(out, "sglang:spec_accept_rate", "gauge",
                "Speculative acceptance rate (`accepted drafts / proposed drafts` in batch).",
                stats.spec_correct_drafts / proposed if proposed else 0.0, labels)
        _series(out, "sglang:spec_verify_calls_total", "counter",
                "Number of speculative decoding verification calls.", stats.spec_verify_calls, labels)
    return "\n".join(out) + "\n"
