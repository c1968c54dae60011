"""How fast is the simulator's baseline, in model time, as the fault tests' studies launch it?

The fault tests (``tests/support/faults.py``) run small studies on the simulator at
``--sim-speedup 20``; a trial whose speedup over the baseline is beyond any accept length fails as
``bad_response``, so a baseline measured slow fails them. This script launches the baseline exactly
as such a study does (the study YAML of ``support.faults.study_file``, the argv of
``tuner.server.command.plan_launch`` with ``spec=None``), runs the study's suite (one 32-token
single request, a C=1 and a C=32 sweep batch of 16 tokens) through the project's client
(``tuner.bench.run_suite``) ``--repeats`` times, and prints, per run:

* single-request, C=1 and C=32 tok/s in model time, next to what the performance model predicts
  (``PerfModel.expected_figures``);
* wall milliseconds per single request (client submission to answer) and the server's own part
  of it (``e2e_latency``), so the wall time the server's clock does not account for shows;
* the C=32 batch's *submission spread* (wall ms from its first submission to its last, as the
  client recorded them) and *submission lag* (to the last request's arrival at the engine: its
  answer's end minus its ``e2e_latency``, so it includes writing the answers back). The engine
  counts a request from its arrival, and the client's span runs from the first submission, so the
  lag is counted into the batch's span x speedup: at 20x, 10 ms of lag is 0.2 model s, a third of
  the batch.

``--slow-collections N`` stands in for the tuner's process on a loaded machine: from the C=32 batch's
first submission on, each of the next N garbage collections in this process takes 0.1 s of wall
time (collections made frequent with a low threshold), as the study worker's first full collection
did when it fell inside a baseline's batch (QA: 0.1-0.43 s). The batch must not be spread by them.

    python benchmarks/sim_throughput.py                 # 3 runs at 20x
    python benchmarks/sim_throughput.py --repeats 5 --speedup 40
    python benchmarks/sim_throughput.py --slow-collections 3
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from machine import load_line  # noqa: E402
from support.faults import study_file  # noqa: E402
from support.simproc import running_sim  # noqa: E402

from tuner.bench import run_suite  # noqa: E402
from tuner.bench.client import BenchClient  # noqa: E402
from tuner.config.study import load_study  # noqa: E402
from tuner.config.suite import load_suite  # noqa: E402
from tuner.server.command import plan_launch, study_max_concurrency  # noqa: E402
from tuner.sim.model import PerfModel, load_profile  # noqa: E402


def baseline_argv(speedup: float) -> tuple[list[str], object]:
    """The baseline's ``python -m tuner.sim`` arguments (port 0) and the study's suite."""
    with tempfile.TemporaryDirectory(prefix="sim-throughput-") as tmp:
        study = load_study(study_file(Path(tmp), "throughput", 1, storage=f"sqlite:///{tmp}/s.db"))
    server = study.server.model_copy(update={"sim": study.server.sim.model_copy(update={"speedup": speedup})})
    plan = plan_launch(server, None, port=0, max_concurrency=study_max_concurrency(study), log_warnings=False)
    return plan.argv[3:], load_suite(study.bench.suite)  # drop "python -m tuner.sim"


def modelled(suite, profile: str, max_bs: int) -> dict:
    """What the performance model predicts for the suite's baseline (model time)."""
    model = PerfModel(load_profile(profile))
    prompts = [p.text or "" for p in suite.prompts]
    fig = model.expected_figures(None, prompts=prompts, single_lengths=list(suite.single.lengths),
                                 concurrencies=list(suite.sweep.concurrencies),
                                 sweep_tokens=suite.sweep.max_tokens, cuda_graph_max_bs=max_bs)
    return {"single": fig.single_tok_per_s, **{f"C={c}": v for c, v in fig.tok_per_s.items()}}


def measure(res, top: int) -> dict:
    single = [r for r in res.records if r.phase == "single" and r.ok]
    batch = [r for r in res.records if r.phase == "sweep" and r.concurrency == top]
    arrivals = [r.end_s - r.server_latency_s for r in batch if r.ok and r.server_latency_s is not None]
    starts = [r.start_s for r in batch]
    return {
        "single": res.single_tok_per_s, "C=1": res.tok_per_s_at(1), f"C={top}": res.tok_per_s_at(top),
        "failed": res.n_failed,
        "wall_ms": statistics.mean(1000 * (r.end_s - r.start_s) for r in single) if single else None,
        "server_ms": statistics.mean(1000 * r.server_latency_s for r in single) if single else None,
        "spread_ms": 1000 * (max(starts) - min(starts)) if starts else None,
        "lag_ms": 1000 * (max(arrivals) - min(starts)) if arrivals else None,
    }


class SlowCollections:
    """From the first sweep request of the run on, the next ``n`` collections take 0.1 s each."""

    def __init__(self, n: int):
        self.n, self.left, self.armed = n, 0, False
        self._request = BenchClient.request

    def __enter__(self) -> "SlowCollections":
        self.left, self.armed = self.n, False
        original, me = self._request, self

        async def request(client, record, *args, **kwargs):
            me.armed = me.armed or record.phase == "sweep" and record.concurrency > 1
            return await original(client, record, *args, **kwargs)

        BenchClient.request = request
        self._threshold = gc.get_threshold()
        gc.set_threshold(10, *self._threshold[1:])
        gc.callbacks.append(self._collection)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self._collection)
        gc.set_threshold(*self._threshold)
        BenchClient.request = self._request

    def _collection(self, phase: str, info: dict) -> None:
        if phase == "start" and self.armed and self.left > 0:
            self.left -= 1
            time.sleep(0.1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="runs, each on a fresh server")
    ap.add_argument("--speedup", type=float, default=20.0)
    ap.add_argument("--slow-collections", type=int, default=0, metavar="N",
                    help="the next N garbage collections from the C=32 batch's first submission take 0.1 s")
    args = ap.parse_args()
    argv, suite = baseline_argv(args.speedup)
    top = max(suite.sweep.concurrencies)
    profile = argv[argv.index("--sim-profile") + 1]
    want = modelled(suite, profile, top)
    print(f"baseline argv: {' '.join(argv)}")
    print(load_line("before"))
    print("model:    " + "  ".join(f"{k} {v:7.1f} tok/s" for k, v in want.items()))
    for i in range(args.repeats):
        with running_sim(*argv, timeout_s=60) as sim:
            t0 = time.perf_counter()
            if args.slow_collections:
                with SlowCollections(args.slow_collections):
                    res = run_suite(sim.url, suite)
            else:
                res = run_suite(sim.url, suite)
            wall = time.perf_counter() - t0
        got = measure(res, top)
        figs = "  ".join(f"{k} {got[k]:7.1f} tok/s" if got[k] is not None else f"{k} -" for k in want)
        print(f"run {i + 1}:    {figs}  | single request {got['wall_ms']:.1f} ms wall "
              f"(server {got['server_ms']:.1f}), C={top} submissions spread {got['spread_ms']:.1f} ms, "
              f"lag {got['lag_ms']:.1f} ms wall; "
              f"{got['failed']} failed; suite {wall:.2f} s wall")
    print(load_line("after"))


if __name__ == "__main__":
    main()
