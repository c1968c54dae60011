"""The progress line's ETA counts the launches the run's `--timeout` / `budget.timeout` still has
room for, as the run's own stop rule judges them (QA, qa139: a night of `n_trials: 1000, timeout: 3h`
showed the ETA of 1000 launches to its last progress line, and a night bounded by its timeout alone
none, `ETA ?`)."""

import re
import subprocess
import sys

from test_pruning import make
from test_pruning_server import STUDY

from tuner.engine.runner import run_study


def _progress(config, backend, **kw) -> tuple[list[dict], str]:
    events: list[dict] = []
    summary = run_study(config, config.storage, backend, timeout_s=config.budget.timeout_s,
                        on_event=lambda kind, info: events.append(info) if kind == "progress" else None, **kw)
    return events, summary.stopped_because


def test_the_eta_of_a_night_ends_with_its_timeout(tmp_path):
    # wall time: the simulated server (a real process, real HTTP), a night of 12 s and 1000 launches
    study = STUDY.replace("budget: {n_trials: 2, prune: {startup_trials: 1}}",
                          "budget: {n_trials: 1000, timeout: 12s, prune: false}")
    assert "timeout: 12s" in study
    (tmp_path / "staged.yaml").write_text(study)
    run = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(tmp_path / "staged.yaml")],
                         capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert run.returncode == 0 and "within the time budget" in run.stdout, run.stdout + run.stderr
    etas = [int(m) * 60 + int(s) for m, s in re.findall(r"launched this run; .*ETA (\d+)m(\d+)s", run.stdout)]
    assert etas, run.stdout
    assert max(etas) <= 12, run.stdout  # the run stops at its timeout: not 1000 launches away


def test_a_night_bounded_by_its_timeout_alone_has_an_eta(tmp_path):
    config, backend = make(tmp_path, "alone", "{timeout: 2h, prune: false}")
    events, why = _progress(config, backend)
    assert "modelled GPU time" in why and events, why
    assert all(info["eta_s"] is not None for info in events), events
    assert events[-1]["eta_s"] == 0.0, events[-1]


def test_a_modelled_night_s_eta_counts_the_wall_time_its_launches_take(tmp_path):
    # backend model: no server runs and every measurement's own duration_s is 0, so the ETA read
    # 0m00s from the first launch on, however many were left (QA, qa139)
    config, backend = make(tmp_path, "model", "{n_trials: 6, prune: false}")
    events, why = _progress(config, backend)
    assert "budget of 6 trials is spent" in why and events, why
    assert all(info["eta_s"] > 0 for info in events if info["measured"] < 6), events
    assert events[-1]["eta_s"] == 0.0, events[-1]
