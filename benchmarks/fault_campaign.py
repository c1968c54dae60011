"""The fault campaign: long outages and crashes against real `tuner study run` workers on the
simulator, and a table of what survived, what was lost and what wrong number was kept.

The tests (tests/engine/test_storage_outages.py, test_kill_points.py) inflict the same faults for a
few seconds each; this script runs the long versions the issue names:

* ``pg-outage-60s``: two workers on one PostgreSQL study, the server stopped for 60 s mid-trial
  (default heartbeat: 10 s, grace 40 s, so every running trial's heartbeat goes stale meanwhile);
* ``pg-restarts``: two workers, the server restarted (``pg_ctl stop -m fast`` + ``start``, well
  under a second down) five times while trials run and record;
* ``pg-patience``: the server stopped for longer than the patience (30 s): the worker exits 75
  with its measurement journaled; the next run, once the server is back, stores it first;
* ``kill:POINT``: a worker kills itself (SIGKILL) at every named point of the trial lifecycle
  (``TUNER_TEST_KILL_AT``), then a second run finishes the study;
* ``sqlite-lock``: another connection holds SQLite's write lock for 30 s (busy timeout 5 s);
* ``sqlite-readonly`` / ``sqlite-moved``: the database file read-only for 30 s, then moved away for
  30 s and put back;
* ``workdir-full``: the workdir (a tmpfs as root, else read-only folders) fills up mid-trial.

For each fault, after the workers are done: a launch (counted from the server logs) whose finished
measurement is not in storage is *lost*; a setting measured twice is *re-measured*; a stored trial
whose numbers are not its own measurement's is a *wrong number kept* (values not matching its stored
figures, a reused trial without its source's values, a status without figures, figures that differ
from the suite's JSON on disk, a trial left RUNNING). *tried* counts the faults inflicted, *survived*
those every worker came through as it should, with no traceback: exit 0 (``pg-patience``: 75 with
one line, then 0 on the next run; ``workdir-full``: 1 with one line, then 0 once there is room; a
kill point: the rerun finishes the study).

    nice -n 10 python benchmarks/fault_campaign.py [--only NAME ...] [--outage-s 60]
    nice -n 10 python benchmarks/fault_campaign.py --random 20 --seed 1   # benchmarks/random_faults.py

Needs PostgreSQL's server binaries (``.ci/setup-system`` installs them) and, for the tmpfs, root.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the tests' fault helpers and PostgreSQL server, not copies

from support.faults import (disk_trouble, disk_trouble_over, launches_by_trial, read_only,  # noqa: E402
                            small_disk, study_file, trial_server_up, wait_for)
from support.pg import PgCluster, throwaway_server  # noqa: E402

from tuner.engine.killpoints import BASELINE_POINTS, TRIAL_POINTS  # noqa: E402
from tuner.engine.storage import driver_url  # noqa: E402

TUNER = [sys.executable, "-m", "tuner"]


@dataclass
class Outcome:
    fault: str
    tried: int = 1
    survived: int = 0
    lost: int = 0
    remeasured: int = 0
    wrong: int = 0
    note: str = ""


def env_for(**extra: str) -> dict:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for var in ("TUNER_TEST_KILL_AT", "TUNER_HEARTBEAT_INTERVAL_S", "TUNER_HEARTBEAT_GRACE_S",
                "TUNER_STORAGE_PATIENCE_S", "TUNER_SQLITE_TIMEOUT_S"):
        env.pop(var, None)
    env.update(extra)
    return env


def start(argv, env, cwd: Path, log: Path) -> subprocess.Popen:
    return start_argv([*TUNER, *argv], env, cwd, log)


def start_argv(argv, env, cwd: Path, log: Path) -> subprocess.Popen:
    with open(log, "w") as f:
        return subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True)


def finished(procs, logs, timeout_s: float = 1800, ok=(0,)) -> int:
    """How many of ``procs`` exited with an ``ok`` status and printed no traceback."""
    good = 0
    for p, log in zip(procs, logs):
        try:
            code = p.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            p.kill()
            code = p.wait()
        good += code in ok and "Traceback" not in log.read_text(errors="replace")
    return good


def audit(url: str, name: str, workdirs: list[Path], unfinished: int = 0) -> tuple[int, int, int, str]:
    """(lost, re-measured, wrong numbers kept, detail) of a study after its workers are done.
    ``unfinished``: launches the fault cut off before their suite finished (no measurement to lose)."""
    import optuna
    from optuna.trial import TrialState

    storage = optuna.storages.RDBStorage(driver_url(url))
    try:
        trials = optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False)
        base = optuna.load_study(study_name=name + ".baseline", storage=storage).get_trials(deepcopy=False)
    finally:
        storage.engine.dispose()
    by_number = {t.number: t for t in trials}
    done = [t for t in trials if t.state == TrialState.COMPLETE and t.user_attrs.get("status") in ("measured", "failed")]
    stored = {str(t.user_attrs.get("replayed_from", t.number)) for t in done}
    launches: dict[str, int] = {}
    for wd in workdirs:
        for label, n in launches_by_trial(wd).items():
            launches[label] = launches.get(label, 0) + n
    # a baseline launch is stored when measured, or failed with its class (a failed baseline stops
    # its worker: there is nothing to lose)
    base_done = sum(1 for t in base if (t.state == TrialState.COMPLETE and t.user_attrs.get("status") == "measured")
                    or (t.state == TrialState.FAIL and t.user_attrs.get("failure_class")))
    lost = max(0, launches.pop("baseline", 0) - base_done)
    lost += sum(n - (1 if label in stored else 0) for label, n in launches.items())
    lost = max(0, lost - unfinished)
    # a setting the sampler chose to measure again (remeasure_of, tuner.engine.trial.REMEASURE_ATTR)
    # is a second reading on purpose, not a repeat the fault caused
    keys = [t.user_attrs.get("effective_key") for t in done if t.user_attrs.get("remeasure_of") is None]
    wrong = [wrong_number(t, by_number) for t in trials]
    why = [w for w in wrong if w]
    for wd in workdirs:
        left = list((wd / "journal").glob("*.json"))
        if left:
            lost += len(left)
            why.append(f"{len(left)} journal entries never replayed")
    return lost, len(keys) - len(set(keys)), sum(1 for w in wrong if w), "; ".join(why)


def wrong_number(t, by_number: dict) -> str:
    """Why trial ``t`` holds a number that is not its own measurement's ("" when it does not)."""
    from optuna.trial import TrialState

    from tuner.bench.result import SuiteResult

    status, a = t.user_attrs.get("status"), t.user_attrs
    if t.state == TrialState.RUNNING:
        return f"trial {t.number} left RUNNING"
    if t.state != TrialState.COMPLETE:
        return ""
    if status == "measured":
        expect = [a.get("single_speedup"), a.get("speedup@32")]
        if not t.values or None in expect or any(abs(v - e) > 1e-9 for v, e in zip(t.values, expect)):
            return f"trial {t.number}: values {t.values} are not its figures' {expect}"
        suite = a.get("suite_json")
        if suite and Path(suite).exists():
            on_disk = SuiteResult.load(suite).single_tok_per_s
            if on_disk is None or abs(on_disk - a["single_tok_per_s"]) > 1e-6 * max(1.0, on_disk):
                return f"trial {t.number}: stored figures differ from {suite}"
        return ""
    if status == "reused":
        source = by_number.get(a.get("reused_from"))
        if source is None or source.state != TrialState.COMPLETE or t.values != source.values:
            return f"trial {t.number}: reused without its source's values"
        return ""
    return "" if status in ("failed", "invalid") else f"trial {t.number}: COMPLETE with status {status!r}"


