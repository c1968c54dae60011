"""Faults the reliability tests inflict, and what they read back afterwards.

* :func:`trial_server_up`: the moment to strike, a trial's server running (its record on disk);
  :func:`baseline_server_up`, the baseline's;
* :func:`storage_away_during_baseline`: a worker whose PostgreSQL is stopped while its baseline runs;
* :func:`read_only` (an SQLite file) and :func:`disk_trouble` (a workdir that fills up or refuses
  writes): as root, where permission bits do not stop anyone, through ``chattr +i`` and a small
  tmpfs mounted over the workdir; otherwise through permission bits. :data:`DISK_SEAM` says which
  one a run used, for the test's own report;
* :func:`measured_once`: launches counted from the servers' own logs, against what storage holds.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

STUDY_TEMPLATE = """
name: {name}
search_space: {space}
storage: {storage}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  startup_timeout_s: 60
  stop_grace_s: 5
  # speedup 20, not 100: a sweep batch's span runs from its first submission, so a client slowed
  # by a loaded machine (32 submissions spread over 0.1-0.2 s wall) would count 10-20 model seconds
  # into a batch of under one (CI: a baseline read 60 tok/s at C=32 instead of ~800, and the next
  # trial failed as bad_response with its speedup beyond any accept length)
  sim: {{profile: k2.6-tp8-pcie, speedup: 20, load_seconds: 0.3, noise: 0.01, seed: 1}}
