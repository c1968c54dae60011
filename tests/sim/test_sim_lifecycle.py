"""When a request stops and when the server stops: abort on disconnect, SIGTERM with requests in
flight, SGLang's launch parser, and ``/server_info`` from the resolved args.

Deadlines are SGLang-level promises ("flush within a second after the client gives up", "exit
within 2 s"), measured from the event, with the load of a shared 2-core machine in mind: each is
asserted as "the condition held by then", polling, never sleeping and hoping.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import threading
import time

import requests
from support.simproc import running_sim, sim_argv

from tuner.sglang.server_args import server_args_table

PROMPT = "Write a Python function that returns the n-th Fibonacci number."
SPEEDUP = 50.0


def _long_body(tokens: int = 8000, stream: bool = False) -> bytes:
    # 8000 tokens at ~26 tok/s model time is ~300 model s: 6 s of wall time at 50x.
    return json.dumps({"text": PROMPT, "stream": stream,
                       "sampling_params": {"max_new_tokens": tokens, "ignore_eos": True}}).encode()


def _flush_ok_within(url: str, deadline_s: float) -> float | None:
    """Seconds until /flush_cache answered 200, or None if it never did before the deadline."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < deadline_s:
        if requests.post(url + "/flush_cache", timeout=5).status_code == 200:
            return time.monotonic() - t0
        time.sleep(0.02)
    return None


def _busy(url: str) -> bool:
    return requests.post(url + "/flush_cache", timeout=5).status_code == 400


def _wait_busy(url: str, deadline_s: float = 10.0) -> None:
    t0 = time.monotonic()
    while not _busy(url):
        assert time.monotonic() - t0 < deadline_s, "the request never reached the server"
        time.sleep(0.01)


def test_timed_out_request_leaves_no_work_behind():
    """A client that gives up (a timeout) closes its connection: the request is aborted, so
    /flush_cache succeeds within a second (SGLang: tokenizer_manager.py, abort on disconnect)."""
    with running_sim(speedup=SPEEDUP) as sim:
        try:
            requests.post(sim.url + "/generate", data=_long_body(), timeout=0.5,
                          headers={"Content-Type": "application/json"})
            raise AssertionError("the long request finished before the client's timeout")
        except requests.Timeout:
            gave_up = time.monotonic()
        took = _flush_ok_within(sim.url, 5.0)
        assert took is not None, f"the abandoned request still occupies the server; log:\n{sim.log}"
        assert time.monotonic() - gave_up < 1.0 + 0.5  # 1 s, plus the last poll's round trip
        assert "Request is disconnected from the client side" in sim.log