@contextmanager
def postgres(folder: Path):
    with throwaway_server(folder / "pg.url") as url_file:
        yield PgCluster(url_file)


def two_pg_workers(cluster: PgCluster, folder: Path, name: str, budget: int, strike) -> Outcome:
    """Two workers on one PostgreSQL study; ``strike(workdirs, procs)`` inflicts the fault."""
    url = cluster.database()
    env = env_for(TUNER_STORAGE=url)
    path = study_file(folder, name, budget)
    subprocess.run([*TUNER, "study", "create", str(path)], env=env, cwd=folder, check=True, capture_output=True)
    workdirs = [folder / f"{name}-a", folder / f"{name}-b"]
    logs = [folder / f"{name}-a.log", folder / f"{name}-b.log"]
    procs = [start(["study", "run", str(path), "--workdir", str(wd)], env, folder, log) for wd, log in zip(workdirs, logs)]
    note, tried = strike(workdirs, procs)
    ok = finished(procs, logs)
    waited = sum("answers again" in log.read_text() for log in logs)
    lost, again, wrong, why = audit(url, name, workdirs)
    note = f"{note}; {ok}/2 workers exited 0, {waited} printed that they waited for the storage"
    return Outcome(name, tried, tried if ok == 2 else 0, lost, again, wrong, "; ".join(filter(None, [note, why])))


