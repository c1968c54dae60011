"""Charts of a study report (the front, concurrency curves, accept length), described once as data and drawn twice: plotly (HTML) and matplotlib (PNG).

A :class:`Chart` holds the numbers a reader sees (series of x/y points with hover labels), so the
report's tests check the data without parsing drawings, and the HTML and the PNG of one chart can
never disagree. Plotly PNG export needs kaleido and a Chrome; matplotlib draws PNGs with neither.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.study import objective_concurrency
from ..engine.records import StoredFigures, TrialRecord, merge_repeats
from ..sglang.home import home_folder
from .report_data import ReportData

_FRONT, _OTHER, _BASE = "#1f77b4", "#b0b0b0", "#d62728"


def _makeable(folder: Path) -> bool:
    """Whether this user can write in ``folder``, or make it: its nearest existing ancestor is a
    folder this user can write in and enter. Nothing is made."""
    while not folder.exists():
        if folder.parent == folder:
            return False
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def matplotlib_config_dir() -> str | None:
    """Give matplotlib a folder it can write (``MPLCONFIGDIR``: a private temporary one, removed when
    the process ends) when the ones it would use cannot be written (a read-only HOME, HOME unset for
    a user without a home), before matplotlib is first imported; the folder, or None when nothing
    was needed (matplotlib imported already, ``MPLCONFIGDIR`` set by the user, its folders writable).

    Without it matplotlib makes such a folder itself, and prints a warning of 2-3 lines on stderr at
    import ("mkdir -p failed ... Matplotlib created a temporary cache directory ... set the
    MPLCONFIGDIR environment variable"; QA, qa157: ``tuner study report --png`` with a read-only
    HOME). Its folders are mirrored from matplotlib/__init__.py (``get_configdir``, ``get_cachedir``,
    ``_get_xdg_config_dir``, ``_get_xdg_cache_dir``): ``$XDG_CONFIG_HOME`` (else ``~/.config``) and
    ``$XDG_CACHE_HOME`` (else ``~/.cache``), each ``/matplotlib``, on Linux and FreeBSD; ``~/.matplotlib``
    elsewhere."""
    if "matplotlib" in sys.modules or os.environ.get("MPLCONFIGDIR"):
        return None
    home = home_folder()  # None: HOME unset and no home in the password database

    def xdg(var: str, default: str) -> Path | None:
        base = os.environ.get(var) or (home and home / default)
        return None if not base else Path(base) / "matplotlib"

    if sys.platform.startswith(("linux", "freebsd")):
        folders = [xdg("XDG_CONFIG_HOME", ".config"), xdg("XDG_CACHE_HOME", ".cache")]
    else:
        folders = [home and home / ".matplotlib"]
    if all(f is not None and _makeable(f) for f in folders):
        return None
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="tuner-matplotlib-")  # mode 0700: no other user's matplotlibrc
    atexit.register(shutil.rmtree, folder, True)
    os.environ["MPLCONFIGDIR"] = folder
    return folder


# Here, not where matplotlib is drawn with: `tuner study report --png` imports matplotlib to check it
# is installed once this module is imported (tuner.cli.study_report), before any chart is drawn.
matplotlib_config_dir()


#: marker names (plotly's) -> matplotlib's
_MPL_MARKERS = {"circle": "o", "star": "*", "diamond": "D", "x": "x", "square": "s", "triangle-up": "^"}


@dataclass
class Series:
    """One named set of points. ``text`` labels each point (hover in HTML)."""

    name: str
    x: list[Any]
    y: list[float | None]
    mode: str = "markers"  #: plotly's: markers | lines | lines+markers
    text: list[str] | None = None
    marker: str = "circle"
    size: int = 8
    color: str | None = None
    dash: bool = False
    colors: list[str] | None = None  #: per point (the same setting has the same colour on every chart)
    step: bool = False  #: a step line (best so far): flat until the next point


@dataclass
class Panel:
    """One set of axes."""

    x_label: str
    y_label: str
    series: list[Series] = field(default_factory=list)
    log2_x: bool = False  #: concurrency axes: 1, 2, 4, ... evenly spaced
    hline: float | None = None  #: a dotted reference line (speedup 1 = the baseline)
    vline: float | None = None
    title: str = ""


@dataclass
class Chart:
    key: str  #: id in the HTML and the PNG file stem
    title: str
    panels: list[Panel]
    note: str = ""  #: a sentence shown under the chart in the HTML


def to_plotly(chart: Chart):
    """A plotly figure of ``chart`` (one subplot per panel)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = len(chart.panels)
    fig = make_subplots(rows=1, cols=n, subplot_titles=[p.title for p in chart.panels] if n > 1 else None,
                        horizontal_spacing=0.08 if n > 1 else 0.2)
    seen: set[str] = set()
    for col, panel in enumerate(chart.panels, start=1):
        for s in panel.series:
            line = {"dash": "dot"} if s.dash else {}
            if s.color:
                line["color"] = s.color
            if s.step:
                line["shape"] = "hv"
            marker_color = s.colors or s.color
            fig.add_trace(go.Scatter(
                x=list(s.x), y=list(s.y), mode=s.mode, name=s.name, text=s.text,
                hovertemplate="%{text}<br>x=%{x}<br>y=%{y:.3f}<extra>%{fullData.name}</extra>" if s.text else None,
                marker={"symbol": s.marker, "size": s.size, **({"color": marker_color} if marker_color else {})},
                line=line or None, legendgroup=s.name, showlegend=s.name not in seen,
            ), row=1, col=col)
            seen.add(s.name)
        fig.update_xaxes(title_text=panel.x_label, row=1, col=col,
                         **({"type": "log", "dtick": 0.30102999566} if panel.log2_x else {}))
        fig.update_yaxes(title_text=panel.y_label, row=1, col=col)
        if panel.hline is not None:
            fig.add_hline(y=panel.hline, line_dash="dot", line_color="grey", row=1, col=col)
        if panel.vline is not None:
            fig.add_vline(x=panel.vline, line_dash="dot", line_color="grey", row=1, col=col)
    fig.update_layout(title_text=chart.title, template="plotly_white", height=460,
                      margin={"l": 60, "r": 20, "t": 70, "b": 60})
    return fig


