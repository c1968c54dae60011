"""``tuner study report``: one self-contained HTML page (and optional PNGs) of a study. Reads storage only.

What the page shows, in order: the baseline and the Pareto front as tables; the front (objective 1
against objective 2) with the baseline and the export picks marked; throughput and speedup against
concurrency for the front's configs and the baseline (the article's table as curves); accept length
against steps, topk and draft tokens; Optuna's optimization history and parameter importances; the
failed, invalid and unreadable trials by class with their log tails.

The page opens with no network: plotly.js is embedded once, each figure is a JSON block drawn by a
few lines of script. On the simulator every figure is in model time (the time of the GPU server it
plays), and the page says so.

Why one module of over 400 lines: the page's sections are the HTML of one :class:`ReportData`, and
writing the page with its PNGs is one all-or-nothing step over the same figures (:func:`write_report`);
the data, the charts and the traffic section already live in report_data, report_plots and
report_traffic.
"""

from __future__ import annotations

import html
import os
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..config.files import _host, write_text_atomic, written_through
from ..config.names import shown
from ..config.wording import counted
from ..engine.records import MEASURED, PRUNED, REUSED, UNREADABLE, UNREADABLE_ATTR, TrialRecord, counts_text
from ..engine.stored_trials import UnbuiltTrial, stored_trials
from ..engine.trial import ABANDONED
from .report_data import ReportData, load_report_data
from .status import ended_note, successors
from .report_plots import build_charts, concurrencies, label, to_plotly, to_png
from .report_traffic import traffic_html

# --------------------------------------------------------------------------------------------------
# Optuna's own plots, over the feasible measurements only


@dataclass
class OptunaPlot:
    """A plot from ``optuna.visualization`` (HTML) and ``optuna.visualization.matplotlib`` (PNG)."""

    key: str
    title: str
    function: str  #: the function's name, the same in both modules
    kwargs: dict
    note: str = ""


def measured_study(data: ReportData):
    """An in-memory copy of the study in which only the feasible measured (and reused) trials are
    COMPLETE; every other trial is there as FAIL, so each trial keeps its own number.

    Failed and invalid trials carry worst-case values (0) for the sampler's sake; plotted, they
    would flatten every axis. They have their own table instead.

    The copies keep no user or system attributes: no plot drawn from it reads them, and Optuna's
    importance plot deep-copies every trial of the study three times per objective
    (``optuna/visualization/_param_importances.py``, ``_get_distribution`` reads ``study.trials``),
    each with its stored figures, stages and config (QA, qa177: 10,000 trials spent 11 s of CPU
    drawing the page, most of it in those copies).
    """
    import copy as _copy
    from datetime import datetime

    import optuna
    from optuna.trial import TrialState

    keep = {r.number for r in data.records if r.status in (MEASURED, REUSED) and r.feasible}
    mem = optuna.create_study(directions=data.study.directions, storage=optuna.storages.InMemoryStorage(),
                              study_name=data.study_name)
    for t in stored_trials(data.study):  # in number order: the copy numbers them the same
        if isinstance(t, UnbuiltTrial):  # values Optuna cannot read: a failed trial in the copy
            t = optuna.trial.create_trial(state=TrialState.FAIL)
        else:
            t = _copy.copy(t)  # the stored trial's own params and distributions, which no plot changes
            t.user_attrs, t.system_attrs = {}, {}
            if t.number not in keep:
                t.state, t.values = TrialState.FAIL, None
                t.datetime_start = t.datetime_start or datetime.now()
                t.datetime_complete = t.datetime_complete or datetime.now()
        mem.add_trial(t)
    return mem


#: fewer measurements than this and parameter importances mean nothing
MIN_TRIALS_FOR_IMPORTANCE = 4