def pg_outage(cluster: PgCluster, folder: Path, outage_s: float) -> Outcome:
    def strike(workdirs, procs):
        wait_for(lambda: any(trial_server_up(wd) is not None for wd in workdirs), 600, "a trial", procs)
        cluster.stop()
        time.sleep(outage_s)
        cluster.start()
        return f"server down {outage_s:.0f} s mid-trial", 1

    return two_pg_workers(cluster, folder, f"pg-outage-{outage_s:.0f}s", 6, strike)


def pg_restarts(cluster: PgCluster, folder: Path) -> Outcome:
    def strike(workdirs, procs):
        seen, n = -1, 0

        def next_trial():
            found = [t for t in (trial_server_up(wd, seen) for wd in workdirs) if t is not None]
            return max(found) if found else None

        while n < 5 and any(p.poll() is None for p in procs):
            try:
                seen = wait_for(next_trial, 300, "the next trial", procs)
            except AssertionError:  # the workers finished first
                break
            time.sleep(0.5)  # about when its suite ends and the record step begins
            cluster.stop()
            cluster.start()
            n += 1
        return "restarted as trials finished their suites", n

    return two_pg_workers(cluster, folder, "pg-restarts", 8, strike)


def pg_patience(cluster: PgCluster, folder: Path, outage_s: float) -> Outcome:
    name = "pg-patience"
    url = cluster.database()
    env = env_for(TUNER_STORAGE=url, TUNER_STORAGE_PATIENCE_S="30")
    path = study_file(folder, name, 3)
    wd, log = folder / name, folder / f"{name}.log"
    proc = start(["study", "run", str(path), "--workdir", str(wd)], env, folder, log)
    wait_for(lambda: trial_server_up(wd), 600, "a trial", [proc])
    cluster.stop()
    first_ok = finished([proc], [log], ok=(75,))
    errors = [line for line in log.read_text().splitlines() if line.startswith("error:")]
    time.sleep(max(0.0, outage_s - 30))
    cluster.start()
    log2 = folder / f"{name}-again.log"
    again = start(["study", "run", str(path), "--workdir", str(wd)], env, folder, log2)
    second_ok = finished([again], [log2])
    lost, re, wrong, why = audit(url, name, [wd])
    note = f"first run: exit 75, {len(errors)} error line; rerun replayed: " + \
        str("replayed from the journal" in log2.read_text())
    return Outcome(name, 1, int(first_ok and second_ok and len(errors) == 1), lost, re, wrong,
                   "; ".join(filter(None, [note, why])))


