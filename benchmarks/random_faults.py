"""The fault campaign's held-out random mode (``fault_campaign.py --random N --seed S``): faults at
moments the code was not designed around.

The named faults strike at the code's own kill points and at "a trial's server is up" moments; a
real night does not pick its moments. Here each fault strikes at a uniformly random instant of a
running study: two ``tuner study run`` workers on one PostgreSQL study (a throwaway server of
``.ci/postgres.sh``), the simulator on 127.0.0.1, real signals. Worker 1 runs under another hostname
(``unshare --uts``, when the machine allows it): to worker 0 it is another node, judged by its
heartbeat alone, as on a cluster (a worker of the same host is judged by its pid). The instant is drawn over the length
of a fault-free run of the same study, measured first (the ``none`` row); the kind of fault and its
length are drawn from the same seeded generator, so ``--seed S`` replays the same draws (the moments
the processes are in at those instants differ from run to run: the machine is shared).

Kinds (:data:`KINDS`):

* ``kill-group``: SIGKILL a worker's process group and its server's (the tuner and its server, as a
  node that dies); the other worker goes on; the killed worker's workdir is run again afterwards
  (its journal replayed, its orphans cleaned), as the next night would;
* ``stop-worker``: SIGSTOP one tuner worker (not its server) for 5-90 s while the second runs, then
  SIGCONT: past the heartbeat grace (40 s) the other worker takes its trial for dead;
* ``stop-server``: SIGSTOP the server of a running launch for 45-75 s (longer than the watchdog's
  silence, 30 s, and than nothing else), then SIGCONT if it is still there;
* ``kill-server``: SIGKILL the server of a running launch;
* ``pg-restart-fast`` / ``pg-restart-immediate``: ``pg_ctl restart -m fast|immediate``;
* ``pg-terminate``: ``pg_terminate_backend`` of every connection to the study's database.

Counted as the named faults are (:func:`fault_campaign.audit`), except that a measurement the worker
dropped on purpose (its trial failed with a note saying why, e.g. "the tuner itself stood still", and
its setting measured by another trial) is counted *dropped*, not lost; plus what was left running: servers
(any process carrying this run's mark in its environment once the workers are done) and trials
RUNNING; and each worker's exit code and last line.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import psutil

KINDS = ("kill-group", "stop-worker", "stop-server", "kill-server", "pg-restart-fast", "pg-restart-immediate",
         "pg-terminate")
BUDGET = 6  # launches per study
MARK = "TUNER_FAULT_CAMPAIGN_RUN"  # in every worker's environment, so in every server's too


@dataclass
class Draw:
    n: int
    kind: str
    at: float  #: fraction of the fault-free run's length
    length_s: float = 0.0  #: how long a stop lasts
    worker: int = 0  #: which worker (0 or 1) a worker/server fault hits


def draws(n: int, seed: int) -> list[Draw]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind = rng.choice(KINDS)
        at = rng.uniform(0.02, 0.95)
        length = {"stop-worker": rng.uniform(5, 90), "stop-server": rng.uniform(45, 75)}.get(kind, 0.0)
        out.append(Draw(i + 1, kind, at, round(length, 1), rng.randrange(2)))
    return out


def servers(workdir: Path) -> list[dict]:
    """The running servers' records of a workdir (``servers/PID.json``), live ones only."""
    import json

    out = []
    for rec in (workdir / "servers").glob("*.json"):
        try:
            r = json.loads(rec.read_text())
        except (OSError, ValueError):
            continue
        if psutil.pid_exists(r["pid"]):
            out.append(r)
    return out


def left_running(run_mark: str) -> list[str]:
    """Processes still alive that carry ``run_mark`` (a server, a tuner) after its workers are done."""
    out = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if p.environ().get(MARK) == run_mark and p.status() != psutil.STATUS_ZOMBIE:
                out.append(f"{p.pid} {' '.join(p.info['cmdline'] or [])[:80]}")
        except (psutil.Error, OSError):
            continue
    return out


