"""The read-only commands' text lines that quote text from outside -- a failed launch's message (a
server's log line, an HTTP error body), the study's server.extra_args, a path -- print it as
tuner.config.names.shown does, as every other output path does (QA: a baseline whose SGLang log
line held ESC [31m and U+202E printed both raw in `tuner study status` and `tuner study run`, and
`tuner study export` printed extra_args holding them raw in its warning; on a terminal they colour
and reverse the rest of the line). Raw ESC is stripped by click off a terminal, so each test asks
for the escaped form, which only the escaping writes, and for no raw U+202E."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import Measurement, ModelBackend
from tuner.engine.runner import run_study
from tuner.engine.study import create_study, open_study
from tuner.cli import cli
from tuner.results.report import write_report

SAID = "boom \x1b[31mRED\x1b[0m \u202eevil"
ESCAPED = "boom \\x1b[31mRED\\x1b[0m \\u202eevil"
RAW = ("\x1b", "\u202e")


def _clean(text: str) -> str:
    assert not any(c in text for c in RAW), repr(text)
    return text.replace("\n", "")  # a table or a long line may wrap


def test_a_failed_baseline_s_log_line_is_escaped_by_run_and_status(tmp_path):
    # the simulator as a real process, failing at start-up with SAID as its exception
    study = tmp_path / "evil.yaml"
    study.write_text(json.dumps({
        "name": "evil",
        "server": {"backend": "sim", "model_path": "org/m", "draft_model_path": "sim/d", "tp_size": 8,
                   "startup_timeout_s": 120, "stop_grace_s": 10,
                   "extra_args": ["--sim-fail-startup", f"RuntimeError: {SAID}"],
                   "sim": {"speedup": 50, "load_seconds": 0.1}},
        "bench": {"suite": "quick"}, "budget": {"n_trials": 1}}))
    run = CliRunner().invoke(cli, ["study", "run", str(study)])
    assert run.exit_code == 1, run.output
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and ESCAPED in _clean(errors[0]), run.stderr
    status = CliRunner().invoke(cli, ["study", "status", str(study)])
    assert status.exit_code == 0, status.output
    said = "baseline: its last launch failed (other: server exit code 1 before it was ready: RuntimeError: "
    assert said + ESCAPED in _clean(status.stdout), status.stdout


def test_export_s_warnings_and_the_paths_it_writes_are_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = model_study_data("m1", seed=1)
    data["server"]["extra_args"] = ["--served-model-name", SAID]
    (tmp_path / "m1.yaml").write_text(json.dumps(data))
    assert CliRunner().invoke(cli, ["study", "run", "m1.yaml"]).exit_code == 0
    out = "b\u202e.yaml"
    r = CliRunner().invoke(cli, ["study", "export", "m1.yaml", "--pick", "knee", "-o", out])
    assert r.exit_code == 0, r.output
    err = _clean(r.stderr)
    assert "wrote b\\u202e.yaml: trial " in err, r.stderr
    # shell-quoted (ANSI-C, tuner.results.export.shell_words): the words a launch passed, and ASCII
    assert f"add them to the command line: --served-model-name $'{ESCAPED}'" in err, r.stderr
    r = CliRunner().invoke(cli, ["study", "report", "m1.yaml", "-o", "r\u202e.html"])
    assert r.exit_code == 0 and _clean(r.stdout).startswith("report: r\\u202e.html"), r.output


class _FailingTrials:
    """The performance model for the baseline; every trial fails with SAID, its log tail coloured
    (SGLang's logs carry ANSI colours)."""

    def __init__(self, model: ModelBackend):
        self.model = model

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        if spec is None:
            return self.model.measure(spec, label, record, on_event)
        m = Measurement(None, failure_class="other", failure_message=f"RuntimeError: {SAID}",
                        log_tail=f"INFO loading\n\x1b[31mERROR\x1b[0m {SAID}",
                        log_path=f"/tmp/{label}/server.log")
        record(m)
        return m


def test_a_report_shows_a_failure_message_and_its_log_tail_escaped(tmp_path):
    path = tmp_path / "rep.yaml"
    path.write_text(json.dumps(model_study_data("rep", seed=1)))
    config = load_study(path)
    create_study(config, config.storage)
    model = ModelBackend("k2.6-tp8-pcie", load_suite("quick"), seed=1)
    run_study(config, config.storage, _FailingTrials(model), n_trials=1)
    page = tmp_path / "report.html"
    write_report(open_study("rep", config.storage), page)
    html = page.read_text(encoding="utf-8")
    assert not any(c in html for c in RAW), "a raw ESC or U+202E in the page"
    assert f"<td>RuntimeError: {ESCAPED}</td>" in html
    assert f"<summary>2 lines</summary><pre>INFO loading\n\\x1b[31mERROR\\x1b[0m {ESCAPED}</pre>" in html
