"""The report's "Traffic and limits" section: the workload every measurement used (suite, dataset,
lengths, categories, API, sampling temperature), the latency SLOs of the baseline and every measured
setting, the lossless check, and the confirmation of the picks. Reads :class:`ReportData` only."""

from __future__ import annotations

import html
from typing import Any

from ..bench.workload import dropped_note, sent_note
from ..config.names import shown
from ..config.wording import counted
from ..engine.limits import SLO_ATTR, check_text
from ..engine.records import MEASURED
from .report_data import ReportData


def traffic_html(data: ReportData, table) -> list[str]:
    """HTML fragments; ``table(headers, rows, cls)`` is the report's own table helper."""
    out = ["<section id=\"traffic\"><h2>Traffic and limits</h2>"]
    bench = data.config.get("bench") or {}
    w = data.workload
    if w:
        src = w.get("source") or {}
        # without n every row is drawn in the file's order, whatever the seed (QA qa152: "n=all, seed 0")
        drawn = (f"n={src.get('n')}, seed {src.get('seed')}" if src.get("n") is not None
                 else "every row, in the file's order")
        what = (f"dataset {src.get('path')} ({src.get('format')}; {drawn}, "
                f"sha256 {str(src.get('sha256'))[:12]}...)" if src.get("kind") == "dataset" else "inline prompts")
        # how many a measurement sends, when fewer (the lengths below are theirs: QA, the row gave the
        # drawn count beside the sent requests' lengths), and the rows of the file left out of the draw
        requests = f"{w.get('requests')} from {what}{sent_note(w)}{dropped_note(src)}"
        rows = [["suite", w.get("suite")], ["requests", requests],
                ["API", f"{bench.get('api', 'generate')}" + (", streamed" if bench.get("stream") else "")],
                ["sampling temperature", f"{w.get('temperature', 0):g}"],
                ["prompt length (characters) p50 / p90 / p99 / max", _pcts(w.get("prompt_chars"))],
                ["prompt length (tokens, estimated: a CJK character or an emoji one, other text chars/4)", _pcts(w.get("prompt_tokens_est"))],
                ["output length (tokens) p50 / p90 / p99 / max", _pcts(w.get("output_tokens"))],
                ["single requests per pass", w.get("single_requests")],
                ["requests with chat turns", w.get("chat_turns")],
                ["categories", ", ".join(f"{k}: {v}" for k, v in (w.get("categories") or {}).items())]]
        out.append("<h3>Workload</h3>" + table(["", ""], rows, "workload"))
    else:
        out.append("<p class=\"missing\">The study did not record its workload.</p>")
    out += _slo_html(data, table)
    out += _lossless_html(data, table)
    out += _confirmation_html(data, table)
    out.append("</section>")
    return out


def _pcts(d: dict | None) -> str:
    if not d:
        return ""
    return " / ".join("-" if d.get(k) is None else f"{d[k]:.0f}" for k in ("p50", "p90", "p99", "max"))


def _slo_html(data: ReportData, table) -> list[str]:
    slo = data.config.get("slo") or []
    if not slo:
        return ["<p>No latency SLOs (the study file has no <code>slo:</code>).</p>"]
    limits = "; ".join(f"C={s['concurrency']}: " + ", ".join(f"{k} {v:g}" for k, v in s["limits"].items()) for s in slo)
    out = [f"<h3>Latency SLOs</h3><p>Limits (model ms on the simulator): {html.escape(limits)}. A setting that "
           "breaks one is infeasible: kept off the front and the picks, and steered away from.</p>"]
    rows: list[list[Any]] = []
    base = data.baseline_attrs.get(SLO_ATTR)
    if base:
        rows.append(["baseline", "no spec", *_slo_cells(base)])
    for r in data.records:
        if r.status == MEASURED and r.attrs.get(SLO_ATTR):
            rows.append([r.number, r.effective.label() if r.effective else "", *_slo_cells(r.attrs[SLO_ATTR])])
    out.append(table(["trial", "setting", "meets every limit", "broken (measured vs limit)"], rows, "slo"))
    return out


def _slo_cells(checks: list[dict]) -> list[str]:
    bad = [c for c in checks if not c["ok"]]
    return ["yes" if not bad else "NO", "; ".join(check_text(c) for c in bad)]


def _lossless_html(data: ReportData, table) -> list[str]:
    rows = []
    for r in data.records:
        a = r.attrs
        if r.status == MEASURED and a.get("lossless_compared") is not None:
            first = a.get("lossless_first_divergence") or {}
            rows.append([r.number, r.effective.label() if r.effective else "", f"{a['lossless_share']:.0%}",
                         f"{a.get('lossless_identical')}/{a['lossless_compared']}",
                         f"{first['prompt']} ({counted(first['max_tokens'], 'token')}), character {first['position']}" if first else "",
                         "FLAGGED" if a.get("lossless_flag") else ""])
    if not rows:
        why = ("the suite samples (temperature > 0)" if (data.workload or {}).get("temperature") else
               "no measured trial has outputs to compare")
        return [f"<h3>Lossless check</h3><p>Not checked: {html.escape(why)}.</p>"]
    return ["<h3>Lossless check</h3><p>Greedy single-request outputs compared with the baseline's; speculative "
            "decoding should not change them (numerical differences make rare mismatches possible).</p>",
            table(["trial", "setting", "identical", "requests", "first divergence", "flag"], rows, "lossless")]


def _confirmation_html(data: ReportData, table) -> list[str]:
    conf = data.confirmation
    if conf is None:
        return ["<h3>Confirmation</h3><p>Not confirmed: every figure is one measurement. "
                "<code>tuner study confirm</code> re-measures the picks and the baseline, interleaved.</p>"]
    cs = conf.concurrencies
    rows = []
    for c in sorted(conf.candidates, key=lambda c: c.trial):
        picked = ", ".join(n for n, p in conf.picks.items() if p is c)
        rows.append([c.trial, c.spec.label(), c.rounds, c.single_speedup.text(3) if c.single_speedup else "",
                     *[(c.speedups[k].text(3) + f" ({c.versus_baseline(k)})") if k in c.speedups else "" for k in cs],
                     picked])
    rounds = counted(conf.rounds, 'round')
    # the run id as stored: another tool's or a hand edit's text, shown as status prints it (QA, qa177:
    # a U+202E in it reversed the rest of the paragraph in the browser)
    return [f"<h3>Confirmation</h3><p>Run {html.escape(shown(conf.run))}: {rounds} interleaved with the "
            "baseline; paired speedups, mean [95% interval].</p>",
            table(["trial", "setting", "rounds", "single speedup", *[f"speedup C={k}" for k in cs], "confirmed pick"],
                  rows, "confirmation")]
