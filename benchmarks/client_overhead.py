"""Is the benchmark client ever the bottleneck? Measure it against the simulator's model figure.

Starts the simulated server (autoregressive, no noise) as a real process, runs concurrency-sweep
batches at C=32 and C=256 with two clients, and prints each client's measured throughput against
what the simulator's performance model says the server produces:

* ``aiohttp``: the suite's own client (``tuner.bench.run_suite``; one asyncio session, SGLang's
  ``bench_serving`` approach);
* ``threads``: the article's approach, ``requests`` + ``concurrent.futures.ThreadPoolExecutor``
  with one worker per in-flight request, timed from submission to the last completion.

Goals (issue 4): within 2% of the model figure at C=32, and at least 10,000 tokens/s of wall
throughput sustained at C=256 (non-streaming) on a 2-core machine. ``client CPU`` is the CPU time
the client process spent per batch (the simulator runs in another process).

    python benchmarks/client_overhead.py [--speedup32 10] [--speedup256 20] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager

import requests

from tuner.bench import run_suite
from tuner.config.suite import load_suite
from tuner.sim.model import PerfModel, load_profile

PROFILE = "k2.6-tp8-pcie"
MAX_TOKENS = 512


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def simulator(speedup: float, max_running: int):
    """The simulator in its own process group; stopped (terminate, then kill) on the way out."""
    port = _free_port()
    argv = [sys.executable, "-m", "tuner.sim", "--model-path", "sim/k2.6", "--port", str(port),
            "--sim-profile", PROFILE, "--sim-speedup", str(speedup), "--sim-noise", "0",
            "--sim-load-seconds", "0", "--max-running-requests", str(max_running),
            "--cuda-graph-max-bs-decode", str(max_running), "--log-level", "warning"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"simulator exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
            try:
                if requests.get(url + "/health_generate", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("simulator not ready within 60 s")
            time.sleep(0.1)
        yield url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        proc.stderr.close()


def model_figure(prompts: list[str], c: int, cuda_graph_max_bs: int) -> float:
    """The performance model's aggregate tok/s at concurrency ``c``, in model time."""
    model = PerfModel(load_profile(PROFILE))
    return model.expected_figures(None, prompts=prompts, single_lengths=[], concurrencies=[c],
                                  sweep_tokens=MAX_TOKENS, cuda_graph_max_bs=cuda_graph_max_bs).tok_per_s[c]


def aiohttp_batch(url: str, suite, c: int) -> tuple[float, float, float]:
    """One sweep batch with the suite's client: (wall tok/s, client CPU seconds, mean overhead ms).

    Overhead of a request = client-side latency - the server's own e2e_latency (both wall): the
    time the request spent in the client, the HTTP stack, the loopback and the simulator's HTTP
    layer, not in its scheduler."""
    cpu = time.process_time()
    res = run_suite(url, suite.model_copy(update={"sweep": suite.sweep.model_copy(update={"concurrencies": [c]})}))
    cpu = time.process_time() - cpu
    if res.n_failed:
        raise RuntimeError(f"{res.n_failed} requests failed: {res.records[0].error}")
    overhead = statistics.mean(r.latency_s - r.server_latency_s for r in res.records) * 1000
    # wall figure from the records, as the threads client's (the suite's own figure is model time)
    span = max(r.end_s for r in res.records) - min(r.start_s for r in res.records)
    return sum(r.completion_tokens for r in res.records) / span, cpu, overhead