def kill_point(folder: Path, point: str) -> Outcome:
    name = "kill-" + point.replace(".", "-").replace("@", "-")
    db = folder / f"{name}.db"
    path = study_file(folder, name, 3, storage=f"sqlite:///{db}")
    wd = folder / name
    run = [*TUNER, "study", "run", str(path), "--workdir", str(wd)]
    killed = subprocess.run(run, env=env_for(TUNER_TEST_KILL_AT=point), cwd=folder, capture_output=True, text=True)
    rerun = subprocess.run(run, env=env_for(), cwd=folder, capture_output=True, text=True)
    (folder / f"{name}.log").write_text(killed.stdout + killed.stderr + "\n--- rerun ---\n" + rerun.stdout + rerun.stderr)
    step = point.split("@")[0].removeprefix("baseline.")
    # Killed before its suite finished: that launch measured nothing (its setting is measured again).
    unfinished = 1 if step in ("launched",) else 0
    lost, again, wrong, why = audit(f"sqlite:///{db}", name, [wd], unfinished)
    ok = killed.returncode == -9 and rerun.returncode == 0 and "Traceback" not in rerun.stdout + rerun.stderr
    note = "killed between the suite's end and the journal write: that measurement is gone" if step == "measured" else ""
    return Outcome(f"kill:{point}", 1, int(ok), lost, again, wrong, "; ".join(filter(None, [note, why])))


def sqlite_fault(folder: Path, name: str, strike, **env) -> Outcome:
    db = folder / f"{name}.db"
    path = study_file(folder, name, 4, storage=f"sqlite:///{db}")
    wd, log = folder / name, folder / f"{name}.log"
    proc = start(["study", "run", str(path), "--workdir", str(wd)], env_for(**env), folder, log)
    wait_for(lambda: trial_server_up(wd), 600, "a trial", [proc])
    note = strike(db, wd)
    survived = finished([proc], [log])
    waited = "answers again" in log.read_text()
    lost, again, wrong, why = audit(f"sqlite:///{db}", name, [wd])
    note = f"{note}; the worker {'waited it out' if waited else 'never noticed'}"
    return Outcome(name, 1, survived, lost, again, wrong, "; ".join(filter(None, [note, why])))