def terminate_backends(cluster, url: str) -> int:
    import sqlalchemy as sa

    db = url.rsplit("/", 1)[1]
    su = sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?host={cluster.dir}/sock&port={cluster.port}",
                          isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with su.connect() as conn:
            return len(conn.execute(sa.text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :db AND pid <> pg_backend_pid()"),
                {"db": db}).all())
    finally:
        su.dispose()


def restart(cluster, mode: str) -> None:
    """``pg_ctl restart -m mode``, the server back with durable commits: ``.ci/postgres.sh`` runs it
    with ``synchronous_commit=off`` (fast tests), under which ``-m immediate`` forgets commits it had
    acknowledged (up to three WAL-writer delays' worth: some 600 ms). The tuner cannot keep what the
    database told it was kept and then lost; seed 2's first run met it twice (a trial gone right after
    its INSERT, a measured trial's status gone while its tell stayed), so the mode runs PostgreSQL as
    it ships, ``synchronous_commit=on`` (:func:`durable`)."""
    opts = (f"-c listen_addresses=127.0.0.1 -c port={cluster.port} -c unix_socket_directories={cluster.dir}/sock "
            "-c fsync=off -c synchronous_commit=on -c full_page_writes=off -c max_connections=200")
    cluster._ctl("-m", mode, "-l", str(cluster.dir / "server.log"), "-w", "-t", "60", "-o", opts, "restart")


def durable(cluster) -> None:
    """The cluster restarted with ``synchronous_commit=on`` (see :func:`restart`); ``fsync=off`` stays:
    an immediate shutdown is a crash of the server, not of the machine, and the kernel keeps what was
    written."""
    restart(cluster, "fast")


