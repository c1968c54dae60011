"""What a server that stops answering costs a study: the full-length scenario, on the simulator.

One trial measurement as the study engine makes it (``tuner.engine.backends.ServerBackend``: the
simulated server launched as a real process, the article's ``seed`` suite over HTTP), with the
server's whole process group frozen with SIGSTOP at a chosen moment (by default right after it
answered ``/server_info``, the case that used to cost 4.5 hours per trial). Prints how the trial
ended (its failure class and message) and what it cost, in wall time and in model time (the
simulator's clock: wall x ``--sim-speedup``; on SGLang the two are the same), beside what the same
freeze cost before the hang rules: every request of the suite waiting out its timeout, computed
from the suite (not measured: it would take hours).

    nice -n 10 python benchmarks/hung_server.py [--speedup 20] [--freeze-at server_info|single|sweep]
                                                [--deadline SECONDS]

Nothing is left running: the backend kills the frozen group (SIGKILL needs no cooperation).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tuner.bench.client import WALL_SLACK_S  # noqa: E402
from tuner.config.study import load_study  # noqa: E402
from tuner.config.suite import load_suite  # noqa: E402
from tuner.engine.backends import ServerBackend  # noqa: E402
from tuner.sglang.rules import SpecConfig  # noqa: E402

STUDY = """
name: hung
search_space: {space}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  startup_timeout_s: 120
  stop_grace_s: 30
  sim: {{profile: k2.6-tp8-pcie, speedup: {speedup}, load_seconds: 0.5, noise: 0.02}}
bench: {{suite: seed}}
"""


def before_the_rules_s(suite, scale: float, frozen_at: str) -> float:
    """Wall seconds the rest of the suite took against a server frozen at ``frozen_at`` before this
    change: every request left waited out its timeout (model seconds / scale, plus the client's
    slack on a sped-up clock), every cache flush left 30 s at most, every sweep batch's connection
    warm-up left 10 s (the first batch's flush and warm-up come before its ``sweep`` event)."""
    per_request = suite.timeout_s / scale + (WALL_SLACK_S if scale > 1 else 0.0)
    flush = min(suite.timeout_s, 30.0)
    batches = len(suite.sweep.concurrencies) * suite.sweep.repeats
    singles = suite.n_single_requests() * suite.single.repeats
    sweep_s = batches * per_request + (batches - 1) * (flush + 10.0)
    if frozen_at == "sweep":
        return sweep_s
    single_s = singles * per_request + flush + 10.0  # + the first batch's flush and warm-up
    if frozen_at == "single":
        return single_s + sweep_s
    return suite.warmup.requests * per_request + (flush if singles else 0.0) + single_s + sweep_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--speedup", type=float, default=20.0, help="the simulator's --sim-speedup (default 20)")
    ap.add_argument("--freeze-at", default="server_info", choices=["server_info", "single", "sweep"],
                    help="the suite phase at whose first event the server is frozen")
    ap.add_argument("--deadline", type=float, default=None,
                    help="a trial deadline in wall seconds (default: none; the hang rules alone)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="hung-") as tmp:
        path = Path(tmp) / "hung.yaml"
        path.write_text(STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml", speedup=args.speedup))
        config = load_study(path)
        suite = load_suite(config.bench.suite)
        backend = ServerBackend(config, {}, suite)
        backend.set_trial_deadline(args.deadline, "--deadline")
        frozen: dict = {}

        def on_event(kind: str, info: dict) -> None:
            if kind == "phase" and info.get("phase") == args.freeze_at and not frozen:
                rec = json.loads(next((Path(config.workdir) / "servers").glob("*.json")).read_text())
                os.killpg(rec["pgid"], signal.SIGSTOP)
                frozen.update(at=time.monotonic(), pgid=rec["pgid"])

        started = time.monotonic()
        m = backend.measure(SpecConfig(3, 1, 4), "trials/0", lambda m: None, on_event=on_event)
        ended = time.monotonic()

    scale = args.speedup
    total, after = ended - started, ended - frozen.get("at", ended)
    old = before_the_rules_s(suite, scale, args.freeze_at)
    print(f"seed suite on the simulator at --sim-speedup {scale:g}, "
          f"server frozen (SIGSTOP) at '{args.freeze_at}'")
    print(f"trial ended as: {m.failure_class}: {m.failure_message}")
    print(f"cost of the trial (launch to stop):    {total:8.1f} s wall = {total * scale:9.1f} s model time")
    print(f"of which after the freeze:             {after:8.1f} s wall = {after * scale:9.1f} s model time")
    print(f"the same freeze before the hang rules: {old:8.1f} s wall = {old * scale:9.1f} s model time "
          f"({old * scale / 3600:.1f} h; computed from the suite, not measured)")


if __name__ == "__main__":
    main()
