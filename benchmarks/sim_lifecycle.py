"""How fast does the simulator let go? Abandoned requests and SIGTERM, in wall seconds.

Issue 16's goals, on a real simulator process over loopback HTTP:

* a timed-out request leaves no work behind: ``/flush_cache`` answers 200 within 1 s after the
  client gave up (its read timeout fired on a long non-streamed request);
* SIGTERM with requests in flight (every other one streamed) exits within 2 s.

Runs the steps ``tests/sim/test_sim_lifecycle.py`` asserts (``tests/support/lifecycle.py``) and
prints each measurement, the median and the worst, with the machine's load average.

    python benchmarks/sim_lifecycle.py [--speedup 20] [--repeats 10] [--in-flight 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from machine import load_line  # noqa: E402
from support.lifecycle import abandon, flush_ok_within, sigterm_in_flight  # noqa: E402
from support.simproc import running_sim  # noqa: E402

FLUSH_GOAL_S = 1.0
EXIT_GOAL_S = 2.0


def flush_after_abandon(speedup: float) -> float | None:
    """Seconds from the client giving up to /flush_cache answering 200 (None: not within 30 s)."""
    with running_sim(speedup=speedup) as sim:
        gave_up = abandon(sim.url)
        took = flush_ok_within(sim.url, 30.0)
        return None if took is None else time.monotonic() - gave_up


def exit_after_sigterm(speedup: float, in_flight: int) -> tuple[float | None, str]:
    """Seconds from SIGTERM to the exit (None: not within 30 s), and what the clients got."""
    with running_sim(speedup=speedup) as sim:
        down = sigterm_in_flight(sim, n=in_flight, deadline_s=30.0)
    answers = ", ".join(sorted(str(a[0]) for a in down.answers))
    return (down.seconds if down.code == 0 else None), f"exit {down.code}; answers {answers}"


def _summary(name: str, values: list[float | None], goal: float) -> None:
    got = [v for v in values if v is not None]
    missed = len(values) - len(got)
    if not got:
        print(f"{name}: no run succeeded")
        return
    worst = max(got)
    print(f"{name}: median {statistics.median(got):.3f} s, worst {worst:.3f} s over {len(got)} runs"
          f"{f' ({missed} never happened)' if missed else ''}; goal {goal:g} s: "
          f"{'met' if worst <= goal and not missed else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--speedup", type=float, default=20.0, help="--sim-speedup (default: the demo's 20)")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--in-flight", type=int, default=4, help="requests running when SIGTERM arrives")
    args = ap.parse_args()
    print(load_line("before"))
    flushes, exits = [], []
    for i in range(args.repeats):
        flushes.append(flush_after_abandon(args.speedup))
        took, what = exit_after_sigterm(args.speedup, args.in_flight)
        exits.append(took)
        f = "never" if flushes[-1] is None else f"{flushes[-1]:.3f} s"
        e = "never" if took is None else f"{took:.3f} s"
        print(f"run {i + 1}: flush after the client gave up {f}; exit after SIGTERM {e} ({what})")
    print(load_line("after"))
    _summary("flush after the client gave up", flushes, FLUSH_GOAL_S)
    _summary(f"exit after SIGTERM with {args.in_flight} requests in flight", exits, EXIT_GOAL_S)


if __name__ == "__main__":
    main()
