"""optuna-dashboard on a real study: metric names on both studies, infeasible marks on failed and
invalid trials, the baseline told its real figures; the page rendered in headless Chromium.

optuna-dashboard (the `dashboard` extra, in `dev` too) runs as a real process on 127.0.0.1.
"""

import re
import shutil
import subprocess
import sys
import time

import pytest
import requests
from support.model_study import make_model_study
from support.prepared_once import prepared_once

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import Measurement, ModelBackend
from tuner.engine.baseline import find_baseline
from tuner.engine.records import load_records
from tuner.engine.runner import run_study
from tuner.engine.study import open_study
from tuner.server.ports import pick_free_port
from tuner.server.procs import terminate_group


class OomAbove:
    """The performance model, except that settings with many draft tokens fail like an OOM launch."""

    def __init__(self, model, max_draft):
        self.model, self.max_draft = model, max_draft

    def measure(self, spec, label, record, on_event=None, on_stage=None):
        if spec is not None and spec.num_draft_tokens > self.max_draft:
            m = Measurement(None, failure_class="oom", failure_message="Not enough memory", log_tail="oom")
            record(m)
            return m
        return self.model.measure(spec, label, record, on_event)


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory):
    def build(folder):
        config = load_study(make_model_study(folder, "dash", n_trials=None))
        run_study(config, config.storage, OomAbove(ModelBackend("k2.6-tp8-pcie", load_suite("quick"), seed=1), 20),
                  n_trials=8)

    # the study is run once per session, whichever xdist worker asks first; each worker serves its own copy
    folder = prepared_once(tmp_path_factory, "dash", build)
    config = load_study(folder / "dash.yaml")
    port = pick_free_port("127.0.0.1")
    log = open(folder / "dashboard.log", "wb")
    proc = subprocess.Popen([sys.executable, "-c", "from optuna_dashboard._cli import main; main()",
                             config.storage, "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(url + "/api/studies", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, \
                f"optuna-dashboard did not start: {(folder / 'dashboard.log').read_text()[-2000:]}"
            time.sleep(0.2)
        yield config, url
    finally:
        terminate_group(proc.pid, 10, leader=proc)
        log.close()


def _study(url, name):
    summaries = requests.get(url + "/api/studies", timeout=10).json()["study_summaries"]
    sid = next(s["study_id"] for s in summaries if s["study_name"] == name)
    return requests.get(f"{url}/api/studies/{sid}?after=0", timeout=10).json(), sid


def test_metric_names_and_infeasible_marks(dashboard):
    config, url = dashboard
    study, _ = _study(url, "dash")
    assert study["objective_names"] == ["single_speedup", "speedup@32"]
    records = {r.number: r for r in load_records(open_study("dash", config.storage))}
    statuses = {r.status for r in records.values()}
    assert {"measured", "failed", "invalid"} <= statuses, statuses
    for t in study["trials"]:
        r = records[t["number"]]
        attrs = {a["key"]: a["value"] for a in t["user_attrs"]}
        if r.status in ("failed", "invalid") or (r.status == "reused" and not r.feasible):
            assert t["constraints"] == [1.0], t  # the dashboard draws it as an infeasible trial
            assert "placeholders" in attrs["note"] and "not results" in attrs["note"]
        elif r.status in ("measured", "reused"):
            assert t["constraints"] == [-1.0] and "note" not in attrs


def test_the_baseline_is_told_its_real_figures(dashboard):
    config, url = dashboard
    base, _ = _study(url, "dash.baseline")
    assert base["objective_names"] == ["single_tok_per_s", "tok_per_s@32"]
    figures = find_baseline(open_study("dash", config.storage)).figures
    [trial] = [t for t in base["trials"] if t["state"] == "Complete"]
    assert trial["values"] == pytest.approx([figures.single_tok_per_s, figures.tok_per_s[32]])
    assert all(v > 1 for v in trial["values"])  # tok/s, not a placeholder


def test_dashboard_renders_names_and_infeasible_trials_headless(dashboard, tmp_path):
    _, url = dashboard
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "install chromium (Debian package `chromium`) to run the dashboard's browser check"
    _, sid = _study(url, "dash")
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1400,1000", "--virtual-time-budget=15000",
           "--dump-dom", f"{url}/dashboard/studies/{sid}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        dom, err = proc.communicate(timeout=120)
    finally:
        terminate_group(proc.pid, 10, leader=proc)
    assert proc.returncode == 0, err[-2000:]
    assert "single_speedup" in dom and "speedup@32" in dom
    # the plots' legends: failed and invalid trials drawn apart, greyed out, as infeasible
    assert re.search(r">Infeasible(?: Trial)?<", dom), "no infeasible trials drawn"