def to_png(chart: Chart, path: Path) -> Path:
    """Draw ``chart`` with matplotlib (no display, no browser) into ``path``."""
    from matplotlib.figure import Figure

    n = len(chart.panels)
    fig = Figure(figsize=(6.5 * n if n > 1 else 8, 5), layout="constrained")
    axes = fig.subplots(1, n, squeeze=False)[0]
    for ax, panel in zip(axes, chart.panels):
        for s in panel.series:
            colors = s.colors or [s.color] * len(s.x)
            pts = [(x, y, c) for x, y, c in zip(s.x, s.y, colors) if y is not None]
            if not pts:
                continue
            xs, ys, cs = zip(*pts)
            style = {"color": s.color} if s.color else {}
            marker = _MPL_MARKERS.get(s.marker, "o")
            if "lines" in s.mode:
                ax.plot(xs, ys, linestyle=":" if s.dash else "-", marker=marker if "markers" in s.mode and not s.colors
                        else None, label=s.name, drawstyle="steps-post" if s.step else "default", **style)
                if s.colors and "markers" in s.mode:
                    ax.scatter(xs, ys, marker=marker, s=s.size ** 2, c=list(cs), zorder=3)
            else:
                ax.scatter(xs, ys, marker=marker, s=s.size ** 2, label=s.name,
                           **({"c": list(cs)} if s.colors else style))
        if panel.log2_x:
            from matplotlib.ticker import NullFormatter, ScalarFormatter

            ax.set_xscale("log", base=2)
            ticks = sorted({x for s in panel.series for x in s.x})
            ax.set_xticks(ticks)
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.xaxis.set_minor_formatter(NullFormatter())
        if panel.hline is not None:
            ax.axhline(panel.hline, color="grey", linestyle=":", linewidth=1)
        if panel.vline is not None:
            ax.axvline(panel.vline, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel(panel.x_label)
        ax.set_ylabel(panel.y_label)
        if panel.title:
            ax.set_title(panel.title, fontsize=10)
        ax.grid(True, alpha=0.3)
    if any(ax.get_legend_handles_labels()[0] for ax in axes):
        axes[-1].legend(fontsize=8, loc="best")
    fig.suptitle(chart.title)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


# --------------------------------------------------------------------------------------------------
# The report's charts: what each shows, from ReportData


#: One colour per front setting, the same on every chart (the front's order: by the first objective).
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#393b79", "#ad494a", "#637939", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1"]


def setting_colors(data: ReportData) -> dict[str, str]:
    """Effective setting key -> colour: the front's settings get the palette, in front order; every
    other setting is grey, on every chart."""
    return {r.attrs.get("effective_key"): PALETTE[i % len(PALETTE)] for i, r in enumerate(data.front)}


def color_of(r: TrialRecord, colors: dict[str, str]) -> str:
    return colors.get(r.attrs.get("effective_key"), _OTHER)


def label(spec) -> str:
    return "?" if spec is None else f"steps={spec.num_steps} topk={spec.eagle_topk} draft={spec.num_draft_tokens}"


def _trial_text(r: TrialRecord) -> str:
    return f"trial {r.number}: {label(r.effective)}"


def objective_label(name: str, data: ReportData) -> str:
    c = objective_concurrency(name)
    where = "single request" if c is None else f"C={c}"
    if "speedup" in name:
        return f"speedup over baseline, {where} (x)"
    return data.tps_label(f"tok/s, {where}")


def _baseline_point(name: str, base: StoredFigures | None) -> float | None:
    """Where the baseline stands on objective ``name``; None with no baseline measured (the chart
    drew a baseline star at (1, 1) on a study whose baseline had failed: QA, qa199)."""
    from ..engine.objectives import figure

    if base is None:
        return None
    return 1.0 if "speedup" in name else figure(name, base)


def pareto_chart(data: ReportData) -> Chart | None:
    """Objective 1 against objective 2: every feasible measurement, the front, baseline, picks; None
    with fewer than two objectives, or no front yet (no feasible measurement: the page says so, see
    :func:`tuner.results.report.optuna_plots`; QA, qa199: a study with nothing measured, or every trial
    failed, got an empty chart, "0 of 0 measured configs are on the front")."""
    if len(data.objectives) < 2 or not data.front:
        return None
    x_name, y_name = data.objectives[:2]
    colors = setting_colors(data)
    front_nums = {r.number for r in data.front}
    # a setting measured more than once at the mean of its readings, as on the front: its first
    # reading alone may lie beyond the front it no longer belongs to
    others = [r for r in merge_repeats(data.records) if r.number not in front_nums]
    series = [
        Series("measured", [r.values[0] for r in others], [r.values[1] for r in others],
               text=[_trial_text(r) for r in others], color=_OTHER),
        Series("Pareto front", [r.values[0] for r in data.front], [r.values[1] for r in data.front],
               mode="lines+markers", text=[_trial_text(r) for r in data.front], color=_FRONT, size=10,
               colors=[color_of(r, colors) for r in data.front]),
    ]
    bx, by = _baseline_point(x_name, data.baseline), _baseline_point(y_name, data.baseline)
    if bx is not None and by is not None:
        series.append(Series("baseline (autoregressive)", [bx], [by], text=["baseline: no speculative decoding"],
                             marker="star", size=16, color=_BASE))
    for p in data.picks:
        series.append(Series(f"pick: {p.name} (trial {p.record.number})", [p.record.values[0]], [p.record.values[1]],
                             text=[f"{p.name}: {_trial_text(p.record)} ({p.why})"], marker="diamond", size=14))
    panel = Panel(objective_label(x_name, data), objective_label(y_name, data), series,
                  hline=1.0 if "speedup" in y_name else None, vline=1.0 if "speedup" in x_name else None)
    return Chart("pareto", f"Pareto front: {x_name} against {y_name}", [panel],
                 note=f"{len(data.front)} of {len(data.measured)} measured configs are on the front."
                 + (f" {data.picks_note}." if data.picks_note else ""))


def concurrencies(data: ReportData) -> list[int]:
    cs: set[int] = set(data.baseline.tok_per_s) if data.baseline else set()
    for r in data.front:
        cs.update(r.figures.tok_per_s)
    return sorted(cs)


def throughput_charts(data: ReportData) -> list[Chart]:
    """Aggregate tok/s and speedup against concurrency for the front's configs and the baseline."""
    cs = concurrencies(data)
    if not cs:
        return []
    tps, speed = [], []
    if data.baseline:
        tps.append(Series("baseline (autoregressive)", cs, [data.baseline.tok_per_s.get(c) for c in cs],
                          mode="lines+markers", color=_BASE, dash=True, marker="star", size=10,
                          text=[f"baseline C={c}" for c in cs]))
    colors = setting_colors(data)
    for r in data.front:
        f = r.figures
        name = f"trial {r.number}: {label(r.effective)}"
        tps.append(Series(name, cs, [f.tok_per_s.get(c) for c in cs], mode="lines+markers",
                          text=[f"{name}, C={c}" for c in cs], color=color_of(r, colors)))
        if data.baseline:
            ratio = [f.tok_per_s[c] / data.baseline.tok_per_s[c]
                     if f.tok_per_s.get(c) and data.baseline.tok_per_s.get(c) else None for c in cs]
            speed.append(Series(name, cs, ratio, mode="lines+markers", text=[f"{name}, C={c}" for c in cs],
                                color=color_of(r, colors)))
    out = [Chart("throughput", "Aggregate throughput against concurrency (front configs and baseline)",
                 [Panel("concurrency (requests in flight)", data.tps_label("aggregate tok/s"), tps, log2_x=True)],
                 note="Total completion tokens over the sweep's wall time at each concurrency "
                      "(the article's table, as curves).")]
    if speed:
        out.append(Chart("speedup", "Speedup over the baseline against concurrency (front configs)",
                         [Panel("concurrency (requests in flight)", "speedup over baseline (x)", speed,
                                log2_x=True, hline=1.0)],
                         note="Below the dotted line speculative decoding is slower than no speculation."))
    return out


def accept_length_chart(data: ReportData) -> Chart | None:
    """Mean accept length of every measured config against each of the three flags."""
    rows = [r for r in data.measured if r.attrs.get("accept_length") is not None and r.effective is not None]
    if not rows:
        return None
    y = [r.attrs["accept_length"] for r in rows]
    text = [_trial_text(r) for r in rows]
    colors = setting_colors(data)
    point_colors = [color_of(r, colors) for r in rows]
    panels = [Panel(f"{flag} (effective)", "accept length (tokens per verify step)" if i == 0 else "",
                    [Series("measured configs", [getattr(r.effective, attr) for r in rows], y, text=text,
                            color=_FRONT, colors=point_colors)], title=flag)
              for i, (flag, attr) in enumerate((("num_steps", "num_steps"), ("eagle_topk", "eagle_topk"),
                                                ("num_draft_tokens", "num_draft_tokens")))]
    return Chart("accept_length", "Accept length against the speculative flags", panels,
                 note="Tokens emitted per verify step per request, bonus token included (1 = nothing accepted).")


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name).strip("_")