def optuna_plots(data: ReportData) -> tuple[list[OptunaPlot], list[str]]:
    """The history and importance plots that apply, and notes for the ones that do not."""
    measured = sum(1 for r in data.records if r.status in (MEASURED, REUSED))
    n = sum(1 for r in data.records if r.status in (MEASURED, REUSED) and r.feasible)
    notes: list[str] = []
    if n == 0:
        what = ("The Pareto front, optimization history and parameter importances" if len(data.objectives) >= 2
                else "Optimization history and parameter importances")
        # measured trials that all break the study's limits are measured, not missing (QA, qa199)
        why = (f"no feasible measured trial yet (every measured trial, {measured}, is infeasible: see Traffic "
               "and limits)" if measured else "no measured trial yet")
        return [], [f"{what}: {why}."]
    plots = []  # history and hypervolume are the report's own charts (report_plots.history_charts)
    if n < MIN_TRIALS_FOR_IMPORTANCE:
        # feasible ones: the summary counts every measured trial ("has 1" beside "3 measured" reads wrong)
        others = f" (of {measured} measured: the others are infeasible)" if measured > n else ""
        notes.append(f"Parameter importances need at least {MIN_TRIALS_FOR_IMPORTANCE} feasible measured "
                     f"trials; this study has {n}{others}.")
    else:
        feasible = [r for r in data.records if r.status in (MEASURED, REUSED) and r.feasible]
        for i, name in enumerate(data.objectives):
            tied = {r.values[i] for r in feasible if r.values is not None and i < len(r.values)}
            if len(tied) == 1:
                # PED-ANOVA (optuna/importance/_ped_anova/evaluator.py) then selects every trial as the
                # top quantile and draws equal bars, with a UserWarning on stderr per plot (QA, qa177:
                # four "Target and region quantiles select the same set of trials" warnings, HTML and
                # PNG, and a chart ranking nothing)
                notes.append(f"Parameter importances for {name}: every feasible measured trial has the "
                             f"same {name} ({_fmt(next(iter(tied)))}), so no flag can be ranked by it.")
                continue
            plots.append(OptunaPlot(f"importance_{_slug(name)}", f"Parameter importances for {name}",
                                    "plot_param_importances", {"target": (lambda t, i=i: -t.values[i]),
                                                               "target_name": name},
                                    note="Optuna's PED-ANOVA over the requested flag values: which flag decides whether "
                                         f"{name} is high (the objective is negated for it, as it ranks low values)."))
    return plots, notes


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in name).strip("_")


def _optuna_call(module, plot: OptunaPlot, study):
    from optuna.exceptions import ExperimentalWarning

    with warnings.catch_warnings():
        # Optuna marks its matplotlib plots and some arguments experimental; that is not news to a reader.
        warnings.simplefilter("ignore", ExperimentalWarning)
        # PED-ANOVA warns whenever a target is given that it ranks low values; ours are negated for it.
        warnings.filterwarnings("ignore", message="PedAnovaImportanceEvaluator computes the importances",
                                category=UserWarning)
        return getattr(module, plot.function)(study, **plot.kwargs)


# --------------------------------------------------------------------------------------------------
# The page


@dataclass
class Rendered:
    """A figure ready for the page: its plotly JSON, or why it could not be drawn."""

    key: str
    title: str
    note: str
    figure_json: str | None
    error: str | None = None


@dataclass
class ReportFiles:
    html: Path
    pngs: list[Path]


def _drawn_optuna_plots(module, data: ReportData, mstudy=None):
    """``(plot, figure or None, error or None)`` for each Optuna plot that applies, drawn by ``module``
    (``optuna.visualization`` or its ``matplotlib``)."""
    plots, _ = optuna_plots(data)
    if plots:
        mstudy = mstudy or measured_study(data)
    for p in plots:
        try:
            yield p, _optuna_call(module, p, mstudy), None
        except Exception as exc:  # noqa: BLE001 - a diagnostic plot must not sink the whole report
            yield p, None, f"{type(exc).__name__}: {exc}"


def render_figures(data: ReportData, mstudy=None) -> tuple[list[Rendered], list[str]]:
    """Every figure of the report as plotly JSON, in page order, plus notes on plots left out."""
    import optuna.visualization as ov

    out = [Rendered(c.key, c.title, c.note, to_plotly(c).to_json()) for c in build_charts(data)]
    for p, fig, error in _drawn_optuna_plots(ov, data, mstudy):
        if fig is not None:
            fig.update_layout(title_text=p.title)
        out.append(Rendered(p.key, p.title, p.note, None if fig is None else fig.to_json(), error))
    return out, optuna_plots(data)[1]


