"""The tuner's own open-file limit is not the setting's fault (QA, qa217).

Under ``prlimit --nofile=32:32`` (a Slurm job's or a container's low ``ulimit -n``), the C=32 sweep
could not open its sockets (EMFILE); the client read that as refused connections and the trial was
failed as ``request_errors``, charged to the budget, its setting never measured again. Now the run
stops with one line naming the limit and ``ulimit -n``, the trial is queued again (``interrupted``),
and the next run with the usual limit makes the budget's launch: nothing wrong kept, nothing lost.

A soft limit under a higher hard one is raised first (as SGLang raises its own), so it measures.

Real processes, a real limit (``setrlimit`` in the child, what ``prlimit`` does), a real simulator.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys

from support.cli_in_process import tuner_here
from support.demo_study import demo_study

#: small, but with the sweep at concurrency 32 the objective needs: 32 sockets at once
SUITE = {"name": "c32", "prompts": [{"name": "p", "text": "Write a haiku about autumn leaves."}],
         "single": {"lengths": [16], "repeats": 1}, "sweep": {"concurrencies": [32], "max_tokens": 16},
         "warmup": {"requests": 1, "max_tokens": 4}, "timeout_s": 300, "ignore_eos": True}
#: past `tuner doctor`'s least (the sweep's 32 sockets + 6), short of what the run then opens
LIMIT = 38


def _tuner(*argv: str, cwd, nofile: int | None = None, hard: int | None = None) -> subprocess.CompletedProcess:
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard or nofile))

    return subprocess.run([sys.executable, "-m", "tuner", *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=300, preexec_fn=limited if nofile else None)


def _trials(path, cwd) -> list[dict]:
    done = tuner_here("study", "status", str(path), "-f", "json", cwd=cwd)  # a read: in this process
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)["trials"]


def test_a_sweep_past_the_tuners_open_file_limit_blames_no_setting(tmp_path):
    path = demo_study(tmp_path, "fds", **{"bench.suite": SUITE, "budget.n_trials": 1,
                                          "server.sim.speedup": 50})
    first = _tuner("study", "run", str(path), cwd=tmp_path)
    assert first.returncode == 0, first.stderr  # the baseline and trial 0, with the usual limit

    low = _tuner("study", "run", str(path), "--add-trials", "1", cwd=tmp_path, nofile=LIMIT)
    assert low.returncode == 1, low.stdout + low.stderr
    assert "Traceback" not in low.stderr, low.stderr
    errors = [line for line in low.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, low.stderr
    assert f"ulimit -n: soft {LIMIT}, hard {LIMIT}" in errors[0] and "ulimit -n 65536" in errors[0], errors
    trials = _trials(path, tmp_path)
    cut = [t for t in trials if t["number"] == 1]
    assert cut and cut[0]["status"] == "interrupted", trials  # queued again, not the setting's failure
    assert "open-file limit" in cut[0]["note"], cut
    assert not [t for t in trials if t["status"] == "failed"], trials
    assert [t["status"] for t in trials].count("measured") == 1, trials
    queued = [t for t in trials if t["state"] == "WAITING" and t["requested"] == cut[0]["requested"]]
    assert queued, trials  # its setting is queued again, to be measured when the budget reaches it

    again = _tuner("study", "run", str(path), cwd=tmp_path)  # the usual limit: the budget's launch is made
    assert again.returncode == 0, again.stderr
    trials = _trials(path, tmp_path)
    assert [t["status"] for t in trials].count("measured") == 2, trials
    assert not [t for t in trials if t["status"] == "failed"], trials

    # `tuner study confirm` stops the same way: one line, the rounds measured so far stored
    confirm = _tuner("study", "confirm", str(path), "--picks", "0", "--repeats", "2", cwd=tmp_path, nofile=LIMIT)
    assert confirm.returncode == 1, confirm.stdout + confirm.stderr
    assert "Traceback" not in confirm.stderr, confirm.stderr
    errors = [line for line in confirm.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"ulimit -n: soft {LIMIT}, hard {LIMIT}" in errors[0], confirm.stderr
    assert errors[0].endswith("; the rounds measured so far are stored"), errors


def test_a_low_soft_limit_under_a_high_hard_one_is_raised_and_the_study_measures(tmp_path):
    """``prlimit --nofile=32:4096``: the soft limit a shell or job gives is raised as far as the hard one
    allows (as SGLang raises its own), so the sweep's sockets fit and every launch is measured."""
    path = demo_study(tmp_path, "soft", **{"bench.suite": SUITE, "budget.n_trials": 1,
                                           "server.sim.speedup": 50})
    done = _tuner("study", "run", str(path), cwd=tmp_path, nofile=LIMIT, hard=4096)
    assert done.returncode == 0, done.stderr
    trials = _trials(path, tmp_path)
    assert [t["status"] for t in trials if t["state"] != "WAITING"] == ["measured"], trials


def test_a_limit_no_sweep_fits_under_is_refused_before_anything_is_written(tmp_path):
    """`ulimit -n` 32 (hard too) under the C=32 sweep's 32 sockets and the tuner's own files: refused by
    `tuner doctor`'s cheap check before the study is created or a server loads a model."""
    path = demo_study(tmp_path, "few", **{"bench.suite": SUITE, "budget.n_trials": 1})
    done = _tuner("study", "run", str(path), cwd=tmp_path, nofile=32)
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: fail  open files: ulimit -n is 32 (the hard limit too), under the 38 the sweep at "
                      "concurrency 32 needs at the least with the tuner's own files; raise it where the tuner "
                      "starts (`ulimit -n 65536`, a Slurm job's or a container's nofile limit)"], done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["few.yaml"]  # no storage, no workdir
