"""The progress line's ETA counts the launches the run's `--timeout` / `budget.timeout` still has
room for, as the run's own stop rule judges them (QA, qa139: a night of `n_trials: 1000, timeout: 3h`
showed the ETA of 1000 launches to its last progress line, and a night bounded by its timeout alone
none, `ETA ?`)."""

import math
import re
import subprocess
import sys

import optuna
from support.cli_in_process import tuner_here

from test_pruning import make
from test_pruning_server import STUDY

from tuner.engine.runner import run_study


def _progress(config, backend, **kw) -> tuple[list[dict], str]:
    events: list[dict] = []
    summary = run_study(config, config.storage, backend, timeout_s=config.budget.timeout_s,
                        on_event=lambda kind, info: events.append(info) if kind == "progress" else None, **kw)
    return events, summary.stopped_because


def test_the_eta_of_a_night_ends_with_its_timeout(tmp_path):
    # wall time: the simulated server (a real process, real HTTP), a night of 1000 launches bounded by
    # its timeout. The baseline is measured by a first run (its own `timeout: 1s` stops it before any
    # trial) and the timed run gets room for three launches of that baseline's duration: a fixed
    # `timeout: 12s` that also paid for the baseline launched no trial under load ~10 (baseline 8 s),
    # so no ETA line was printed at all.
    study = STUDY.replace("budget: {n_trials: 2, prune: {startup_trials: 1}}",
                          "budget: {n_trials: 1000, timeout: 1s, prune: false}")
    assert "timeout: 1s" in study
    (tmp_path / "staged.yaml").write_text(study)
    args = ["study", "run", str(tmp_path / "staged.yaml")]
    # the baseline's run is the setup, not under test: in this process (a start-up and a storage
    # opening saved); the timed run stays a real `tuner` process
    first = tuner_here(*args, cwd=tmp_path)
    assert first.exit_code == 0 and "done: 0 measured" in first.stdout, first.stdout + first.stderr
    cmd = [sys.executable, "-m", "tuner", *args]
    bstudy = optuna.load_study(study_name="staged.baseline", storage=f"sqlite:///{tmp_path / 'staged.db'}")
    timeout = max(12, math.ceil(3 * bstudy.trials[0].user_attrs["duration_s"]))
    run = subprocess.run(cmd + ["--timeout", f"{timeout}s"], capture_output=True, text=True, timeout=240,
                         cwd=tmp_path)
    assert run.returncode == 0 and "within the time budget" in run.stdout, run.stdout + run.stderr
    # "ETA 0m05s", or "ETA 1h19m" (the ETA the run showed without qa139's fix)
    etas = [int(h or 0) * 3600 + int(m) * 60 + int(s or 0) for h, m, s in
            re.findall(r"launched this run; .*ETA (?:(\d+)h)?(\d+)m(?:(\d+)s)?", run.stdout)]
    assert etas, run.stdout
    assert max(etas) <= timeout, run.stdout  # the run stops at its timeout: not 1000 launches away


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