def write_pngs(data: ReportData, directory: Path, mstudy=None) -> list[Path]:
    """Every chart as a PNG in ``directory`` (matplotlib; no browser needed). Returns the files.

    A plot Optuna cannot draw is left out, as on the page (which says why).
    """
    import matplotlib

    matplotlib.use("Agg")  # no display: before Optuna's matplotlib plots import pyplot
    import matplotlib.pyplot as plt
    import optuna.visualization.matplotlib as om

    directory.mkdir(parents=True, exist_ok=True)
    files = [to_png(c, directory / f"{c.key}.png") for c in build_charts(data)]
    for p, ax, _ in _drawn_optuna_plots(om, data, mstudy):
        if ax is None:
            continue
        fig = getattr(ax, "figure", None) or ax.flat[0].figure
        fig.suptitle(p.title)
        path = directory / f"{p.key}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        files.append(path)
    return files


def render_html(data: ReportData, figures: list[Rendered], notes: list[str]) -> str:
    """The whole page as one string: plotly.js inline, no external reference."""
    from plotly.offline import get_plotlyjs

    from .. import __version__

    e = html.escape
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "<!doctype html>", "<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>tuner report: {_text(data.study_name)}</title>", f"<style>{_CSS}</style>",
        f"<script>{get_plotlyjs()}</script>", "</head><body>",
        f"<h1>Study {_text(data.study_name)}</h1>",
        f"<p class=\"meta\">objectives: {e(', '.join(data.objectives))} &middot; server: {e(data.backend)} "
        f"&middot; generated {now} by tuner {e(__version__)}</p>",
    ]
    if data.time_note:
        parts.append(f"<p class=\"model-time\">{e(data.time_note)}</p>")
    parts += _summary_html(data)
    parts += traffic_html(data, _table)
    for fig in figures:
        parts.append(f"<section><h2>{e(fig.title)}</h2>")
        if fig.figure_json is None:
            parts.append(f"<p class=\"missing\">Not drawn: {e(fig.error or '')}</p>")
        else:
            parts.append(f"<div class=\"fig\" id=\"fig-{e(fig.key)}\"></div>")
            parts.append(f"<script type=\"application/json\" class=\"figure-data\" data-key=\"{e(fig.key)}\">"
                         f"{_script_safe(fig.figure_json)}</script>")
        if fig.note:
            parts.append(f"<p class=\"note\">{e(fig.note)}</p>")
        parts.append("</section>")
    for n in notes:
        parts.append(f"<p class=\"missing\">{e(n)}</p>")
    parts += _pruned_html(data)
    parts += _failures_html(data)
    parts.append(f"<script>{_DRAW_JS}</script></body></html>")
    return "\n".join(parts)


def write_report(study, output: str | Path, png_dir: str | Path | None = None) -> ReportFiles:
    """Write the HTML report of ``study`` to ``output`` and every chart as a PNG into ``png_dir``,
    all or nothing: the charts are drawn into a temporary folder inside ``png_dir`` first, and a
    chart's name taken there by a folder is a :class:`ConfigError` naming it (``--png``) before the
    page or any chart is written (QA: IsADirectoryError's traceback after the page and half the
    charts were written). Then the page (atomically) and the charts (each renamed into place)."""
    import os
    import tempfile

    from ..config.yamlfile import ConfigError

    check_page_beside_pngs(output, png_dir)
    data = load_report_data(study)
    mstudy = measured_study(data) if data.records else None
    figures, notes = render_figures(data, mstudy)
    page = render_html(data, figures, notes)
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    if png_dir is None:
        write_text_atomic(out, page)
        return ReportFiles(out, [])
    directory = Path(png_dir)
    made = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    _clean_stale_charts(directory)
    try:
        with tempfile.TemporaryDirectory(prefix=f"{_charts_prefix()}{os.getpid()}-", dir=directory) as tmp:
            try:
                drawn = write_pngs(data, Path(tmp), mstudy)
            except OSError as exc:
                if exc.filename is not None:
                    raise
                # Pillow closing a PNG on a full disk names no file (QA, qa96: `report --png DIR`
                # said "error: cannot write: No space left on device"): the folder it is for, then
                raise OSError(exc.errno, exc.strerror, str(directory)) from None
            pngs = [directory / p.name for p in drawn]
            for path in pngs:
                if _where(path) == _page_lands(out):  # the chart would be renamed over the page just written
                    raise ConfigError("-o", str(output), f"is the chart {path.name} the report writes into --png "
                                      f"{png_dir}; give the page another name or folder")
                if path.is_dir():
                    raise ConfigError("--png", str(path), "is a folder, where the report writes its chart of "
                                      "that name; move it away or choose another --png folder")
            write_text_atomic(out, page)
            for src, dst in zip(drawn, pngs):
                os.replace(src, dst)
    except BaseException:
        if made and not any(directory.iterdir()):
            directory.rmdir()  # made for this report: nothing of it stays
        raise
    return ReportFiles(out, pngs)