bench:
  suite:
    name: tiny
    prompts:
      - {{name: fib, text: "Write a Python function that returns the n-th Fibonacci number."}}
    single: {{lengths: [32], repeats: 1}}
    sweep: {{concurrencies: [1, 32], max_tokens: 16}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 600
sampler: {{seed: 5}}
# pruning off: these studies count launches exactly; pruned launches have tests of their own
budget: {{n_trials: {budget}, prune: false}}
"""

ROOT = Path(__file__).resolve().parents[2]


def study_file(folder: Path, name: str, budget: int, storage: str = "${TUNER_STORAGE}") -> Path:
    """A study on the simulator with a suite of about a second (model time 100x faster). The
    request limit is generous (600 model s, 6 s of wall time): on a loaded machine the simulator
    falls behind model time, and a request over the limit would fail the trial, or the baseline."""
    path = folder / f"{name}.yaml"
    path.write_text(STUDY_TEMPLATE.format(name=name, space=ROOT / "search_spaces" / "eagle3.yaml",
                                          storage=storage, budget=budget))
    return path


def slow_start(study: Path, seconds: float) -> Path:
    """Make the servers of ``study`` (a :func:`study_file`) start ``seconds`` late once the file this
    returns exists: ``server.python`` becomes a wrapper that sleeps before the server's interpreter
    runs (its port closed meanwhile, as while a model loads). For a fault struck while a later
    trial's server starts: ``load_seconds`` in the file slowed every launch before it too, and the
    file cannot change between two runs of one study (the stored study refuses it)."""
    import sys

    mark = study.parent / f"{study.stem}.slow"
    wrapper = study.parent / f"{study.stem}-python"
    wrapper.write_text(f'#!/bin/sh\nif [ -e "{mark}" ]; then sleep {seconds:g}; fi\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    text = study.read_text()
    assert "  tp_size: 8\n" in text and "  python:" not in text
    study.write_text(text.replace("  tp_size: 8\n", f"  tp_size: 8\n  python: {wrapper}\n"))
    return mark


def fault_env(**extra: str) -> dict:
    """The environment of a worker under test: short heartbeats and patience (seconds), and no
    minimum of free space on the workdir's disk (the disk-full tests run on small tmpfs disks)."""
    env = {**os.environ, "TUNER_HEARTBEAT_INTERVAL_S": "1", "TUNER_HEARTBEAT_GRACE_S": "4",
           "TUNER_STORAGE_PATIENCE_S": "120", "PYTHONUNBUFFERED": "1", "TUNER_MIN_FREE_GIB": "0"}
    env.pop("TUNER_TEST_KILL_AT", None)
    env.update(extra)
    return env


def start_tuner(argv: list[str], env: dict, cwd: Path, log: Path) -> subprocess.Popen:
    """``python -m tuner ARGV`` in its own session, its output (both streams) into ``log``."""
    import sys

    with open(log, "w") as f:
        return subprocess.Popen([sys.executable, "-m", "tuner", *argv], stdout=f, stderr=subprocess.STDOUT,
                                env=env, cwd=cwd, start_new_session=True)


def fault_zygote(tmp_path_factory):
    """A zygote (support/zygote.py) that imported the CLI once with :func:`fault_env`'s environment,
    for workers forked by support/forked_tuner.py: each a real process of its own, its servers real
    simulator processes, a second of imports saved each. The caller closes it (a module fixture)."""
    from .zygote import CLI_PRELOAD, start_zygote

    return start_zygote(CLI_PRELOAD, fault_env(), tmp_path_factory.mktemp("cli-zygote"))


def worker_through_fault(argv: list[str], env: dict, cwd: Path, up, fault,
                         zygote=None) -> tuple[int, str, list[str], object]:
    """Start ``tuner ARGV`` (its output in ``cwd/run.log``), wait until ``up()`` answers (the moment
    to strike, e.g. :func:`trial_server_up`), call ``fault(proc)``, and wait for the worker to end.
    Returns its exit code, its output, its ``error:`` lines and what ``up()`` answered. ``zygote``
    (support/zygote.py): the worker is forked from it (support/forked_tuner.py), a real process of
    its own still, a second of imports saved; without it, a fresh ``tuner`` process."""
    from .processes import finish

    log = Path(cwd) / "run.log"
    if zygote is None:
        proc = start_tuner(argv, env, cwd, log)
    else:
        from .forked_tuner import start_forked

        proc = start_forked(zygote, argv, env, cwd, log)
    try:
        moment = wait_for(up, 180, "the moment to strike", [proc])
        fault(proc)
        code = proc.wait(timeout=300)
    finally:
        finish(proc)
    out = log.read_text()
    return code, out, [line for line in out.splitlines() if line.startswith("error:")], moment


def wait_for(predicate, timeout_s: float, what: str, procs=()):
    """``predicate()``'s first value other than None or False (a trial number 0 counts), polling;
    fails when a process in ``procs`` exits first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value is not None and value is not False:
            return value
        for p in procs:
            if p.poll() is not None:
                raise AssertionError(f"process {p.pid} exited ({p.returncode}) while waiting for {what}")
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def trial_server_up(workdir: Path, after: int = -1) -> int | None:
    """The number of a trial whose server is running now (its record is on disk), above ``after``."""
    for rec in sorted((workdir / "servers").glob("*.json")):
        try:
            r = json.loads(rec.read_text())
        except (OSError, ValueError):
            continue
        label = Path(r.get("log_path", "")).parent.name
        if "--speculative-algorithm" in " ".join(r.get("cmdline", [])) and label.isdigit() and int(label) > after:
            return int(label)
    return None


def baseline_server_up(workdir: Path) -> bool:
    """Whether the baseline's server is running now (its record on disk)."""
    for rec in (workdir / "servers").glob("*.json"):
        try:
            r = json.loads(rec.read_text())
        except (OSError, ValueError):
            continue
        if Path(r.get("log_path", "")).parent.name == "baseline":
            return True
    return False


@dataclass
class Outage:
    """What :func:`storage_away_during_baseline` gives its block: the worker (``proc``, its output in
    ``log``), its study file, workdir, environment and storage URL."""

    proc: subprocess.Popen
    study: Path
    workdir: Path
    log: Path
    env: dict
    url: str


@contextmanager
def storage_away_during_baseline(pg_cluster, folder: Path, name: str, log_name: str, zygote=None, **env: str):
    """A real ``tuner study run`` of a one-trial :func:`study_file` study ``name`` on ``pg_cluster``
    (support.pg.PgCluster), created first, its output in ``folder/log_name``, the workdir
    ``folder/wd``; once the baseline's server runs, PostgreSQL is stopped (pg_ctl) and the block runs
    (:class:`Outage`). ``env``: beside :func:`fault_env`'s (``TUNER_STORAGE_PATIENCE_S``). The
    simulator runs at speedup 5, not 20, so the baseline's suite outlasts pg_ctl's stop and the
    outage begins before it ends. Afterwards the worker is ended if it still runs and PostgreSQL is
    started again.

    ``zygote`` (support/zygote.py, started with :func:`fault_env`'s environment): the study is
    created in this process (the setup, not under test: support/cli_in_process.py) and the worker
    forked from it (support/forked_tuner.py), a real process of its own still, a second of imports
    saved each; without it both are fresh ``tuner`` processes."""
    import sys

    from .processes import finish

    url = pg_cluster.database()
    study = study_file(folder, name, 1)
    study.write_text(study.read_text().replace("speedup: 20,", "speedup: 5,"))
    run_env = fault_env(TUNER_STORAGE=url, **env)
    workdir, log = folder / "wd", folder / log_name
    run = ["study", "run", str(study), "--workdir", str(workdir)]
    if zygote is None:
        subprocess.run([sys.executable, "-m", "tuner", "study", "create", str(study)], env=run_env, cwd=folder,
                       check=True, capture_output=True)
        proc = start_tuner(run, run_env, folder, log)
    else:
        from .cli_in_process import tuner_here
        from .forked_tuner import start_forked

        created = tuner_here("study", "create", str(study), cwd=folder, env={"TUNER_STORAGE": url})
        assert created.exit_code == 0, created.output
        proc = start_forked(zygote, run, run_env, folder, log)
    try:
        wait_for(lambda: baseline_server_up(workdir), 180, "the baseline's server", [proc])
        pg_cluster.stop()
        yield Outage(proc, study, workdir, log, run_env, url)
    finally:
        if proc.poll() is None:
            proc.kill()
        finish(proc)
        if not pg_cluster.running():
            pg_cluster.start()


@contextmanager
def read_only(path: Path):
    """``path`` (a file or a folder) cannot be written while the block runs (root included: ``chattr
    +i``; otherwise its write bits are off, a folder still searchable and readable)."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(path)], check=True, capture_output=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True, capture_output=True)
    else:
        mode = path.stat().st_mode
        # the write bits off, the others kept: 0444 on a folder took its search (x) bit too, so a
        # non-root user could not even look inside (QA, qa157: 6 tests of
        # tests/cli/test_storage_folder_unwritable.py failed as a non-root user)
        path.chmod(stat.S_IMODE(mode) & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)


#: How :func:`disk_trouble` makes the workdir refuse writes on this machine ("tmpfs" or "permissions").
DISK_SEAM = "tmpfs" if os.geteuid() == 0 else "permissions"


@contextmanager
def small_disk(folder: Path, size: str = "32m"):
    """``folder`` on a tmpfs of ``size`` (as root), so a test can fill it; a plain folder otherwise."""
    folder.mkdir(parents=True, exist_ok=True)
    if DISK_SEAM != "tmpfs":
        yield folder
        return
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"mount tmpfs failed as root: {done.stderr.strip()}"
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def disk_trouble(folder: Path) -> None:
    """From now on nothing new can be written under ``folder``: the tmpfs is filled up to its last
    byte (root), or every folder under it is made read-only (otherwise)."""
    if DISK_SEAM == "tmpfs":
        fd = os.open(folder / ".filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            for size in (1 << 20, 4096, 1):  # megabytes, then pages, then the last bytes
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError:
                    pass
        finally:
            os.close(fd)
        return
    for d in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        d.chmod(0o555)


def disk_trouble_over(folder: Path) -> None:
    """Undo :func:`disk_trouble`: the filler removed, or the folders writable again."""
    if DISK_SEAM == "tmpfs":
        (folder / ".filler").unlink()
        return
    for d in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        d.chmod(0o755)


def launches_by_trial(workdir: Path) -> dict[str, int]:
    """How many times each trial's server was launched, from its own log (``baseline`` included)."""
    out: dict[str, int] = {}
    for log in workdir.rglob("trials/*/server.log"):
        out[log.parent.name] = log.read_text(errors="replace").count(" launch: ")
    base = workdir / "baseline" / "server.log"
    if base.exists():
        out["baseline"] = base.read_text(errors="replace").count(" launch: ")
    return out


def deliberate_again(trial) -> bool:
    """A trial the default sampler marked to measure a setting again (``remeasure_of``, and the
    sampler's mark, tuner.engine.trial.REMEASURE_ATTR): a second measurement on purpose, not a lost
    or repeated tell."""
    from tuner.engine.trial import REMEASURE_ATTR

    again = trial.user_attrs.get("remeasure_of") is not None
    assert not again or trial.system_attrs.get(REMEASURE_ATTR), f"trial {trial.number}: again, unmarked"
    return again
