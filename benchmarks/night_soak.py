"""A night in minutes: run ``tuner study run STUDY.yaml`` and watch what it does to the machine.

Samples the worker every ``--every`` seconds (psutil): RSS, open file descriptors, threads, child
processes and zombies among them, its TCP sockets by state, the trials in the study's SQLite file,
the file's size and the workdir's size and file count. At the end prints the per-trial slope of
each (least squares over the samples after ``--warmup`` trials; for descriptors and threads, only
those taken between trials, when no server runs: a trial's own connections are not growth), the disk used per trial, and the system's sockets on
127.0.0.1 in TIME_WAIT and CLOSE_WAIT at the last sample. Prints figures; asserts nothing (the
behaviour is tested in ``tests/``).

Use the simulated server sped up, e.g. ``server.sim: {speedup: 200, load_seconds: 0.05}``,
``bench.suite: quick`` and ``budget.n_trials: 200`` (10-20 minutes on 2 cores), or
``benchmarks/night_growth.py`` for thousands of trials on ``server.backend: model``.

    nice -n 5 python benchmarks/night_soak.py STUDY.yaml [--every 5] [--db STUDY.db] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path


def _du(folder: Path) -> tuple[int, int]:
    total = n = 0
    for root, _, files in os.walk(folder):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
                n += 1
            except OSError:
                pass
    return total, n


def _trials(db: Path) -> int | None:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return con.execute("select count(*) from trials").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return None


def _slope(xs: list[float], ys: list[float]) -> float | None:
    if len(xs) < 3 or max(xs) == min(xs):
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _loopback_states() -> dict[str, int]:
    import psutil

    out: dict[str, int] = {}
    for c in psutil.net_connections(kind="tcp"):
        if c.laddr and c.laddr.ip == "127.0.0.1" and c.status in ("TIME_WAIT", "CLOSE_WAIT"):
            out[c.status] = out.get(c.status, 0) + 1
    return out


def main() -> int:
    import psutil

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("study", type=Path)
    ap.add_argument("--every", type=float, default=5.0)
    ap.add_argument("--db", type=Path, help="the study's SQLite file (default: NAME.db beside the file)")
    ap.add_argument("--workdir", type=Path, help="the study's workdir (default: NAME/ beside the file)")
    ap.add_argument("--samples", type=Path, help="also write every sample here, one JSON a line")
    ap.add_argument("--warmup", type=int, default=10, help="trials before the slopes start (imports, baseline)")
    args = ap.parse_args()
    import yaml

    name = yaml.safe_load(args.study.read_text())["name"]
    db = args.db or args.study.parent / f"{name}.db"
    workdir = args.workdir or args.study.parent / name
    tuner = [sys.executable, "-c", "from tuner.cli import main; main()"]
    log = open(args.study.parent / f"{name}.soak.log", "w")
    proc = subprocess.Popen([*tuner, "study", "run", str(args.study)], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    worker = psutil.Process(proc.pid)
    samples: list[dict] = []
    out = open(args.samples, "w") if args.samples else None
    print(f"# {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; worker pid {proc.pid}; log {log.name}")
    print(f"{'t s':>6} {'trials':>6} {'rss MiB':>8} {'fds':>4} {'thr':>4} {'kids':>4} {'zomb':>4} "
          f"{'db KiB':>7} {'workdir KiB':>11} {'files':>6}")
    started = time.monotonic()
    try:
        while proc.poll() is None:
            try:
                with worker.oneshot():
                    rss, fds, thr = worker.memory_info().rss, worker.num_fds(), worker.num_threads()
                kids = worker.children(recursive=True)
                zombies = sum(1 for k in kids if k.status() == psutil.STATUS_ZOMBIE)
                socks: dict[str, int] = {}
                for c in worker.net_connections(kind="inet"):
                    socks[c.status] = socks.get(c.status, 0) + 1
            except psutil.NoSuchProcess:
                break
            size, files = _du(workdir)
            s = dict(t=round(time.monotonic() - started, 1), trials=_trials(db), rss_mib=round(rss / 2**20, 1),
                     fds=fds, threads=thr, kids=len(kids), zombies=zombies, sockets=socks,
                     db_kib=db.stat().st_size // 1024 if db.exists() else 0, workdir_kib=size // 1024,
                     files=files)
            samples.append(s)
            if out:
                out.write(json.dumps(s) + "\n")
                out.flush()
            print(f"{s['t']:>6} {s['trials'] or 0:>6} {s['rss_mib']:>8} {fds:>4} {thr:>4} {len(kids):>4} "
                  f"{zombies:>4} {s['db_kib']:>7} {s['workdir_kib']:>11} {files:>6}", flush=True)
            time.sleep(args.every)
    except KeyboardInterrupt:
        os.killpg(proc.pid, signal.SIGINT)  # the worker's own Ctrl-C: stops its server, queues the trial
        proc.wait(timeout=120)
    steady = [s for s in samples if (s["trials"] or 0) >= args.warmup]  # past imports and the baseline
    between = [s for s in steady if not s["kids"]]  # no server: its connections and threads are not growth
    print(f"# {len(samples)} samples, {len(steady)} after {args.warmup} trials, {len(between)} of them between "
          f"trials; worker exit {proc.poll()}")
    for key, unit, over in (("rss_mib", "MiB", steady), ("fds", "fds", between), ("threads", "threads", between),
                            ("db_kib", "KiB", steady), ("workdir_kib", "KiB", steady), ("files", "files", steady)):
        slope = _slope([float(s["trials"]) for s in over], [float(s[key]) for s in over])
        print(f"per trial: {key} {'n/a' if slope is None else f'{slope:+.3f} {unit}'} ({len(over)} samples)")
    print(f"zombies seen: {sum(s['zombies'] for s in samples)} in {len(samples)} samples; "
          f"sockets on 127.0.0.1 now (every process's): {_loopback_states()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