def _charts_prefix() -> str:
    """The start of the name of the folder a report draws its charts into, inside ``--png``:
    ``.tuner-report-HOST-PID-XXXXXXXX``, as tuner.config.files names its temporary files."""
    return f".tuner-report-{_host()}-"


def _clean_stale_charts(directory: Path) -> None:
    """Remove the chart folders that reports of this host killed while drawing (SIGTERM, SIGKILL:
    no ``finally`` runs) left in ``directory``; a live report's (its pid runs) and another host's
    are never touched (QA, qa177: ``kill`` during ``report --png DIR`` left a hidden
    ``.tuner-report-*`` folder of half-drawn charts in DIR for good)."""
    import re
    import shutil

    from ..config.files import _alive

    pattern = re.compile(re.escape(_charts_prefix()) + r"(\d+)-[^/]*")
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        m = pattern.fullmatch(name)
        if m and not _alive(int(m.group(1))) and not (directory / name).is_symlink():
            shutil.rmtree(directory / name, ignore_errors=True)


def _where(path: Path) -> Path:
    """Where renaming a file into ``path`` lands: its folder resolved (a link to a folder is that
    folder), its own name kept (a chart replaces a link of that name, not its target)."""
    return Path(os.path.realpath(path.parent)) / path.name


def _page_lands(output: str | Path) -> Path:
    """Where the page lands: written through a link of its name (:func:`tuner.config.files.
    written_through`), so a link to a chart is that chart (QA: ``-o page.html``, a link to
    ``pp/pareto.png``, wrote the page there and the chart was renamed over it)."""
    return _where(written_through(output))


def check_page_beside_pngs(output: str | Path, png_dir: str | Path | None) -> None:
    """:class:`ConfigError` (``-o``) for a page named as the ``--png`` folder itself (QA: `report -o
    same --png same` made the folder, then ended in IsADirectoryError's traceback). A page named as
    one of the charts is refused by :func:`write_report` once the charts' names are known."""
    from ..config.yamlfile import ConfigError

    if png_dir is not None and _page_lands(output) == _where(Path(png_dir)):
        raise ConfigError("-o", str(output), f"is the --png folder {png_dir}; give the page a file name of its own")


def _script_safe(text: str) -> str:
    # JSON inside <script>: "<" as \u003c keeps "</script>" in a log line or label from ending the block.
    return text.replace("<", "\\u003c")


def _text(value: Any) -> str:
    """Stored text (a study's name, a dataset's category or path, a failure class: from users, servers
    and hand edits) as the page shows it: :func:`tuner.config.names.shown` first, as status prints
    it (a U+202E would reverse the rest of its cell in the browser; a lone surrogate, which JSON
    stores, no UTF-8 page can hold: QA, qa177, UnicodeEncodeError's traceback and no page), then
    escaped for HTML."""
    return html.escape(shown(value))


def _table(headers: list[str], rows: list[list[Any]], cls: str = "") -> str:
    head = "".join(f"<th>{_text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c if isinstance(c, _Raw) else _text(_fmt(c))}</td>" for c in row)
                   + "</tr>" for row in rows)
    return f"<table class=\"{cls}\"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class _Raw(str):
    """Table cell content that is already HTML."""


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def measured_text(data: ReportData) -> str:
    """The summary's count of the measured trials, in the terms of the tables below it, so that the
    numbers add up: without limits broken, the distinct settings measured; otherwise the measured
    trials split into those that meet the study's limits (with their distinct settings, the pool of
    the front) and those that break them (the rows marked under Traffic and limits)."""
    measured = [r for r in data.records if r.status == MEASURED]
    breaking = [r for r in measured if not r.feasible]
    front = f"on the Pareto front: {len(data.front)}"
    if not breaking:
        return f"Measured configs: {len(data.measured)}; {front}."
    meeting = len(measured) - len(breaking)
    # a count of one in the singular (QA: "1 meet the study's limits (1 distinct settings)")
    meet, breaks = ("meets" if meeting == 1 else "meet"), ("breaks" if len(breaking) == 1 else "break")
    return (f"Of the {len(measured)} measured, {meeting} {meet} the study's limits "
            f"({counted(len(data.measured), 'distinct setting')}) and {len(breaking)} {breaks} them "
            f"(marked under Traffic and limits); {front}.")


