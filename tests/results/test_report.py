"""`tuner study report`: a study on the simulator's performance model, rendered, and its figures read back.

The study is real (Optuna SQLite storage, the study engine, the performance model through
ModelBackend); one setting fails like an out-of-memory launch so the failure table has a log tail.
"""

import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.prepared_once import prepared_once

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import Measurement, ModelBackend
from tuner.engine.baseline import find_baseline
from tuner.engine.records import load_records
from tuner.engine.runner import run_study
from tuner.engine.study import config_from_study, create_study, open_study
from tuner.results.pareto import picks as export_picks
from tuner.results.report import build_charts, write_report
from tuner.results.report_data import load_report_data
from tuner.server.procs import terminate_group

ROOT = Path(__file__).resolve().parents[2]
OOM_TAIL = "loading weights\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static. </pre><b>x</b>"


class OomAboveBackend:
    """The performance model, except that settings with many draft tokens fail like an OOM launch."""

    def __init__(self, model: ModelBackend, max_draft_tokens: int):
        self.model, self.max_draft_tokens = model, max_draft_tokens

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        if spec is not None and spec.num_draft_tokens > self.max_draft_tokens:
            m = Measurement(None, failure_class="oom", failure_message="Not enough memory", log_tail=OOM_TAIL,
                            log_path=f"/tmp/{label}/server.log")
            record(m)
            return m
        return self.model.measure(spec, label, record, on_event)


def make_study(tmp: Path, name: str, n_trials: int, max_draft_tokens: int = 1000) -> tuple[Path, object]:
    study_file = tmp / f"{name}.yaml"
    study_file.write_text(f"""
name: {name}
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  tp_size: 8
  sim: {{profile: k2.6-tp8-pcie}}
bench: {{suite: quick}}
objectives: [single_speedup, speedup@32]
sampler: {{name: random, seed: 3}}
budget: {{n_trials: {n_trials}}}
""")
    config = load_study(study_file)
    create_study(config, config.storage)
    _, _, suite = config_from_study(open_study(config.name, config.storage))
    backend = OomAboveBackend(ModelBackend("k2.6-tp8-pcie", load_suite(suite), seed=1), max_draft_tokens)
    run_study(config, config.storage, backend, n_trials=n_trials)
    return study_file, open_study(config.name, config.storage)


def _build_rich_study(tmp: Path) -> None:
    _, study = make_study(tmp, "rep", 12, max_draft_tokens=20)
    write_report(study, tmp / "out" / "report.html")


@pytest.fixture(scope="module")
def rich_study(tmp_path_factory):
    # built once per session, whichever xdist worker asks first; each worker reads its own copy
    tmp = prepared_once(tmp_path_factory, "report", _build_rich_study)
    study_file = tmp / "rep.yaml"
    config = load_study(study_file)
    return study_file, open_study(config.name, config.storage), (tmp / "out" / "report.html").read_text(encoding="utf-8")