def other_node(argv: list[str]) -> list[str]:
    """``argv`` under another hostname (a private UTS namespace), or as it is where there is none."""
    probe = subprocess.run(["unshare", "--uts", "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        return argv
    return ["unshare", "--uts", "sh", "-c", 'hostname node-b && exec "$@"', "sh", *argv]


def dropped(url: str, name: str, logs: list[Path]) -> int:
    """Trials failed as ``interrupted`` whose worker said it dropped their measurement (``trial N: the
    tuner itself stood still``) and whose setting another trial measured. Failed by its own worker
    or, paused past the heartbeat's grace, by another as dead: either way dropped, not lost."""
    import optuna
    from optuna.trial import TrialState

    from tuner.engine.storage import driver_url

    storage = optuna.storages.RDBStorage(driver_url(url))
    try:
        trials = optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False)
    finally:
        storage.engine.dispose()
    measured = {t.user_attrs.get("effective_key") for t in trials
                if t.state == TrialState.COMPLETE and t.user_attrs.get("status") == "measured"}
    said = "\n".join(log.read_text(errors="replace") for log in logs)
    # status "interrupted": failed by its own worker (or by a reaper of its host); no status at all:
    # failed by another host's worker as stale (tuner.engine.workers._fail_stale writes the FAIL
    # alone; `tuner study status` words the note). The second was counted lost (seed 9103, draw 8:
    # worker 1 stopped 76 s mid-suite, its trial failed by heartbeat, its setting measured as trial 6).
    return sum(1 for t in trials if t.state == TrialState.FAIL
               and t.user_attrs.get("status") in ("interrupted", None)
               and f"trial {t.number}: the tuner itself stood still" in said
               and t.user_attrs.get("effective_key") in measured)


def label(record: dict) -> str:
    """"trial N" or "baseline": whose server a record is."""
    folder = Path(record["log_path"]).parent.name
    return f"trial {folder}" if folder.isdigit() else folder


def one_server(workdir: Path, procs, timeout_s: float = 120) -> dict | None:
    """A live server of ``workdir`` (the first one up from now), or None when the workers end first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        found = servers(workdir)
        if found:
            return found[0]
        time.sleep(0.05)
    return None


def strike(d: Draw, cluster, url: str, workdirs: list[Path], procs) -> str:
    """Inflict ``d`` now; what was done, in a few words."""
    me, other = procs[d.worker], procs[1 - d.worker]
    if d.kind in ("kill-group", "stop-worker", "stop-server", "kill-server") and me.poll() is not None:
        return f"worker {d.worker} had ended: not inflicted"
    if d.kind == "kill-group":
        hit = servers(workdirs[d.worker])
        for pg in [me.pid, *(r["pgid"] for r in hit)]:
            try:
                os.killpg(pg, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return f"worker {d.worker} and {len(hit)} server(s) SIGKILLed ({', '.join(label(r) for r in hit)})"
    if d.kind == "stop-worker":
        if other.poll() is not None:
            return "the other worker had ended: not inflicted"
        os.kill(me.pid, signal.SIGSTOP)
        time.sleep(d.length_s)
        os.kill(me.pid, signal.SIGCONT)
        return f"worker {d.worker} stopped {d.length_s:.0f} s"
    if d.kind in ("stop-server", "kill-server"):
        r = one_server(workdirs[d.worker], [me])
        if r is None:
            return "no server came up before the worker ended: not inflicted"
        what = label(r)
        if d.kind == "kill-server":
            os.kill(r["pid"], signal.SIGKILL)
            return f"server of {what} SIGKILLed"
        os.kill(r["pid"], signal.SIGSTOP)
        end = time.monotonic() + d.length_s
        while time.monotonic() < end and psutil.pid_exists(r["pid"]):
            time.sleep(0.2)
        try:
            os.kill(r["pid"], signal.SIGCONT)
        except ProcessLookupError:
            pass
        return f"server of {what} stopped {d.length_s:.0f} s"
    if d.kind.startswith("pg-restart"):
        restart(cluster, d.kind.rsplit("-", 1)[1])
        return f"pg_ctl restart -m {d.kind.rsplit('-', 1)[1]}"
    if d.kind == "pg-terminate":
        return f"{terminate_backends(cluster, url)} backends terminated"
    raise ValueError(d.kind)


def last_line(log: Path) -> str:
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    return (errors or lines or [""])[-1][:160]


def run_one(d: Draw | None, cluster, folder: Path, length_s: float, campaign) -> tuple:
    """One study under one fault (``d`` None: fault-free); (Outcome, seconds the study ran)."""
    name = f"rnd-{d.n:02d}-{d.kind}" if d else "rnd-none"
    url = cluster.database()
    run_mark = uuid.uuid4().hex
    env = campaign.env_for(TUNER_STORAGE=url, **{MARK: run_mark})
    path = campaign.study_file(folder, name, BUDGET)
    # speedup 5, not 20: on a machine this loaded the simulator falls behind model time at 20, and a
    # baseline read slow fails good settings as bad_response (seen in this mode's first runs); a
    # slower clock also makes the suites long enough for a random instant to land in one
    path.write_text(path.read_text().replace("speedup: 20,", "speedup: 5,"))
    subprocess.run([*campaign.TUNER, "study", "create", str(path)], env=env, cwd=folder, check=True,
                   capture_output=True)
    workdirs = [folder / f"{name}-a", folder / f"{name}-b"]
    logs = [folder / f"{name}-a.log", folder / f"{name}-b.log"]
    t0 = time.monotonic()
    procs = [campaign.start(["study", "run", str(path), "--workdir", str(workdirs[0])], env, folder, logs[0]),
             campaign.start_argv(other_node([*campaign.TUNER, "study", "run", str(path), "--workdir",
                                             str(workdirs[1])]), env, folder, logs[1])]
    note = ""
    if d is not None:
        while time.monotonic() - t0 < d.at * length_s and any(p.poll() is None for p in procs):
            time.sleep(0.05)
        when = time.monotonic() - t0
        note = strike(d, cluster, url, workdirs, procs) if any(p.poll() is None for p in procs) \
            else "the study had ended: not inflicted"
        note = f"at {when:.1f} s: {note}"
    codes = []
    for p in procs:
        try:
            codes.append(p.wait(timeout=1800))
        except subprocess.TimeoutExpired:
            p.kill()
            codes.append(p.wait())
    took = time.monotonic() - t0
    exits = [f"{c}: {last_line(log)}" for c, log in zip(codes, logs)]
    killed = d is not None and d.kind == "kill-group" and codes[d.worker] == -9
    rerun_ok = True
    if killed:  # the next night: the killed worker's workdir runs again
        log2 = folder / f"{name}-again.log"
        argv = [*campaign.TUNER, "study", "run", str(path), "--workdir", str(workdirs[d.worker])]
        again = campaign.start_argv(other_node(argv) if d.worker else argv, env, folder, log2)
        code = again.wait(timeout=1800)
        exits.append(f"rerun {code}: {last_line(log2)}")
        rerun_ok = code == 0 and "Traceback" not in log2.read_text(errors="replace")
    left = left_running(run_mark)
    tracebacks = sum("Traceback" in log.read_text(errors="replace") for log in logs)
    expected = [(-9 if killed and i == d.worker else 0) for i in range(2)]
    if d is not None and d.kind in ("stop-server", "kill-server") and "baseline" in note:
        # a failed baseline stops its worker with one line (tuner.engine.baseline.BaselineError)
        ok_line = "error: the autoregressive baseline failed" in logs[d.worker].read_text(errors="replace")
        expected[d.worker] = 1 if codes[d.worker] == 1 and ok_line else 0
    survived = int(codes == expected and rerun_ok and not left and tracebacks == 0)
    # a launch whose server the fault killed with its worker measured nothing (the window between a
    # suite's end and its journal write is milliseconds wide; a journaled one is still counted lost
    # when no run replays it)
    cut = int(note.split(" and ", 1)[1].split()[0]) if killed and " and " in note else 0
    lost, again_n, wrong, why = campaign.audit(url, name, workdirs, unfinished=cut)
    drop = dropped(url, name, logs)
    lost = max(0, lost - drop)
    parts = [note, "exits " + " | ".join(exits), f"{took:.0f} s"]
    if drop:
        parts.append(f"{drop} measurement(s) dropped on purpose (the tuner stood still), measured again")
    if left:
        parts.append(f"LEFT RUNNING: {left}")
    if tracebacks:
        parts.append(f"{tracebacks} log(s) with a traceback")
    for p in left:
        try:
            os.kill(int(p.split()[0]), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    if d is None:  # the fault-free run is no fault: it counts in neither column
        parts.insert(0, "fault-free: " + ("as expected" if survived else "NOT as expected"))
        survived = 0
    out = campaign.Outcome(name, 1 if d else 0, survived, lost, again_n, wrong,
                           "; ".join(filter(None, [*parts, why])))
    return out, took


def campaign_main(args, campaign) -> None:
    """``fault_campaign.py --random N --seed S``: the draws, a fault-free run, then one study per draw,
    each row printed as it ends and the table at the end (``campaign``: the fault_campaign module)."""
    import tempfile

    plan = draws(args.random, args.seed)
    for d in plan:
        print(f"draw {d.n}: {d.kind} at {d.at:.2f} of the run, worker {d.worker}"
              + (f", {d.length_s:.0f} s" if d.length_s else ""), flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="tuner-random-faults-") as tmp:
        folder = Path(args.keep or tmp)
        folder.mkdir(parents=True, exist_ok=True)
        with campaign.postgres(folder) as cluster:
            durable(cluster)
            first, length_s = run_one(None, cluster, folder, 0.0, campaign)
            rows.append(first)
            print(f"fault-free run: {length_s:.0f} s", flush=True)
            print(campaign.table(rows[-1:]).splitlines()[2], flush=True)
            for d in plan:
                name = f"rnd-{d.n:02d}-{d.kind}"
                rows.append(campaign.attempt(name, folder, lambda: run_one(d, cluster, folder, length_s, campaign)[0]))
                print(campaign.table(rows[-1:]).splitlines()[2], flush=True)
    print()
    print(campaign.table(rows))