def _summary_html(data: ReportData) -> list[str]:
    out = ["<section><h2>Summary</h2>",
           "<p>Trials: " + (html.escape(counts_text(data.records)) or "none yet")
           + f". {html.escape(measured_text(data))}</p>"]
    cs = concurrencies(data)
    if data.baseline:
        b = data.baseline
        out.append(f"<h3>Baseline (no speculative decoding), {html.escape(data.tps_label())}</h3>")
        out.append(_table(["single request"] + [f"C={c}" for c in cs] + ["accept length"],
                          [[b.single_tok_per_s] + [b.tok_per_s.get(c) for c in cs] + [b.accept_length]]))
        why = data.baseline_attrs.get("remeasured_for")  # tuner.engine.suspect: it replaced the one before
        if isinstance(why, str) and why:
            out.append(f"<p>Measured again: {_text(why)}.</p>")
    elif data.baseline_problem:
        # as status says it (QA, qa199: a baseline whose launch failed read "not measured yet", and its
        # failure was nowhere on the page); the message quotes a server's log: shown, then escaped
        out.append(f"<p class=\"missing\">The baseline: {_text(data.baseline_problem)}; the next "
                   "<code>tuner study run</code> measures it again.</p>")
    else:
        out.append("<p class=\"missing\">The baseline has not been measured yet.</p>")
    if data.front:
        pick_names = {}
        for p in data.picks:
            pick_names.setdefault(p.record.number, []).append(p.name)
        rows = []
        for r in data.front:
            f = r.figures
            e = r.effective
            rows.append([r.number, e.num_steps, e.eagle_topk, e.num_draft_tokens, *r.values,
                         f.single_tok_per_s, *[f.tok_per_s.get(c) for c in cs], r.attrs.get("accept_length"),
                         ", ".join(pick_names.get(r.number, []))])
        out.append(f"<h3>Pareto front ({html.escape(data.tps_label())} for throughput columns)</h3>")
        out.append(_table(["trial", "steps", "topk", "draft", *data.objectives, "single tok/s",
                           *[f"tok/s C={c}" for c in cs], "accept length", "pick"], rows, "front"))
        out += [f"<p class=\"missing\">Warning: {_text(w)}.</p>" for w in losing_picks(data)]
    out.append("</section>")
    return out


def losing_picks(data: ReportData) -> list[str]:
    """The warnings ``tuner study export`` gives each pick the page marks that loses to the
    autoregressive baseline (:func:`tuner.results.losing_pick.slower_than_baseline`: on every
    objective, or on the one its pick maximizes), each once (QA, qa199: on a study every setting of
    which was slower than the baseline the page marked its best ``single, throughput, knee`` with no
    word, while ``export --pick knee`` warned "serving without speculative decoding would be faster")."""
    from types import SimpleNamespace

    from .losing_pick import slower_than_baseline

    config = SimpleNamespace(objectives=data.objectives)
    out: list[str] = []
    for p in data.picks:
        # judged on the confirmation's intervals where it measured the pick twice or more, as export does
        confirmed = None if data.confirmation is None else data.confirmation.candidate(p.record.number)
        confirmed = confirmed if confirmed is not None and confirmed.rounds >= 2 else None
        out += [w for w in slower_than_baseline(config, p.record, p.name, confirmed) if w not in out]
    return out


def _pruned_html(data: ReportData) -> list[str]:
    """Trials stopped once their partial figures were dominated: never results, listed apart."""
    from .status import pruned_fields, pruned_note

    pruned = [r for r in data.records if r.status == PRUNED]
    if not pruned:
        return []
    out = ["<section><h2>Pruned trials</h2><p class=\"note\">Stopped once their partial figures, with the "
           "measured noise, were dominated by the front on every objective: the estimates are Optuna "
           "intermediate values, never results, never on the front or exported.</p>"]
    rows = []
    for r in pruned:
        f = pruned_fields(r)
        est = " / ".join(f"{v:.3f}" for v in f["partial_values"] or [])
        rows.append([r.number, label(r.effective) if r.effective else "", pruned_note(f), est,
                     r.attrs.get("model_duration_s", r.duration_s)])
    out.append(_table(["trial", "setting", "why", f"partial {' / '.join(data.objectives)}",
                       "seconds spent" + (" (modelled)" if data.backend == "model" else "")], rows, "pruned"))
    out.append("</section>")
    return out