def threads_batch(url: str, prompts: list[str], c: int) -> tuple[float, float, float]:
    """The article's client: a thread per request, requests.Session per thread."""
    local = threading.local()
    sessions: list[requests.Session] = []

    def one(i: int) -> tuple[int, float]:
        s = getattr(local, "session", None)
        if s is None:
            s = local.session = requests.Session()
            sessions.append(s)
        body = {"text": prompts[i % len(prompts)],
                "sampling_params": {"max_new_tokens": MAX_TOKENS, "temperature": 0.0, "ignore_eos": True}}
        t = time.perf_counter()
        r = s.post(url + "/generate", json=body, timeout=300)
        t = time.perf_counter() - t
        r.raise_for_status()
        meta = r.json()["meta_info"]
        return meta["completion_tokens"], t - meta["e2e_latency"]

    cpu = time.process_time()
    with ThreadPoolExecutor(max_workers=c) as pool:
        start = time.perf_counter()
        futures = [pool.submit(one, i) for i in range(c)]
        done = [f.result() for f in as_completed(futures)]
        wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
    for s in sessions:
        s.close()
    return sum(d[0] for d in done) / wall, cpu, statistics.mean(d[1] for d in done) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--speedup32", type=float, default=10.0, help="--sim-speedup for the C=32 runs")
    ap.add_argument("--speedup256", type=float, default=20.0, help="--sim-speedup for the C=256 runs")
    ap.add_argument("--repeats", type=int, default=3, help="batches per client and concurrency")
    ap.add_argument("--concurrencies", default="32,256", help="which of 32 and 256 to run")
    args = ap.parse_args()

    base = load_suite("seed")
    prompts = [p.text or "" for p in base.prompts]
    suite = base.model_copy(update={
        "single": base.single.model_copy(update={"lengths": []}),
        "warmup": base.warmup.model_copy(update={"requests": 0}),
        "sweep": base.sweep.model_copy(update={"max_tokens": MAX_TOKENS}),
    })
    print(f"profile {PROFILE}, autoregressive, {MAX_TOKENS} tokens per request, seed prompts, "
          f"{os.cpu_count()} cores; wall tok/s = model tok/s x speedup")
    print(f"{'C':>4} {'client':>8} {'speedup':>8} {'wall tok/s':>11} {'cv':>6} {'model-time tok/s':>17} "
          f"{'model figure':>13} {'deviation':>10} {'client CPU s/batch':>19} {'overhead ms/req':>16}")
    summary: dict[tuple[int, str], float] = {}
    wanted = {int(x) for x in args.concurrencies.split(",")}
    for c, speedup in ((32, args.speedup32), (256, args.speedup256)):
        if c not in wanted:
            continue
        expected = model_figure(prompts, c, cuda_graph_max_bs=max(c, 32))
        with simulator(speedup, max_running=max(c, 32)) as url:
            aiohttp_batch(url, suite, min(c, 8))  # warm both server and client once
            for name in ("aiohttp", "threads"):
                runs = []
                for _ in range(args.repeats):
                    runs.append(aiohttp_batch(url, suite, c) if name == "aiohttp"
                                else threads_batch(url, prompts, c))
                wall = statistics.mean(r[0] for r in runs)
                cv = statistics.stdev(r[0] for r in runs) / wall if len(runs) > 1 else 0.0
                cpu = statistics.mean(r[1] for r in runs)
                overhead = statistics.mean(r[2] for r in runs)
                model_time = wall / speedup
                dev = model_time / expected - 1
                summary[(c, name)] = wall
                print(f"{c:>4} {name:>8} {speedup:>8g} {wall:>11,.0f} {100 * cv:>5.1f}% {model_time:>17,.1f} "
                      f"{expected:>13,.1f} {100 * dev:>+9.2f}% {cpu:>19.3f} {overhead:>16.2f}")
    for c in sorted(wanted):
        a, t = summary[(c, "aiohttp")], summary[(c, "threads")]
        faster = "aiohttp" if a >= t else "threads"
        print(f"C={c}: {faster} is faster ({max(a, t) / min(a, t):.3f}x wall throughput)")
    if 32 in wanted:
        ok32 = abs(summary[(32, "aiohttp")] / args.speedup32 / model_figure(prompts, 32, 32) - 1) <= 0.02
        print(f"goal C=32 within 2% of the model: {'met' if ok32 else 'NOT met'}")
    if 256 in wanted:
        ok256 = summary[(256, "aiohttp")] >= 10_000
        print(f"goal >= 10,000 wall tok/s at C=256: {'met' if ok256 else 'NOT met'}")


if __name__ == "__main__":
    main()
