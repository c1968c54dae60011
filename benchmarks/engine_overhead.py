"""The engine's own cost per trial: CPU seconds, SQLite commits, process-table scans, profile loads.

A long night on a busy node pays the tuner's bookkeeping once per trial: its storage round trips,
its looks at the process table when a server stops (on a GPU node, thousands of processes), its
rereads of the same files. This runs ``tuner study run`` in one process (as a user's shell runs it,
but in-process, so the counts can be taken) on a copy of a shipped study in a temporary folder, once
per study kind, and prints per trial (the baseline counts as one):

* ``cpu s``: the tuner process's own CPU time (user + system; not the simulated server's, a process
  of its own), start-up and imports included;
* ``commits``: SQLAlchemy ``commit`` events on the storage's engine (Optuna's RDB storage commits
  each session, reads included; writes are not to be cut: figures reach storage first);
* ``scans``: whole-table looks at the process list (``psutil.pids()``);
* ``reads``: processes read whole (``psutil.Process.oneshot``) and environments read (the
  ``TUNER_SERVER_MARK`` check);
* ``profiles``: simulator-profile files parsed and validated (``load_model`` of a profile).

``--tree`` measures another checkout (put first on ``PYTHONPATH``), so a change's before and after
are taken by the same script::

    nice -n 10 python benchmarks/engine_overhead.py [--trials 6] [--only sim,model]
        [--tree /path/to/other/checkout]

Prints figures; asserts nothing (the behaviour is tested in ``tests/``). The machine's process count
is printed too: the scans' cost grows with it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: kind -> the shipped study it copies
STUDIES = {"model": "studies/model-demo.yaml", "sim": "studies/sim-demo.yaml"}

# Runs in a child process (the checkout under test first on sys.path): counts, runs, prints JSON.
CHILD = r"""
import json, os, resource, sys, warnings
from pathlib import Path
study, trials = sys.argv[1], sys.argv[2]
counts = {"commits": 0, "scans": 0, "reads": 0, "environ": 0, "profiles": 0}
from sqlalchemy import event
from sqlalchemy.engine import Engine
event.listen(Engine, "commit", lambda conn: counts.__setitem__("commits", counts["commits"] + 1))
import psutil
def counted(owner, name, key):
    real = getattr(owner, name)
    def wrapper(*a, **k):
        counts[key] += 1
        return real(*a, **k)
    setattr(owner, name, wrapper)
counted(psutil, "pids", "scans")
counted(psutil.Process, "oneshot", "reads")
counted(psutil.Process, "environ", "environ")
import tuner.config.yamlfile as yamlfile
real_load = yamlfile.load_model
def load_model(model, *a, **k):
    if model.__name__ == "Profile":
        counts["profiles"] += 1
    return real_load(model, *a, **k)
import tuner.sim.profile as profile
profile.load_model = load_model
from tuner.cli import main
sys.argv = ["tuner", "study", "run", study, "--n-trials", trials]
before = resource.getrusage(resource.RUSAGE_SELF)
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
print("ENGINE_OVERHEAD " + json.dumps({"exit": code, "cpu_s": cpu, "processes": len(psutil.pids()), **counts}))
"""


def measure(kind: str, trials: int, tree: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="engine-overhead-") as tmp:
        study = Path(tmp) / f"{kind}-overhead.yaml"
        study.write_text((ROOT / STUDIES[kind]).read_text().replace(
            f"name: {kind}-demo", f"name: {kind}-overhead"))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))}
        done = subprocess.run([sys.executable, "-c", CHILD, str(study), str(trials)], cwd=tmp, env=env,
                              capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.startswith("ENGINE_OVERHEAD "):
            return json.loads(line.split(" ", 1)[1])
    raise SystemExit(f"{kind}: the run printed no figures (exit {done.returncode}):\n{done.stderr[-2000:]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=6, help="trials per study (default 6)")
    ap.add_argument("--only", default="model,sim", help="study kinds, comma-separated: model, sim")
    ap.add_argument("--tree", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    args = ap.parse_args()
    kinds = [k.strip() for k in args.only.split(",") if k.strip()]
    for kind in kinds:
        if kind not in STUDIES:
            raise SystemExit(f"--only: unknown study kind {kind!r}; give any of {', '.join(STUDIES)}")
    tree = args.tree.resolve()
    print(f"tree {tree}; {args.trials} trials per study; figures per trial (the baseline counts as one)")
    print(f"{'study':<6} {'cpu s':>7} {'commits':>8} {'scans':>6} {'reads':>7} {'environ':>8} {'profiles':>9}"
          f" {'procs':>6} {'exit':>5}")
    for kind in kinds:
        got = measure(kind, args.trials, tree)
        n = args.trials + 1
        print(f"{kind:<6} {got['cpu_s'] / n:7.3f} {got['commits'] / n:8.1f} {got['scans'] / n:6.1f} "
              f"{got['reads'] / n:7.1f} {got['environ'] / n:8.1f} {got['profiles'] / n:9.2f} "
              f"{got['processes']:>6} {got['exit']!s:>5}")


if __name__ == "__main__":
    main()
