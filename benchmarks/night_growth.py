"""What a long night does to the tuner process: per-trial cost, memory, fds and threads as trials accumulate.

Runs one worker (:func:`tuner.engine.runner.run_study`, as ``tuner study run`` does) on
``server.backend: model`` (no server: thousands of trials in minutes) and prints, at trial counts
10, 100, 1000 ... (``--checkpoints``):

* the mean wall time of the last trials' bookkeeping (ask, rules, record, tell: everything but a
  server, which the model backend does not have), per trial;
* the worker's RSS, open file descriptors and threads (psutil), and the SQLite file's size;
* the wall time of ``tuner study status``, ``pareto`` and ``export`` on the study as it stands
  (a fresh process each, as a person runs them in the morning).

Prints figures; asserts nothing (the behaviour is tested in ``tests/``).

    nice -n 5 python benchmarks/night_growth.py [--trials 1000] [--checkpoints 10,100,1000]
        [--sampler auto] [--dir /tmp/night-growth]
"""

from __future__ import annotations

import argparse
import warnings
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPACE = """algorithm: EAGLE3
params:
  speculative_num_steps: {low: 1, high: 16}
  speculative_eagle_topk: {choices: [1, 2, 4, 8, 16]}
  speculative_num_draft_tokens: {low: 2, high: 128}
fixed: {}
"""

STUDY = """name: growth
search_space: space.yaml
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 1, load_s: 1}}
bench:
  suite: quick
objectives: [single_speedup, speedup@32]
sampler: {{name: {sampler}, seed: 0}}
budget:
  n_trials: {trials}
  prune: false
"""


def _timed(argv: list[str], cwd: Path) -> tuple[float, int]:
    t = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t, done.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--checkpoints", default="10,100,1000")
    ap.add_argument("--sampler", default="auto")
    ap.add_argument("--window", type=int, default=10, help="trials the per-trial mean is taken over")
    ap.add_argument("--dir", default=None, help="work folder (default: a temporary one, removed)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message=r".*experimental")  # as the CLI does

    import psutil

    from tuner.config.study import load_study
    from tuner.config.suite import load_suite
    from tuner.engine.backends import make_backend
    from tuner.engine.runner import run_study
    from tuner.engine.study import config_from_study, create_study, open_study

    folder = Path(args.dir or tempfile.mkdtemp(prefix="night-growth-"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "space.yaml").write_text(SPACE)
    (folder / "study.yaml").write_text(STUDY.format(sampler=args.sampler, trials=args.trials))
    db = folder / "growth.db"
    url = f"sqlite:///{db}"
    checkpoints = sorted(int(c) for c in args.checkpoints.split(","))
    me = psutil.Process()
    tuner = [sys.executable, "-c", "from tuner.cli import main; main()"]  # this interpreter's tuner

    config = load_study(folder / "study.yaml")
    create_study(config, url)
    cfg, space, suite = config_from_study(open_study(config.name, url), str(folder / "growth"))
    backend = make_backend(cfg, space, load_suite(suite))
    print(f"# {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; sampler {args.sampler}, "
          f"{len(space.effective_configs())} effective settings; {folder}")
    print(f"{'trials':>7} {'ms/trial':>9} {'rss MiB':>8} {'fds':>4} {'thr':>4} {'db KiB':>7} "
          f"{'status s':>8} {'pareto s':>8} {'export s':>8}")
    stamps: list[float] = []
    pending = list(checkpoints)

    def on_event(kind: str, info: dict) -> None:
        if kind != "progress":
            return
        stamps.append(time.monotonic())
        n = len(stamps)
        if pending and n >= pending[0]:
            pending.pop(0)
            w = stamps[-args.window - 1:] if n > args.window else stamps
            per = (w[-1] - w[0]) / max(1, len(w) - 1) * 1000
            with me.oneshot():
                rss, fds, thr = me.memory_info().rss / 2**20, me.num_fds(), me.num_threads()
            st, _ = _timed([*tuner, "study", "status", "study.yaml", "-f", "json"], folder)
            pa, _ = _timed([*tuner, "study", "pareto", "study.yaml", "-f", "json"], folder)
            out = folder / f"best-{n}.yaml"
            ex, _ = _timed([*tuner, "study", "export", "study.yaml", "--pick", "knee", "-o", str(out)], folder)
            print(f"{n:>7} {per:>9.1f} {rss:>8.1f} {fds:>4} {thr:>4} {db.stat().st_size // 1024:>7} "
                  f"{st:>8.2f} {pa:>8.2f} {ex:>8.2f}", flush=True)
            stamps.append(time.monotonic())  # the readers' time is not the next trial's
            stamps.pop(-2)

    summary = run_study(cfg, url, backend, on_event=on_event)
    print(f"# stopped: {summary.stopped_because}; {summary.launches} launches, {summary.invalid} invalid, "
          f"{summary.reused} reused")
    if not args.dir:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