def failure_class(r: TrialRecord) -> str:
    """The class a failed trial is listed under (``interrupted`` for trials a dead worker left behind,
    ``unreadable`` for those whose stored attributes cannot be trusted: why is their message;
    ``abandoned`` for those that stepped back before their launch, as status names them: QA, qa199,
    two workers' study listed its five abandoned trials as ``interrupted``, with no message, under a
    summary counting "5 abandoned")."""
    if r.status in (UNREADABLE, ABANDONED):
        return r.status
    return r.failure_class or ("interrupted" if r.state == "FAIL" else "unknown")


def _failure_message(r: TrialRecord) -> str:
    if r.status == ABANDONED:
        return _abandoned_note(r)
    return r.attrs.get("failure_message") or r.attrs.get("sglang_error") or r.attrs.get(UNREADABLE_ATTR) or ""


def _abandoned_note(r: TrialRecord) -> str:
    """Why a trial stepped back unlaunched, from what tuner.engine.trial (``TrialRunner._reuse_or_claim``,
    ``_abandon``) stored: ``stepped_aside`` when another worker was measuring the setting the sampler
    proposed; else the study's last launch was taken by another worker."""
    if r.attrs.get("stepped_aside"):
        return ("nothing launched: another worker was measuring this setting, so this trial stepped aside "
                "and the sampler was asked again")
    return ("nothing launched: another worker's launch took the study's last budget slot; a queued setting "
            "went back to the queue")


def _failures_html(data: ReportData) -> list[str]:
    out = ["<section><h2>Failed, invalid and unreadable trials</h2>"]
    if not data.failures:
        out.append("<p>None.</p></section>")
        return out
    by_class: dict[str, list[TrialRecord]] = {}
    for r in data.failures:
        by_class.setdefault(failure_class(r), []).append(r)
    out.append(_table(["class", "trials", "numbers"],
                      [[c, len(rs), ", ".join(str(r.number) for r in rs)] for c, rs in sorted(by_class.items())],
                      "failure-classes"))
    rows = []
    later = successors(data.records)  # read once: ended_note per failure searched every trial (QA)
    for c, rs in sorted(by_class.items()):
        for r in rs:
            # A message quotes a server's log line or HTTP error body, and the log tail is the log's
            # own text: shown as tuner.config.names.shown writes it (an ESC, a U+202E that would
            # reverse the cell's text in the browser, as on a terminal), the tail line by line
            tail = [shown(line) for line in str(r.attrs.get("log_tail") or "").splitlines()]
            tail_html = _Raw(f"<details><summary>{counted(len(tail), 'line')}</summary>"
                             f"<pre>{html.escape(chr(10).join(tail))}</pre></details>") if tail else ""
            message = shown(_failure_message(r) or ended_note(r, data.records, later) or "")
            rows.append([r.number, c, label(r.requested), label(r.effective) if r.effective else "", message,
                         shown(r.attrs.get("log_path") or ""), tail_html])
    out.append(_table(["trial", "class", "requested", "effective", "message", "log", "log tail"], rows, "failures"))
    out.append("</section>")
    return out


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;padding:0 1em;color:#222}
h1{margin-bottom:.2em} .meta{color:#666;margin-top:0}
.model-time{background:#fff6d5;border-left:4px solid #e0b000;padding:.5em 1em}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.9em}
th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4} .fig{min-height:460px} .note{color:#555;font-size:.9em}
.missing{color:#a00} pre{max-height:24em;overflow:auto;background:#f8f8f8;padding:.5em;font-size:.85em}
"""

# Draw every embedded figure; no network, no template engine.
_DRAW_JS = """
document.querySelectorAll('script.figure-data').forEach(function (el) {
  var fig = JSON.parse(el.textContent);
  Plotly.newPlot('fig-' + el.dataset.key, fig.data, fig.layout, {displaylogo: false, responsive: true});
});
"""