def hold_lock(db: Path, wd: Path) -> str:
    conn = sqlite3.connect(db, timeout=60, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    time.sleep(30)
    conn.execute("COMMIT")
    conn.close()
    return "write lock held 30 s, busy timeout 5 s"


def read_only_then_back(db: Path, wd: Path) -> str:
    with read_only(db):
        time.sleep(30)
    return "database file read-only for 30 s"


def moved_away_and_back(db: Path, wd: Path) -> str:
    aside = db.with_suffix(".aside")
    db.rename(aside)
    time.sleep(30)
    aside.rename(db)
    return "database file moved away for 30 s"


def workdir_full(folder: Path) -> Outcome:
    """The disk fills mid-trial: that trial's figures are stored (its files are warnings); the next
    launch cannot write its log, so the worker stops with one line; with room again, a rerun goes on."""
    name = "workdir-full"
    db = folder / f"{name}.db"
    path = study_file(folder, name, 3, storage=f"sqlite:///{db}")
    with small_disk(folder / name) as wd:
        log, log2 = folder / f"{name}.log", folder / f"{name}-again.log"
        proc = start(["study", "run", str(path), "--workdir", str(wd)], env_for(), folder, log)
        wait_for(lambda: trial_server_up(wd), 600, "a trial", [proc])
        disk_trouble(wd)
        stopped = finished([proc], [log], ok=(1,)) and sum(line.startswith("error: workdir")
                                                          for line in log.read_text().splitlines()) == 1
        disk_trouble_over(wd)
        again = start(["study", "run", str(path), "--workdir", str(wd)], env_for(), folder, log2)
        survived = stopped and finished([again], [log2])
        lost, re, wrong, why = audit(f"sqlite:///{db}", name, [wd], unfinished=1)
        warnings = log.read_text().count("warning: trial")
    note = f"{warnings} file warnings, figures stored; the next launch stopped with one line, rerun after freeing"
    return Outcome(name, 1, int(survived), lost, re, wrong, "; ".join(filter(None, [note, why])))


def table(rows: list[Outcome]) -> str:
    head = ["fault", "tried", "survived", "lost", "re-measured", "wrong kept", "notes"]
    # tried: faults inflicted; survived: of those, the ones every worker came through as it should
    cells = [[r.fault, r.tried, r.survived, r.lost, r.remeasured, r.wrong, r.note] for r in rows]
    total = ["total", *(sum(r[i] for r in cells) for i in range(1, 6)), ""]
    cells.append(total)
    widths = [max(len(str(c[i])) for c in [head, *cells]) for i in range(6)]
    fmt = lambda c: "  ".join(str(v).ljust(w) for v, w in zip(c[:6], widths)) + "  " + str(c[6])  # noqa: E731
    return "\n".join([fmt(head), fmt(["-" * w for w in widths] + ["-----"]), *map(fmt, cells)])


def attempt(fault: str, folder: Path, run) -> Outcome:
    """``run()``, or an Outcome that says what broke (with the end of the worker's log)."""
    try:
        return run()
    except Exception as exc:  # noqa: BLE001 - one fault's failure must not hide the others'
        logs = sorted(folder.glob(f"{fault}*.log"), key=lambda p: p.stat().st_mtime)
        tail = logs[-1].read_text(errors="replace").strip().splitlines()[-3:] if logs else []
        return Outcome(fault, 1, 0, note=f"{type(exc).__name__}: {exc}; log: {' | '.join(tail)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="run only these faults (name prefixes: pg, kill, sqlite, workdir)")
    parser.add_argument("--outage-s", type=float, default=60.0, help="length of the PostgreSQL outage")
    parser.add_argument("--keep", default=None, help="work in this folder and keep it (logs, studies)")
    parser.add_argument("--random", type=int, default=0, metavar="N",
                        help="instead: N faults at random instants of running studies (benchmarks/random_faults.py)")
    parser.add_argument("--seed", type=int, default=1, help="the random mode's seed (kinds, instants, lengths)")
    args = parser.parse_args()
    if args.random:
        return random_mode(args)
    wanted = lambda name: not args.only or any(name.startswith(p) for p in args.only)  # noqa: E731
    rows: list[Outcome] = []

    def add(fault: str, folder: Path, run) -> None:
        rows.append(attempt(fault, folder, run))
        print(table(rows[-1:]).splitlines()[2], flush=True)

    with tempfile.TemporaryDirectory(prefix="tuner-faults-") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if wanted("pg"):
            with postgres(folder) as cluster:
                add(f"pg-outage-{args.outage_s:.0f}s", folder, lambda: pg_outage(cluster, folder, args.outage_s))
                add("pg-restarts", folder, lambda: pg_restarts(cluster, folder))
                add("pg-patience", folder, lambda: pg_patience(cluster, folder, args.outage_s))
        if wanted("kill"):
            for point in [f"{p}@2" for p in TRIAL_POINTS] + list(BASELINE_POINTS):
                add("kill-" + point.replace(".", "-").replace("@", "-"), folder, lambda: kill_point(folder, point))
        if wanted("sqlite"):
            add("sqlite-lock", folder, lambda: sqlite_fault(folder, "sqlite-lock", hold_lock, TUNER_SQLITE_TIMEOUT_S="5"))
            add("sqlite-readonly", folder, lambda: sqlite_fault(folder, "sqlite-readonly", read_only_then_back))
            add("sqlite-moved", folder, lambda: sqlite_fault(folder, "sqlite-moved", moved_away_and_back))
        if wanted("workdir"):
            add("workdir-full", folder, lambda: workdir_full(folder))
    print()
    print(table(rows))


def random_mode(args) -> None:
    import random_faults

    random_faults.campaign_main(args, sys.modules[__name__])


if __name__ == "__main__":
    main()