def history_charts(data: ReportData) -> list[Chart]:
    """Per objective: every feasible measurement at its real trial number (the number `tuner study
    export --pick N` takes), coloured by setting, and the best so far as a step line; then the
    front's hypervolume after each measurement. Failed, invalid and reused trials leave gaps in
    the numbers (they are in the failure table and in status)."""
    from ..engine.objectives import hypervolume

    rows = [r for r in data.measured if r.values is not None]
    if not rows:
        return []
    colors = setting_colors(data)
    text = [_trial_text(r) for r in rows]
    numbers = [r.number for r in rows]
    out = []
    for i, name in enumerate(data.objectives):
        values = [r.values[i] for r in rows]
        best, best_so_far = None, []
        for v in values:
            best = v if best is None or v > best else best
            best_so_far.append(best)
        series = [Series("measured", numbers, values, text=text, colors=[color_of(r, colors) for r in rows],
                         color=_OTHER),
                  Series("best so far", numbers, best_so_far, mode="lines", color=_BASE, step=True,
                         text=[f"best so far after trial {n}" for n in numbers])]
        out.append(Chart(f"history_{_slug(name)}", f"Optimization history: {name}",
                         [Panel("trial number", objective_label(name, data), series)],
                         note="Feasible measurements at their trial numbers (gaps: failed, invalid or reused "
                              "trials), and the best so far."))
    if len(data.objectives) >= 2:
        ref = [0.0] * len(data.objectives)
        hv = [hypervolume([r.values for r in rows[:k + 1]], ref) for k in range(len(rows))]
        out.append(Chart("hypervolume", "Hypervolume of the front over trials",
                         [Panel("trial number", "hypervolume above (0, ..., 0)",
                                [Series("hypervolume", numbers, hv, mode="lines+markers", step=True, color=_FRONT,
                                        text=[f"after {t}" for t in text])])],
                         note="The area the front dominates above (0, 0): it grows when a trial moves the front."))
    return out


def build_charts(data: ReportData) -> list[Chart]:
    """The report's own charts (the front, concurrency curves, accept length, history,
    hypervolume), in page order."""
    charts = [pareto_chart(data), *throughput_charts(data), accept_length_chart(data), *history_charts(data)]
    return [c for c in charts if c is not None]
