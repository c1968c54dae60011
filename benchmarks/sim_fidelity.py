"""Does the simulated server keep time honestly? Throughput measured over HTTP vs the model.

Starts ``python -m tuner.sim`` as a real process, runs a suite's concurrency sweep (C requests
submitted at once; request i uses prompt i mod n; aggregate tok/s = completion tokens / (last
completion - first submission)) and its single requests, converts wall figures to model time
(wall tok/s / ``--sim-speedup``) and prints them beside ``PerfModel.expected_figures`` for the same suite.
Goal: within 3% at C = 1, 8, 32 at the demo speedup.

Two HTTP figures: ``HTTP`` scales the whole wall time (what the simulator's clock alone gives: its
time-keeping plus every wall millisecond of HTTP multiplied by the speedup); ``tuner`` is what
``tuner bench`` and the studies report, the server's ``e2e_latency`` scaled and the HTTP around it
counted as it is (``tuner.bench.records.model_duration_s``).

    python benchmarks/sim_fidelity.py                          # quick suite, demo speedup, AR + EAGLE-3
    python benchmarks/sim_fidelity.py --speedups 10,20,40,80   # find the largest speedup within 3%
    python benchmarks/sim_fidelity.py --suite seed --spec 1,1,2 --speedups 20
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import aiohttp
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.simproc import running_sim  # noqa: E402

from tuner.bench.records import model_duration_s  # noqa: E402
from tuner.sglang.rules import SpecConfig  # noqa: E402
from tuner.sim.model import PerfModel, load_profile  # noqa: E402
from tuner.sim.scheduler import BatchEngine, SimRequest  # noqa: E402

DEMO_SPEEDUP = 20.0
SUITES = ROOT / "tuner" / "config" / "suites"


def load_suite(name: str) -> dict:
    path = SUITES / f"{name}.yaml" if "/" not in name else Path(name)
    return yaml.safe_load(path.read_text())


async def _one(session, url: str, text: str, max_tokens: int) -> tuple[float, float, int, float]:
    """(submitted, answered, completion tokens, the server's e2e_latency), wall seconds."""
    body = {"text": text, "sampling_params": {"max_new_tokens": max_tokens, "temperature": 0.0,
                                               "ignore_eos": True}}
    t0 = time.perf_counter()
    async with session.post(url + "/generate", json=body) as resp:
        out = await resp.json()
        if resp.status != 200:
            raise RuntimeError(f"HTTP {resp.status}: {out}")
    meta = out["meta_info"]
    return t0, time.perf_counter(), meta["completion_tokens"], meta["e2e_latency"]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


async def measure(url: str, suite: dict, speedup: float, sweep_only: bool, repeats: int) -> dict:
    """Model-time figures, each the mean of ``repeats`` runs: ``single`` (mean tok/s over prompts x
    lengths) and ``sweep`` {C: tok/s}, wall time scaled whole; ``single_tuner`` and ``sweep_tuner``
    the same counted as tuner.bench counts them."""
    prompts = [p["text"] for p in suite["prompts"]]
    out: dict = {"sweep": {}, "single": None, "sweep_tuner": {}, "single_tuner": None}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        await _one(session, url, prompts[0], suite["warmup"]["max_tokens"])
        if not sweep_only:
            rates, tuner = [], []
            for text in prompts * repeats:
                for length in suite["single"]["lengths"]:
                    t0, t1, n, e2e = await _one(session, url, text, length)
                    rates.append(n / (t1 - t0) / speedup)
                    tuner.append(n / model_duration_s(t1 - t0, e2e, speedup))
            out["single"], out["single_tuner"] = _mean(rates), _mean(tuner)
        tokens = suite["sweep"]["max_tokens"]
        for c in suite["sweep"]["concurrencies"]:
            rates, tuner = [], []
            for _ in range(repeats):
                res = await asyncio.gather(*(_one(session, url, prompts[i % len(prompts)], tokens)
                                             for i in range(c)))
                first, last = min(r[0] for r in res), max(r[1] for r in res)
                total = sum(r[2] for r in res)
                rates.append(total / (last - first) / speedup)
                server = max(r[0] + r[3] for r in res) - first
                tuner.append(total / model_duration_s(last - first, server, speedup))
            out["sweep"][c], out["sweep_tuner"][c] = _mean(rates), _mean(tuner)
    return out


def expected(profile: str, spec: SpecConfig | None, suite: dict):
    model = PerfModel(load_profile(profile))
    return model.expected_figures(
        spec, prompts=[p["text"] for p in suite["prompts"]], single_lengths=suite["single"]["lengths"],
        concurrencies=suite["sweep"]["concurrencies"], sweep_tokens=suite["sweep"]["max_tokens"])


def engine_figures(profile: str, spec: SpecConfig | None, suite: dict, seeds: int = 8) -> dict:
    """The scheduler's own figures in model time, no HTTP: all C requests arriving at once, mean
    over ``seeds`` random seeds. HTTP vs this is the time-keeping error; this vs the model's
    closed form is the model's (sampled acceptance makes the slowest request of a batch slower
    than the mean)."""
    model = PerfModel(load_profile(profile))
    prompts = [p["text"] for p in suite["prompts"]]

    def req(text: str, tokens: int) -> SimRequest:
        return SimRequest(rid="x", prompt_tokens=model.prompt_tokens(text), max_new_tokens=tokens,
                          predictability=model.predictability(text))

    def engine(seed: int) -> BatchEngine:
        mrr = 48 if spec is not None else None
        return BatchEngine(model, spec=spec, max_running_requests=mrr, speedup=1.0, seed=seed,
                           clock=lambda: 0.0)

    tokens = suite["sweep"]["max_tokens"]
    sweep = {c: sum(c * tokens / engine(s).simulate([req(prompts[i % len(prompts)], tokens)
                                                     for i in range(c)]) for s in range(seeds)) / seeds
             for c in suite["sweep"]["concurrencies"]}
    rates = [n / engine(s).simulate([req(t, n)]) for s in range(seeds) for t in prompts
             for n in suite["single"]["lengths"]]
    return {"single": sum(rates) / len(rates), "sweep": sweep}


def spec_flags(spec: SpecConfig | None) -> list[str]:
    if spec is None:
        return []
    return ["--speculative-algorithm", "EAGLE3", "--speculative-num-steps", str(spec.num_steps),
            "--speculative-eagle-topk", str(spec.eagle_topk),
            "--speculative-num-draft-tokens", str(spec.num_draft_tokens)]


def run(profile: str, suite_name: str, spec: SpecConfig | None, speedup: float, sweep_only: bool,
        noise: float, repeats: int) -> list[tuple]:
    suite = load_suite(suite_name)
    exp = expected(profile, spec, suite)
    eng = engine_figures(profile, spec, suite)
    with running_sim("--sim-profile", profile, "--sim-noise", str(noise), *spec_flags(spec),
                     speedup=speedup, timeout_s=30) as sim:
        t0 = time.perf_counter()
        got = asyncio.run(measure(sim.url, suite, speedup, sweep_only, repeats))
        wall_s = time.perf_counter() - t0
    rows = []
    label = spec.label() if spec else "autoregressive"
    if got["single"] is not None:
        rows.append((label, speedup, "single", exp.single_tok_per_s, eng["single"], got["single"],
                     got["single_tuner"]))
    for c, value in got["sweep"].items():
        rows.append((label, speedup, f"C={c}", exp.tok_per_s[c], eng["sweep"][c], value, got["sweep_tuner"][c]))
    print(f"# {label} at {speedup:g}x: {wall_s:.2f} s wall", file=sys.stderr)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", default="k2.6-tp8-pcie")
    ap.add_argument("--suite", default="quick", help="quick | seed | path to a suite YAML")
    ap.add_argument("--speedups", default=str(DEMO_SPEEDUP), help="comma-separated --sim-speedup values")
    ap.add_argument("--spec", action="append", default=None,
                    help="steps,topk,draft (repeatable); 'none' for autoregressive. "
                         "Default: none and 1,1,2 (the article's EAGLE-3 setting as it runs)")
    ap.add_argument("--sweep-only", action="store_true", help="skip the single-request rows")
    ap.add_argument("--noise", type=float, default=0.0, help="--sim-noise for the server")
    ap.add_argument("--repeats", type=int, default=1, help="runs averaged per figure")
    args = ap.parse_args()
    specs = []
    for text in args.spec or ["none", "1,1,2"]:
        specs.append(None if text == "none" else SpecConfig(*(int(x) for x in text.split(","))))
    rows = []
    for speedup in (float(x) for x in args.speedups.split(",")):
        for spec in specs:
            rows += run(args.profile, args.suite, spec, speedup, args.sweep_only, args.noise, args.repeats)
    print("model = PerfModel.expected_figures; engine = the scheduler in model time without HTTP "
          "(mean of 8 seeds); HTTP = measured, wall tok/s / speedup; tuner = measured, as tuner bench "
          "counts it (the server's e2e_latency scaled, the HTTP around it not). All tok/s in model time.")
    print(f"{'setting':24} {'speedup':>7} {'figure':>7} {'model':>8} {'engine':>8} {'HTTP':>8} "
          f"{'HTTP/model':>10} {'HTTP/engine':>11} {'tuner':>8} {'tuner/model':>11}")
    worst = worst_tuner = 0.0
    for label, speedup, figure, exp_v, eng_v, got_v, tuner_v in rows:
        err, err_eng, err_tuner = got_v / exp_v - 1, got_v / eng_v - 1, tuner_v / exp_v - 1
        worst, worst_tuner = max(worst, abs(err)), max(worst_tuner, abs(err_tuner))
        print(f"{label:24} {speedup:7g} {figure:>7} {exp_v:8.1f} {eng_v:8.1f} {got_v:8.1f} "
              f"{err:+10.1%} {err_eng:+11.1%} {tuner_v:8.1f} {err_tuner:+11.1%}")
    print(f"worst |HTTP/model - 1|: {worst:.1%}; worst |tuner/model - 1|: {worst_tuner:.1%} (goal: 3%)")


if __name__ == "__main__":
    main()