class _Scripts(HTMLParser):
    """Collects <script>/<link>/<img> attributes and the embedded figure JSON."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.figures: dict[str, dict] = {}
        self._key = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        self._key = a.get("data-key") if tag == "script" and a.get("class") == "figure-data" else None

    def handle_data(self, data):
        if self._key:
            self.figures[self._key] = json.loads(data)
            self._key = None


def figures_of(page: str) -> dict[str, dict]:
    p = _Scripts()
    p.feed(page)
    return p.figures


def trace(fig: dict, name: str) -> dict:
    found = [t for t in fig["data"] if t.get("name") == name]
    assert found, f"no trace {name!r} in {[t.get('name') for t in fig['data']]}"
    return found[0]


def test_pareto_figure_carries_the_front_the_baseline_and_the_picks(rich_study):
    _, study, page = rich_study
    figs = figures_of(page)
    data = load_report_data(study)
    assert len(data.front) >= 2
    front = trace(figs["pareto"], "Pareto front")
    assert front["x"] == pytest.approx([r.values[0] for r in data.front])
    assert front["y"] == pytest.approx([r.values[1] for r in data.front])
    for r in data.front:  # each front point is a measured trial's stored objective values
        assert r.values == pytest.approx([r.attrs["single_speedup"], r.attrs["speedup@32"]])
    base = trace(figs["pareto"], "baseline (autoregressive)")
    assert (base["x"], base["y"]) == ([1.0], [1.0])
    picks = [t["name"] for t in figs["pareto"]["data"] if t["name"].startswith("pick: ")]
    assert {n.split()[1] for n in picks} == {"single", "throughput", "knee"}
    for name, r in export_picks(data.front, data.objectives).items():  # the export's own choices
        t = trace(figs["pareto"], f"pick: {name} (trial {r.number})")
        assert (t["x"], t["y"]) == ([r.values[0]], [r.values[1]])
    single = max(data.front, key=lambda r: r.values[0])
    assert trace(figs["pareto"], f"pick: single (trial {single.number})")["x"] == [single.values[0]]
    # every feasible measurement is plotted, on the front or beside it
    others = trace(figs["pareto"], "measured")
    assert len(others["x"]) + len(front["x"]) == len(data.measured)


def test_concurrency_figures_carry_the_measured_throughput(rich_study):
    _, study, page = rich_study
    figs = figures_of(page)
    baseline = find_baseline(study).figures
    cs = sorted(baseline.tok_per_s)
    assert cs == [1, 8, 32]  # the quick suite's sweep
    b = trace(figs["throughput"], "baseline (autoregressive)")
    assert b["x"] == cs and b["y"] == pytest.approx([baseline.tok_per_s[c] for c in cs])
    data = load_report_data(study)
    for r in data.front:
        name = f"trial {r.number}: steps={r.effective.num_steps} topk={r.effective.eagle_topk} " \
               f"draft={r.effective.num_draft_tokens}"
        assert trace(figs["throughput"], name)["y"] == pytest.approx([r.attrs[f"tok_per_s@{c}"] for c in cs])
        assert trace(figs["speedup"], name)["y"] == pytest.approx([r.attrs[f"speedup@{c}"] for c in cs])
    # simulator studies say that tok/s are model time, on the axis and on the page
    assert "model time" in figs["throughput"]["layout"]["yaxis"]["title"]["text"]
    assert "every figure is in model time" in page


def test_accept_length_history_and_importances(rich_study):
    _, study, page = rich_study
    figs = figures_of(page)
    data = load_report_data(study)
    accept = figs["accept_length"]["data"]
    assert len(accept) == 3  # steps, topk, draft tokens
    assert accept[0]["x"] == [r.effective.num_steps for r in data.measured]
    assert accept[2]["x"] == [r.effective.num_draft_tokens for r in data.measured]
    assert accept[1]["y"] == pytest.approx([r.attrs["accept_length"] for r in data.measured])
    for key in ("history_single_speedup", "history_speedup_32", "hypervolume",
                "importance_single_speedup", "importance_speedup_32"):
        assert figs[key]["data"], key
    imp = figs["importance_single_speedup"]["data"][0]
    assert set(imp["y"]) <= {"speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens"}


def test_failed_trials_are_listed_by_class_with_escaped_log_tails(rich_study):
    _, study, page = rich_study
    failed = [r for r in load_records(study) if r.status in ("failed", "invalid")]
    oom = [r for r in failed if r.failure_class == "oom"]
    assert oom, "the sampler proposed no setting above 20 draft tokens; change the seed"
    section = page.split("<h2>Failed, invalid and unreadable trials</h2>")[1]
    assert f"<td>oom</td><td>{len(oom)}</td>" in section
    assert "Not enough memory. Please try to increase --mem-fraction-static." in section
    assert "</pre><b>x</b>" not in section and "&lt;/pre&gt;&lt;b&gt;x&lt;/b&gt;" in section
    for r in failed:
        assert f"<td>{r.number}</td>" in section


SLO_STUDY = """
name: lim
search_space: {space}
server: {{backend: sim, model_path: moonshotai/Kimi-K2.6, draft_model_path: d, tp_size: 8}}
bench: {{suite: quick, stream: true}}
sampler: {{seed: 5}}
budget: {{n_trials: 40}}
slo: [{{concurrency: 32, e2e_p99_ms: 25000}}]
"""


def test_summary_counts_agree_with_the_tables_and_unreadable_trials_are_listed(tmp_path):
    """QA: with SLOs the summary said `9 measured ... Measured configs: 4` beside a limits table of 9
    measured settings, 5 of them broken; and a trial whose figures were edited (unreadable) was
    counted in the summary but missing from the failed-trials table."""
    import sqlite3

    from support.model_study import SPACE
    from support.suite_backend import SuiteBackend

    from tuner.results.report import render_html

    path = tmp_path / "lim.yaml"
    path.write_text(SLO_STUDY.format(space=SPACE))
    config = load_study(path)
    create_study(config, config.storage)
    run_study(config, config.storage, SuiteBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=2),
              n_trials=8)
    con = sqlite3.connect(tmp_path / "lim.db")
    con.execute("UPDATE trial_user_attributes SET value_json = 'NaN' WHERE key = 'single_tok_per_s' AND trial_id = "
                "(SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'lim' AND number = 5)")
    con.commit()
    con.close()
    data = load_report_data(open_study("lim", config.storage))
    page = render_html(data, [], [])
    summary = html.unescape(page.split("<h2>Summary</h2>")[1].split("</p>")[0])
    slo_rows = re.findall(r"<tr><td>(\d+)</td><td>[^<]*</td><td>(yes|NO)</td>",
                          page.split("<h3>Latency SLOs</h3>")[1].split("</table>")[0])
    broken = sum(1 for _, ok in slo_rows if ok == "NO")
    assert broken and len(slo_rows) > broken  # the seed gives both kinds
    assert f"{len(slo_rows)} measured, 1 unreadable." in summary
    assert (f"Of the {len(slo_rows)} measured, {len(slo_rows) - broken} meet the study's limits "
            f"({len(data.measured)} distinct settings) and {broken} break them") in summary
    assert f"on the Pareto front: {len(data.front)}." in summary
    failures = page.split("<h2>Failed, invalid and unreadable trials</h2>")[1]
    assert "<tr><td>unreadable</td><td>1</td><td>5</td></tr>" in failures
    assert "<td>5</td><td>unreadable</td>" in failures and "single_tok_per_s nan is not a finite number" in failures


def test_page_is_self_contained(rich_study):
    _, _, page = rich_study
    from plotly.offline import get_plotlyjs

    p = _Scripts()
    p.feed(page)
    for tag, attrs in p.tags:
        for attr in ("src", "href"):
            assert not attrs.get(attr), f"<{tag} {attr}={attrs.get(attr)!r}> needs a file or the network"
    assert not re.search(r"@import|url\(\s*['\"]?https?:", page)
    assert page.count(get_plotlyjs()[:2000]) == 1  # plotly.js inline, once


def test_cli_writes_html_and_pngs(rich_study, tmp_path):
    study_file, _, _ = rich_study
    out, pngs = tmp_path / "r.html", tmp_path / "png"
    r = CliRunner().invoke(cli, ["study", "report", str(study_file), "-o", str(out), "--png", str(pngs)])
    assert r.exit_code == 0, r.output
    assert out.is_file() and "figure-data" in out.read_text()
    names = {p.name for p in pngs.iterdir()}
    assert {"pareto.png", "throughput.png", "speedup.png", "accept_length.png",
            "history_single_speedup.png", "importance_speedup_32.png"} <= names
    for p in pngs.iterdir():
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


@pytest.mark.parametrize("taken", ["speedup.png", "hypervolume.png"])
def test_a_png_name_taken_by_a_folder_is_one_line_and_nothing_written(rich_study, tmp_path, taken):
    """QA: `report --png DIR` where DIR held a folder named like one of the charts ended in
    IsADirectoryError's traceback, exit 1, after the HTML page and the charts before it were
    written (a matplotlib chart of Optuna's, or one of the report's own). The charts are drawn first,
    the names checked, then the page and the charts are written: all or nothing."""
    study_file, _, _ = rich_study
    out, pngs = tmp_path / "r.html", tmp_path / "png"
    (pngs / taken).mkdir(parents=True)
    (pngs / "pareto.png").write_bytes(b"old")
    r = CliRunner().invoke(cli, ["study", "report", str(study_file), "-o", str(out), "--png", str(pngs)])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --png: ") and taken in lines[0], r.output
    assert "is a folder" in lines[0]
    assert not out.exists()
    assert sorted(p.name for p in pngs.iterdir()) == sorted(["pareto.png", taken])  # no chart, no temporary left
    assert (pngs / "pareto.png").read_bytes() == b"old" and (pngs / taken).is_dir()


def test_cli_unknown_study_is_one_line_and_exit_2(rich_study, tmp_path):
    study_file, _, _ = rich_study
    url = f"sqlite:///{study_file.parent / 'rep.db'}"
    out = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["study", "report", "nope", "--storage", url, "-o", str(out)])
    assert r.exit_code == 2
    assert "nope" in r.output and "no such study" in r.output
    assert not out.exists()


def test_few_trials_say_why_importances_are_missing(tmp_path):
    _, study = make_study(tmp_path, "few", 2)
    page = (write_report(study, tmp_path / "few.html")).html.read_text()
    figs = figures_of(page)
    assert "pareto" in figs and "history_single_speedup" in figs
    assert not any(k.startswith("importance_") for k in figs)
    assert "Parameter importances need at least 4 feasible measured trials; this study has 2." in page
    assert [c.key for c in build_charts(load_report_data(study))][:3] == ["pareto", "throughput", "speedup"]


def test_page_renders_in_headless_chromium_without_network(rich_study, tmp_path):
    """Chromium in a network namespace with no interface: every figure must still be drawn.

    Needs Debian's `chromium` package and `unshare` (util-linux), as the CI installs them.
    """
    _, _, page = rich_study
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "install chromium (Debian package `chromium`) to run the report's browser check"
    html_file = tmp_path / "report.html"
    html_file.write_text(page, encoding="utf-8")
    cmd = ["unshare", "-rn", chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
           "--dump-dom", html_file.as_uri()]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        dom, err = proc.communicate(timeout=120)
    finally:
        terminate_group(proc.pid, 10, leader=proc)  # chromium's helpers live in its process group
    assert proc.returncode == 0, err[-2000:]
    keys = set(figures_of(page))
    drawn = set(re.findall(r'<div class="fig js-plotly-plot" id="fig-([a-z_0-9]+)"', dom))
    assert drawn == keys
    assert dom.count('class="main-svg"') >= len(keys)


def test_the_importance_note_counts_feasible_measurements_as_such():
    # A study whose measured trials mostly break its limits (README "Seeing the results": importances
    # "shown from 4 measured trials on"): the note must not say "has 1" beside a summary of 3 measured.
    from types import SimpleNamespace

    from tuner.engine.records import MEASURED
    from tuner.results.report import optuna_plots

    records = [SimpleNamespace(status=MEASURED, feasible=f) for f in (True, False, False)]
    plots, notes = optuna_plots(SimpleNamespace(records=records, objectives=["single_speedup", "speedup@32"]))
    assert plots == []
    assert notes == ["Parameter importances need at least 4 feasible measured trials; this study has 1 "
                     "(of 3 measured: the others are infeasible)."], notes
