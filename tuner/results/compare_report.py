"""``tuner study compare A B -o PAGE.html``: the comparison as one self-contained page (plotly.js
inline, no network), drawn from :func:`tuner.results.compare.compare_studies`' data: both fronts on
one chart, both baselines' throughput against concurrency, and the tables of the terminal output."""

from __future__ import annotations

import html
from pathlib import Path

from ..config.files import write_text_atomic
from ..config.names import shown
from .compare import WHOSE
from .report import _CSS, _DRAW_JS, _script_safe, _table, _text
from .report_plots import Chart, Panel, Series, to_plotly

_COLORS = {"a": "#1f77b4", "b": "#ff7f0e"}


def compare_charts(cmp: dict) -> list[Chart]:
    """The fronts (first two objectives, when both studies have the same ones) and the baselines'
    and best-throughput settings' aggregate tok/s against concurrency."""
    charts = []
    objectives = cmp["a"]["workload"]["objectives"]
    if cmp["same_objectives"] and len(objectives) >= 2:
        series = [Series(f"{side}: {_name(cmp, side)}", [p["values"][0] for p in cmp[side]["front"]],
                         [p["values"][1] for p in cmp[side]["front"]], mode="lines+markers", color=_COLORS[side],
                         text=[f"{_name(cmp, side)} trial {p['trial']}: {p['setting']}" for p in cmp[side]["front"]])
                  for side in ("a", "b")]
        charts.append(Chart("fronts", f"Pareto fronts: {objectives[0]} against {objectives[1]}",
                            [Panel(objectives[0], objectives[1], series)],
                            note="Each study against its own baseline (steps,topk,draft in the hover text)."))
    series = []
    for side in ("a", "b"):
        s = {**cmp[side], "study": _name(cmp, side)}
        cs = sorted(int(k.split("@")[1]) for k in s["baseline"] if k.startswith("tok_per_s@"))
        if cs:
            series.append(Series(f"{side}: {s['study']} baseline", cs, [s["baseline"][f"tok_per_s@{c}"] for c in cs],
                                 mode="lines+markers", color=_COLORS[side], dash=True,
                                 text=[f"{s['study']} baseline, C={c}" for c in cs]))
        if s["front"]:
            p = max(s["front"], key=lambda p: p["values"][-1])
            pcs = sorted(int(c) for c in p["tok_per_s"])
            series.append(Series(f"{side}: {s['study']} trial {p['trial']} ({p['setting']})", pcs,
                                 [p["tok_per_s"][str(c)] for c in pcs], mode="lines+markers", color=_COLORS[side],
                                 text=[f"{s['study']} trial {p['trial']}: {p['setting']}, C={c}" for c in pcs]))
    if series:
        charts.append(Chart("throughput", "Aggregate tok/s against concurrency: baselines and each study's best "
                            "at its last objective", [Panel("concurrency", "aggregate tok/s", series, log2_x=True)]))
    return charts


def _name(cmp: dict, side: str) -> str:
    """A study's name as the legend and hover text show it: as the tables do (:func:`tuner.results.report._text`)."""
    return shown(cmp[side]["study"])


def _attention_cell(side: dict) -> str:
    """The backend, and for a study an older tuner made whose it is (``flashinfer (not stored: the
    tuner's pin)``), from the record's structured fields (:func:`tuner.results.compare._attention`)."""
    hw = side["hardware"]
    backend = hw.get("attention_backend")
    if backend is None:
        return "?"
    if hw.get("attention_stored") is not False:
        return backend
    return f"{backend} (not stored: {WHOSE[bool(hw.get('attention_pinned_by_tuner'))]})"


def summary_rows(cmp: dict) -> list[list]:
    """``[what, A, B]`` rows: hardware, version, workload, baselines, best values."""
    a, b = cmp["a"], cmp["b"]

    def both(get):
        return [get(a), get(b)]

    rows = [["study", a["study"], b["study"]], ["storage", a["storage"], b["storage"]]]
    for k in ("backend", "profile", "model_path", "draft_model_path", "tp_size"):
        rows.append([k, *both(lambda s, k=k: s["hardware"][k])])
    rows.append(["attention backend", *both(_attention_cell)])
    rows.append(["SGLang version", *both(lambda s: ", ".join(s["sglang_versions"]) or "?")])
    for k in ("suite", "prompts", "single_lengths", "concurrencies", "sweep_max_tokens", "api", "objectives"):
        rows.append([k, *both(lambda s, k=k: s["workload"][k])])
    rows.append(["trials", *both(lambda s: ", ".join(f"{n} {k}" for k, n in sorted(s["counts"].items())))])
    keys = sorted(set(a["baseline"]) | set(b["baseline"]),
                  key=lambda k: (k != "single_tok_per_s", int(k.split("@")[1]) if "@" in k else 0))
    def rate(v) -> str:
        return "" if v is None else f"{v:.1f}"

    for k in keys:
        ratio = cmp["baseline_ratio_b_over_a"].get(k)
        rows.append([f"baseline {k}", rate(a["baseline"].get(k)), rate(b["baseline"].get(k))
                     if ratio is None else f"{b['baseline'][k]:.1f} ({ratio:.2f}x A)"])
    for name in dict.fromkeys([*a["workload"]["objectives"], *b["workload"]["objectives"]]):
        def best(s, name=name):
            x = s["best"].get(name)
            return "" if x is None else f"{x['value']:.3f} (trial {x['trial']}: {x['setting']})"
        rows.append([f"best {name}", best(a), best(b)])
    return rows


def write_compare_page(cmp: dict, output: str | Path) -> Path:
    """Write the comparison page to ``output`` (whole or not at all)."""
    from plotly.offline import get_plotlyjs

    e = html.escape
    a, b = _text(cmp["a"]["study"]), _text(cmp["b"]["study"])
    parts = ["<!doctype html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
             f"<title>tuner compare: {a} and {b}</title>", f"<style>{_CSS}</style>",
             f"<script>{get_plotlyjs()}</script>", "</head><body>", f"<h1>{a} (A) and {b} (B)</h1>"]
    for w in cmp["warnings"]:
        parts.append(f"<p class=\"model-time\">{_text(w)}</p>")
    parts.append("<section><h2>Side by side</h2>" + _table(["", "A", "B"], summary_rows(cmp)) + "</section>")
    for chart in compare_charts(cmp):
        parts.append(f"<section><h2>{e(chart.title)}</h2><div class=\"fig\" id=\"fig-{e(chart.key)}\"></div>")
        parts.append(f"<script type=\"application/json\" class=\"figure-data\" data-key=\"{e(chart.key)}\">"
                     f"{_script_safe(to_plotly(chart).to_json())}</script>")
        if chart.note:
            parts.append(f"<p class=\"note\">{e(chart.note)}</p>")
        parts.append("</section>")
    objectives = cmp["a"]["workload"]["objectives"]
    if cmp["common"]:
        rows = [[c["setting"], c["trial_a"], c["trial_b"], *c["values_a"], *c["values_b"],
                 *(c["ratio_b_over_a"] or [])] for c in cmp["common"]]
        ratio_cols = [f"B/A {o}" for o in objectives] if cmp["same_objectives"] else []
        parts.append("<section><h2>Settings measured in both</h2>" + _table(
            ["steps,topk,draft", "trial A", "trial B", *(f"A {o}" for o in objectives),
             *(f"B {o}" for o in cmp["b"]["workload"]["objectives"]), *ratio_cols], rows) + "</section>")
    parts.append(f"<script>{_DRAW_JS}</script></body></html>")
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(out, "\n".join(parts))
