"""How long a ``tuner`` command takes to start: the median wall time of N runs, per command.

Users run ``tuner study status`` often, and the test suite runs the CLI as a subprocess thousands of
times; nearly all of a short command's time is imports. This runs each common command N times as
its own process (as a user's shell does) and prints its median and fastest wall time, its median CPU
time (user + system: less swayed than wall time by other work on a shared machine), and how many
modules it imported (``python -X importtime``). ``--tree`` times another checkout's ``tuner`` (put
first on ``PYTHONPATH``), so a change's before and after are measured by the same script:

    python benchmarks/cli_startup.py [--runs 15] [--only status] [--tree /path/to/other/checkout]

The study the reading commands read is made first, in a temporary folder: ``studies/model-demo.yaml``
(backend model: no server, seconds) run for 4 trials. ``run --dry-run`` stands for a run's first
line: it prints the plan a run starts from, after the same checks. The figures are this machine's
at this moment: compare runs made one after the other, on an idle machine when possible.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> the arguments after ``python -m tuner``; ``S`` is the study file, run in its folder
COMMANDS = {
    "--help": ["--help"],
    "status --help": ["study", "status", "--help"],
    "status": ["study", "status", "S.yaml"],
    "pareto": ["study", "pareto", "S.yaml"],
    "export": ["study", "export", "S.yaml", "--pick", "knee", "-o", "best.yaml"],
    "list": ["study", "list", "--storage", "sqlite:///S.db"],
    "doctor": ["doctor", "S.yaml"],
    "run --dry-run": ["study", "run", "S.yaml", "--dry-run"],
    "space list": ["space", "list", "eagle3"],
}


#: the checkout whose ``tuner`` is timed (``--tree``); None: the one this interpreter imports
TREE: Path | None = None


def _tuner(args: list[str], cwd: Path, extra: list[str] = ()) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "160"}
    env.pop("TUNER_STORAGE", None)
    if TREE is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TREE), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, *extra, "-m", "tuner", *args], cwd=cwd, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)


def _make_study(folder: Path) -> None:
    """A finished 4-trial model study in ``folder`` (``S.yaml``, its storage ``S.db``)."""
    text = (ROOT / "studies" / "model-demo.yaml").read_text()
    text = text.replace("name: model-demo", "name: S").replace("n_trials: 16", "n_trials: 4")
    (folder / "S.yaml").write_text(text)
    out = _tuner(["study", "run", "S.yaml"], folder)
    if out.returncode != 0:
        sys.exit(f"error: could not make the study to read: {out.stderr.strip()[-500:]}")


def _modules(args: list[str], cwd: Path) -> int:
    """How many modules the command imports (the lines of ``-X importtime``)."""
    out = _tuner(args, cwd, ["-X", "importtime"])
    return sum(1 for line in out.stderr.splitlines() if line.startswith("import time:") and "[us]" not in line)


def _cpu_s() -> float:
    """User + system CPU seconds of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    global TREE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs per command (default 15)")
    parser.add_argument("--only", action="append", default=None, help="only this command (repeatable)")
    parser.add_argument("--tree", type=Path, default=None, help="time this checkout's tuner instead")
    args = parser.parse_args()
    TREE = args.tree.resolve() if args.tree else None
    chosen = {k: v for k, v in COMMANDS.items() if args.only is None or k in args.only}
    folder = Path(tempfile.mkdtemp(prefix="tuner-cli-startup-"))
    try:
        _make_study(folder)
        print(f"{'command':<16} {'median s':>9} {'min s':>7} {'cpu s':>7} {'modules':>8}   "
              f"(tuner from {TREE or 'this interpreter'}, python {sys.version.split()[0]}, {args.runs} runs, "
              f"load {os.getloadavg()[0]:.1f})")
        for name, argv in chosen.items():
            times, cpus = [], []
            for _ in range(args.runs):
                start, cpu = time.perf_counter(), _cpu_s()
                out = _tuner(argv, folder)
                times.append(time.perf_counter() - start)
                cpus.append(_cpu_s() - cpu)
                if out.returncode != 0:
                    sys.exit(f"error: tuner {' '.join(argv)} exited {out.returncode}: {out.stderr.strip()[-300:]}")
            print(f"{name:<16} {statistics.median(times):9.3f} {min(times):7.3f} {statistics.median(cpus):7.3f} "
                  f"{_modules(argv, folder):8d}", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
