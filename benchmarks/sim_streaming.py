"""Does streaming keep up with model time, and does the simulator say so when it does not?

Issue 16's goal: streaming at C=256 and 20x stays within 3% of the model, or the simulator says it
fell behind (``sim_timekeeping.fell_behind`` in ``/server_info`` and a ``WARNING Simulator fell
behind model time`` log line), so a benchmark never reports distorted latencies silently.

Starts the simulator (autoregressive by default, no step noise, ``--max-running-requests`` and
``--cuda-graph-max-bs-decode`` at C) as a real process, runs concurrency-sweep batches at C through
the project's own client (``tuner.bench.run_suite``, ``stream=True``: SGLang's cumulative
``/generate`` stream), and prints, in model time:

* aggregate tok/s measured against ``PerfModel.expected_figures``;
* inter-token latency (mean and p50, each chunk's gap split over its tokens, as ``bench_serving``)
  against the modelled decode step (divided by the mean accept length when speculating);
* the simulator's verdict: ``sim_timekeeping`` from ``/server_info`` and whether the log has the
  warning line; then whether the goal holds (within 3%, or a fall-behind reported).

A non-streamed run of the same batches (a fresh server) is printed first, for reference.

    python benchmarks/sim_streaming.py                          # C=256 at 20x, autoregressive
    python benchmarks/sim_streaming.py --concurrency 32 --speedup 40
    python benchmarks/sim_streaming.py --spec 1,1,2 --concurrency 32
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from machine import load_line  # noqa: E402
from sim_fidelity import spec_flags  # noqa: E402
from support.simproc import running_sim  # noqa: E402

from tuner.bench import run_suite  # noqa: E402
from tuner.config.suite import load_suite  # noqa: E402
from tuner.sglang.rules import SpecConfig  # noqa: E402
from tuner.sim.model import PerfModel, load_profile  # noqa: E402

PROFILE = "k2.6-tp8-pcie"
MAX_TOKENS = 512
GOAL = 0.03
FELL_BEHIND_LINE = "Simulator fell behind model time"


def modelled(spec: SpecConfig | None, prompts: list[str], c: int) -> tuple[float, float]:
    """(aggregate tok/s, mean inter-token latency in ms) the performance model gives at C."""
    model = PerfModel(load_profile(PROFILE))
    fig = model.expected_figures(spec, prompts=prompts, single_lengths=[], concurrencies=[c],
                                 sweep_tokens=MAX_TOKENS, cuda_graph_max_bs=c)
    context = statistics.mean(model.prompt_tokens(p) for p in prompts) + MAX_TOKENS / 2
    step = model.decode_step_time_s(c, spec, c, context_tokens=context)
    per_request = [model.mean_accept_length(spec, model.predictability(prompts[i % len(prompts)]))
                   if spec else 1.0 for i in range(c)]
    return fig.tok_per_s[c], 1000 * statistics.mean(step / a for a in per_request)


def run(speedup: float, spec: SpecConfig | None, c: int, repeats: int, stream: bool) -> dict:
    base = load_suite("quick")
    suite = base.model_copy(update={
        "timeout_s": 1200.0,  # model s: a 512-token request at C=256 takes ~90 (the quick suite allows 60)
        "single": base.single.model_copy(update={"lengths": []}),
        "warmup": base.warmup.model_copy(update={"requests": 1}),
        "sweep": base.sweep.model_copy(update={"concurrencies": [c], "max_tokens": MAX_TOKENS,
                                               "repeats": repeats}),
    })
    flags = ["--sim-profile", PROFILE, "--sim-noise", "0", "--max-running-requests", str(c),
             "--cuda-graph-max-bs-decode", str(c), *spec_flags(spec)]
    with running_sim(*flags, speedup=speedup, timeout_s=60) as sim:
        cpu, t0 = time.process_time(), time.perf_counter()
        res = run_suite(sim.url, suite, stream=stream)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - t0
        keeping = requests.get(sim.url + "/server_info", timeout=30).json()["sim_timekeeping"]
        warned = FELL_BEHIND_LINE in sim.log
    sweep = [r for r in res.records if r.phase == "sweep" and r.ok]
    itl = [x * res.time_scale * 1000 for r in sweep for x in r.itl_s]
    row = res.sweep_rows[0]
    failed = [r for r in res.records if not r.ok]
    return {"tok_per_s": res.tok_per_s_at(c), "failed": res.n_failed, "error": failed[0].error if failed else None,
            "itl_mean_ms": statistics.mean(itl) if itl else None, "itl_p50_ms": row.itl_p50_ms,
            "timekeeping": keeping, "warned": warned, "client_cpu_s": cpu, "wall_s": wall,
            "chunks": sum(len(r.itl_s) for r in sweep)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--speedup", type=float, default=20.0)
    ap.add_argument("--concurrency", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=2, help="batches per run")
    ap.add_argument("--spec", default="none", help="steps,topk,draft or 'none' (autoregressive)")
    ap.add_argument("--no-plain", action="store_true", help="skip the non-streamed reference run")
    args = ap.parse_args()
    spec = None if args.spec == "none" else SpecConfig(*(int(x) for x in args.spec.split(",")))
    c, speedup = args.concurrency, args.speedup
    prompts = [p.text or "" for p in load_suite("quick").prompts]
    model_tps, model_itl = modelled(spec, prompts, c)
    label = spec.label() if spec else "autoregressive"
    print(f"profile {PROFILE}, {label}, C={c}, {MAX_TOKENS} tokens per request, quick-suite prompts, "
          f"--sim-speedup {speedup:g}, {args.repeats} batches per run; figures in model time")
    print(load_line("before"))
    print(f"model: {model_tps:,.1f} tok/s, inter-token latency {model_itl:.1f} ms "
          f"(~{c / model_itl * 1000 * speedup:,.0f} stream chunks per wall second)")
    verdict = None
    for stream in ([True] if args.no_plain else [False, True]):
        got = run(speedup, spec, c, args.repeats, stream)
        if got["tok_per_s"] is None:
            raise SystemExit(f"every request failed: {got['error']}")
        dev = got["tok_per_s"] / model_tps - 1
        keeping = got["timekeeping"]
        print(f"\n{'streamed' if stream else 'not streamed'}: {got['tok_per_s']:,.1f} tok/s "
              f"({dev:+.1%} against the model), {got['failed']} failed; client CPU "
              f"{got['client_cpu_s']:.1f} s in {got['wall_s']:.1f} s wall")
        if stream:
            itl = got["itl_mean_ms"]
            print(f"  inter-token latency: mean {itl:.1f} ms ({itl / model_itl - 1:+.1%}), p50 "
                  f"{got['itl_p50_ms']:.1f} ms, modelled {model_itl:.1f} ms; {got['chunks']:,} gaps")
        print(f"  sim_timekeeping: fell_behind {keeping['fell_behind']}, {keeping['late_deliveries']:,} of "
              f"{keeping['deliveries']:,} deliveries late, max lag {keeping['max_lag_wall_ms']:.1f} ms wall; "
              f"warning line in the log: {'yes' if got['warned'] else 'no'}")
        if stream:
            within = abs(dev) <= GOAL and abs(itl / model_itl - 1) <= GOAL
            said = keeping["fell_behind"] and got["warned"]
            verdict = ("met: within 3% of the model" if within else
                       "met: off the model, and the simulator said it fell behind" if said else
                       "NOT met: off the model and the simulator did not say so")
    print()
    print(load_line("after"))
    print(f"goal (streaming within {GOAL:.0%} of the model, or the simulator says it fell behind): {verdict}")


if __name__ == "__main__":
    main()