def test_disconnected_batch_is_aborted_too():
    with running_sim(speedup=SPEEDUP) as sim:
        with socket.create_connection(("127.0.0.1", sim.port)) as conn:
            body = json.dumps({"text": [PROMPT, PROMPT], "sampling_params": {"max_new_tokens": 8000}}).encode()
            conn.sendall(b"POST /generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
            _wait_busy(sim.url)
        assert _flush_ok_within(sim.url, 1.5) is not None


def test_sigterm_with_requests_in_flight_exits_within_2s():
    """SIGTERM drains for half a second, aborts the rest (503) and exits 0, well within 2 s."""
    with running_sim(speedup=SPEEDUP) as sim:
        answers: list = []

        def call(stream: bool) -> None:
            try:
                r = requests.post(sim.url + "/generate", data=_long_body(stream=stream), timeout=30,
                                  headers={"Content-Type": "application/json"})
                answers.append((r.status_code, r.text[-200:]))
            except requests.RequestException as exc:
                answers.append(("error", str(exc)))

        threads = [threading.Thread(target=call, args=(i % 2 == 1,)) for i in range(4)]
        for t in threads:
            t.start()
        _wait_busy(sim.url)
        time.sleep(0.1)  # let all four arrive (the busy check already saw the first)
        t0 = time.monotonic()
        sim.proc.send_signal(signal.SIGTERM)
        code = sim.wait(10)
        took = time.monotonic() - t0
        for t in threads:
            t.join(10)
    assert code == 0 and took < 2.0, (code, took, sim.log)
    assert "Draining requests and shutting down" in sim.log and "Aborted" in sim.log
    plain = [a for a in answers if a[0] == 503]
    assert plain and all("shutting down" in text for _, text in plain), answers
    assert len(answers) == 4


def test_health_is_503_while_shutting_down():
    """http_server.py health_generate: ``gracefully_exit`` answers 503."""
    with running_sim(speedup=SPEEDUP) as sim:
        threading.Thread(target=lambda: requests.post(
            sim.url + "/generate", data=_long_body(), timeout=30,
            headers={"Content-Type": "application/json"}), daemon=True).start()
        _wait_busy(sim.url)
        sim.proc.send_signal(signal.SIGTERM)
        statuses = set()
        t0 = time.monotonic()
        while sim.proc.poll() is None and time.monotonic() - t0 < 5:
            try:
                statuses.add(requests.get(sim.url + "/health_generate", timeout=2).status_code)
            except requests.RequestException:
                break
        assert 503 in statuses, statuses


# ------------------------------------------------------------------------------ launch parser


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(sim_argv(*args, "--sim-hang-on-start"), capture_output=True, text=True,
                          timeout=20, stdin=subprocess.DEVNULL)


def test_ambiguous_prefix_exits_2_as_sglang():
    """SGLang 0.5.23's parser (argparse, allow_abbrev on) has --cuda-graph-max-bs-decode and
    --cuda-graph-max-bs-prefill, so the pre-0.5.23 name is an ambiguous prefix."""
    r = _run("--cuda-graph-max-bs", "32")
    assert r.returncode == 2
    assert ("error: ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, "
            "--cuda-graph-max-bs-prefill") in r.stderr


def test_unique_prefixes_and_every_sglang_flag_are_accepted():
    with running_sim("--tp", "8", "--cuda-graph-max-bs-d", "4", "--disable-radix-cache",
                     "--chunked-prefill-size", "4096", "--schedule-policy", "lpm",
                     "--enable-torch-compile", speedup=SPEEDUP) as sim:
        info = requests.get(sim.url + "/server_info", timeout=10).json()
    assert (info["tp_size"], info["cuda_graph_max_bs_decode"]) == (8, 4)
    assert (info["disable_radix_cache"], info["chunked_prefill_size"], info["schedule_policy"],
            info["enable_torch_compile"]) == (True, 4096, "lpm", True)


def test_bad_value_of_a_reported_flag_exits_2():
    r = _run("--chunked-prefill-size", "lots")
    assert r.returncode == 2 and "--chunked-prefill-size" in r.stderr


# ------------------------------------------------------------------------------ /server_info


def test_server_info_has_every_resolved_field_in_sglangs_order():
    fields = [name for name, _ in server_args_table().resolved_fields]
    assert len(fields) > 500
    with running_sim("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "2",
                     "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "5",
                     speedup=SPEEDUP) as sim:
        info = requests.get(sim.url + "/server_info", timeout=10).json()
    assert list(info)[:len(fields)] == fields
    assert "cuda_graph_max_bs" not in info  # 0.5.23 has only the _decode / _prefill fields
    # resolved, not null: from the profile and SGLang's rules
    assert info["context_length"] == 8192 and info["mem_fraction_static"] > 0
    assert info["cuda_graph_max_bs_decode"] > 0 and info["max_running_requests"] == 48
    assert info["speculative_num_draft_tokens"] == 3  # topk 1: steps + 1
    assert info["status"] == "ready" and info["max_total_num_tokens"] > 0
    assert "--speculative-num-steps 2" in info["launch_command"]
    state = info["internal_states"][0]
    assert state["speculative_num_draft_tokens"] == 3 and "avg_spec_accept_length" in state
    assert info["sim_timekeeping"]["fell_behind"] is False
