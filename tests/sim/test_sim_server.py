"""The simulated SGLang server as a real process: API shapes, determinism, model-time consistency.

Failure modes and the command line are in ``test_sim_server_failures.py``.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from support.simproc import running_sim

from tuner.sglang.rules import SpecConfig
from tuner.sim.model import PerfModel, load_profile
from tuner.sim.scheduler import BatchEngine, SimRequest

SPEEDUP = 200.0
PROMPT = "Write a Python function that returns the n-th Fibonacci number, with a docstring and tests."
# steps 1, topk 1, draft 3: SGLang runs it with 2 draft tokens (the article's setting).
SPEC_FLAGS = ("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "sim/draft",
              "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "3")


def _generate(url: str, text: str = PROMPT, n: int = 16, **extra) -> requests.Response:
    body = {"text": text, "sampling_params": {"max_new_tokens": n, "temperature": 0.0, "ignore_eos": True}}
    body.update(extra)
    return requests.post(url + "/generate", json=body, timeout=30)


def _sse(resp: requests.Response) -> list:
    """``data:`` payloads of an SSE response; ``[DONE]`` kept as a string."""
    out = []
    for line in resp.iter_lines(decode_unicode=True):
        if line.startswith("data: "):
            payload = line[len("data: "):]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


@pytest.fixture(scope="module")
def ar_sim():
    with running_sim("--enable-metrics", speedup=SPEEDUP) as sim:
        yield sim


@pytest.fixture(scope="module")
def spec_sim():
    with running_sim(*SPEC_FLAGS, "--enable-metrics", speedup=SPEEDUP) as sim:
        yield sim


# ------------------------------------------------------------------------------ /generate


def test_generate_shape_and_exact_length(spec_sim):
    r = _generate(spec_sim.url, n=40)
    assert r.status_code == 200
    out = r.json()
    meta = out["meta_info"]
    assert meta["completion_tokens"] == 40 == len(out["output_ids"])
    assert meta["finish_reason"] == {"type": "length", "length": 40}
    assert meta["prompt_tokens"] > 0 and meta["e2e_latency"] > 0 and meta["id"]
    assert out["text"].strip() and len(out["text"].split()) == 40
    # speculative fields, as SGLang's tokenizer manager computes them
    assert meta["spec_verify_ct"] >= 1
    assert meta["spec_accept_length"] == pytest.approx(40 / meta["spec_verify_ct"])
    assert 1.0 <= meta["spec_accept_length"] <= 2.0  # steps=1: at most 2 tokens per verify
    assert 0.0 <= meta["spec_accept_rate"] <= 1.0


def test_generate_input_ids_and_batch(ar_sim):
    r = requests.post(ar_sim.url + "/generate", json={
        "input_ids": [[1, 2, 3], [4, 5]],
        "sampling_params": {"max_new_tokens": 5, "temperature": 0}}, timeout=30)
    assert r.status_code == 200
    outs = r.json()
    assert [o["meta_info"]["prompt_tokens"] for o in outs] == [3, 2]
    assert all(o["meta_info"]["completion_tokens"] == 5 for o in outs)
    assert outs[0]["output_ids"] != outs[1]["output_ids"]
    assert "spec_verify_ct" not in outs[0]["meta_info"]  # autoregressive server


def test_generate_stream_is_cumulative_and_ends_with_done(spec_sim):
    # Chunks that come due while one is being written go out as one (as SGLang's), so the stream is
    # read from a slow server (2x: ~20 ms of wall time between chunks) to see several.
    with running_sim(*SPEC_FLAGS, speedup=2.0) as slow:
        with requests.post(slow.url + "/generate", stream=True, timeout=30, json={
                "text": PROMPT, "stream": True,
                "sampling_params": {"max_new_tokens": 12, "temperature": 0, "ignore_eos": True}}) as r:
            assert r.status_code == 200
            events = _sse(r)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert len(chunks) >= 2
    counts = [c["meta_info"]["completion_tokens"] for c in chunks]
    assert counts == sorted(counts) and counts[-1] == 12
    for a, b in zip(chunks, chunks[1:]):
        assert b["text"].startswith(a["text"])  # text is cumulative
    assert [c["meta_info"]["finish_reason"] for c in chunks][:-1] == [None] * (len(chunks) - 1)
    assert chunks[-1]["meta_info"]["finish_reason"]["type"] == "length"
    assert chunks[-1]["text"] == _generate(spec_sim.url, n=12).json()["text"]
    # SGLang 0.5.23 (tokenizer_manager.py, `if state.finished:`) adds e2e_latency and the speculative
    # figures to a finished request's meta_info only
    finished_only = {"e2e_latency", "spec_verify_ct", "spec_accept_length", "spec_accept_rate",
                     "spec_num_correct_drafts", "spec_num_proposed_drafts"}
    assert all(not finished_only & set(c["meta_info"]) for c in chunks[:-1])
    assert finished_only <= set(chunks[-1]["meta_info"])


# ------------------------------------------------------------------------------ OpenAI


def test_openai_completions_with_and_without_stream(ar_sim):
    body = {"model": "m", "prompt": PROMPT, "max_tokens": 9, "temperature": 0, "ignore_eos": True}
    r = requests.post(ar_sim.url + "/v1/completions", json=body, timeout=30)
    assert r.status_code == 200
    out = r.json()
    assert out["object"] == "text_completion" and out["choices"][0]["finish_reason"] == "length"
    assert out["usage"]["completion_tokens"] == 9
    assert out["usage"]["total_tokens"] == out["usage"]["prompt_tokens"] + 9
    stream_body = dict(body, stream=True, stream_options={"include_usage": True})
    with requests.post(ar_sim.url + "/v1/completions", json=stream_body, stream=True, timeout=30) as r:
        events = _sse(r)
    assert events[-1] == "[DONE]"
    usage_chunk = events[-2]
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["completion_tokens"] == 9
    text = "".join(c["choices"][0]["text"] for c in events[:-2])
    assert text == out["choices"][0]["text"]  # deltas add up to the whole reply


def test_openai_chat_with_and_without_stream(ar_sim):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 6,
            "temperature": 0}
    out = requests.post(ar_sim.url + "/v1/chat/completions", json=body, timeout=30).json()
    assert out["object"] == "chat.completion"
    assert out["choices"][0]["message"]["role"] == "assistant"
    assert len(out["choices"][0]["message"]["content"].split()) == 6
    assert out["usage"]["completion_tokens"] == 6
    with requests.post(ar_sim.url + "/v1/chat/completions", stream=True, timeout=30,
                       json=dict(body, stream=True, stream_options={"include_usage": True})) as r:
        events = _sse(r)
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    assert events[-2]["usage"]["completion_tokens"] == 6
    content = "".join(e["choices"][0]["delta"].get("content", "") for e in events[:-2])
    assert content == out["choices"][0]["message"]["content"]


# ------------------------------------------------------------------------------ state routes


def test_server_info_reports_resolved_args(spec_sim):
    info = requests.get(spec_sim.url + "/server_info", timeout=10).json()
    # topk 1 rewrites draft tokens to steps + 1; unset max_running_requests becomes 48
    assert info["speculative_num_draft_tokens"] == 2
    assert info["max_running_requests"] == 48
    state = info["internal_states"][0]
    assert state["speculative_num_steps"] == 1 and state["speculative_eagle_topk"] == 1
    assert state["speculative_num_draft_tokens"] == 2 and state["max_running_requests"] == 48
    assert "avg_spec_accept_length" in state
    assert info["version"].startswith("0.5") and info["sim_profile"] == "k2.6-tp8-pcie"
    assert info["sim_speedup"] == SPEEDUP
    assert info["model_path"] == "sim/test-model" and info["tp_size"] == 1
    old = requests.get(spec_sim.url + "/get_server_info", timeout=10).json()
    assert old["speculative_num_draft_tokens"] == 2
    assert "WARNING Max running requests is reset to 48" in spec_sim.log
    assert "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1" in spec_sim.log


def test_model_info_and_health(ar_sim):
    info = requests.get(ar_sim.url + "/get_model_info", timeout=10).json()
    assert info["model_path"] == "sim/test-model" and info["is_generation"] is True
    assert requests.get(ar_sim.url + "/health", timeout=10).status_code == 200
    assert requests.get(ar_sim.url + "/health_generate", timeout=10).status_code == 200


def test_flush_cache_only_when_idle(ar_sim):
    r = requests.post(ar_sim.url + "/flush_cache", timeout=10)
    assert r.status_code == 200 and r.text.startswith("Cache flushed.")
    # A long request keeps the server busy: 8000 tokens at ~26 tok/s model time, ~1.5 s wall (2000
    # tokens, ~0.4 s, left a loaded machine's polling little time to see it busy before it ended).
    done = threading.Event()
    worker = threading.Thread(target=lambda: (_generate(ar_sim.url, n=8000), done.set()))
    worker.start()
    try:
        deadline = time.monotonic() + 20
        busy = None
        while time.monotonic() < deadline and not done.is_set():
            busy = requests.get(ar_sim.url + "/flush_cache", timeout=10)
            if busy.status_code == 400:
                break
        assert busy is not None and busy.status_code == 400 and busy.text == "Flush cache failed.\n"
    finally:
        worker.join(timeout=30)
    assert "Cache not flushed because there are pending requests" in ar_sim.log
    assert requests.post(ar_sim.url + "/flush_cache", timeout=10).status_code == 200


def test_stream_disconnect_frees_the_server(ar_sim):
    # 8000 tokens (within the 8192-token context) keep the server busy for ~1.5 s of wall time;
    # closing the stream aborts the request. The request would also end on its own within the
    # flush's deadline, so the abort is checked by SGLang's own log line for it (tokenizer_manager:
    # "Request is disconnected from the client side"), counted before and after (the fixture's
    # server is shared by the module's tests).
    aborted = "Request is disconnected from the client side. Abort request"
    before = ar_sim.log.count(aborted)
    with requests.post(ar_sim.url + "/generate", stream=True, timeout=30, json={
            "text": PROMPT, "stream": True, "sampling_params": {"max_new_tokens": 8000}}) as r:
        assert next(r.iter_lines()).startswith(b"data: ")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if requests.post(ar_sim.url + "/flush_cache", timeout=10).status_code == 200:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the aborted stream still occupies the server")
    deadline = time.monotonic() + 10  # the log is written by the server's own thread
    while ar_sim.log.count(aborted) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ar_sim.log.count(aborted) == before + 1, ar_sim.log[-2000:]


def test_metrics_count_tokens(spec_sim):
    before = _metric(spec_sim.url, "sglang:generation_tokens_total")
    verify_before = _metric(spec_sim.url, "sglang:spec_verify_calls_total")
    meta = _generate(spec_sim.url, n=30).json()["meta_info"]
    assert _metric(spec_sim.url, "sglang:generation_tokens_total") == before + 30
    assert _metric(spec_sim.url, "sglang:spec_verify_calls_total") == verify_before + meta["spec_verify_ct"]
    assert 1.0 <= _metric(spec_sim.url, "sglang:spec_accept_length") <= 2.0
    assert _metric(spec_sim.url, "sglang:num_running_reqs") == 0


def _metric(url: str, name: str) -> float:
    text = requests.get(url + "/metrics", timeout=10).text
    for line in text.splitlines():
        if line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} missing from /metrics:\n{text}")


def test_metrics_absent_without_flag():
    with running_sim(speedup=SPEEDUP) as sim:
        assert requests.get(sim.url + "/metrics", timeout=10).status_code == 404


def test_first_token_latency_as_sglang_sends_it():
    """SGLang 0.5.23 adds ``first_token_latency`` to a finished request's meta_info under
    ``--enable-metrics`` only (observability/req_time_stats.py); the simulator at speedup 1 does the
    same, and on a sped-up clock always (the client needs it to scale only the server's part of a TTFT)."""
    for flags, speedup, sent in (((), 1.0, False), (("--enable-metrics",), 1.0, True), ((), SPEEDUP, True)):
        with running_sim(*flags, speedup=speedup) as sim:
            meta = _generate(sim.url, n=4).json()["meta_info"]
        assert ("first_token_latency" in meta) is sent, (flags, speedup, meta)
        if sent:
            assert 0 < meta["first_token_latency"] <= meta["e2e_latency"], meta


# ------------------------------------------------------------------------------ behaviour


def test_greedy_output_identical_across_speculative_settings(ar_sim, spec_sim):
    prompts = [PROMPT, "Write a haiku about autumn leaves falling in the rain."]
    ar = [_generate(ar_sim.url, p, n=50).json() for p in prompts]
    sp = [_generate(spec_sim.url, p, n=50).json() for p in prompts]
    with running_sim("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3",
                     "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8",
                     speedup=SPEEDUP) as tree_sim:
        tree = [_generate(tree_sim.url, p, n=50).json() for p in prompts]
    for a, b, c in zip(ar, sp, tree):
        assert a["output_ids"] == b["output_ids"] == c["output_ids"]
        assert a["text"] == b["text"] == c["text"]
    assert ar[0]["output_ids"] != ar[1]["output_ids"]
    # prefixes agree too: token i depends on the prompt and i only
    assert _generate(ar_sim.url, prompts[0], n=10).json()["output_ids"] == ar[0]["output_ids"][:10]


def _engine_tok_per_s(spec: SpecConfig | None, tokens: int, concurrency: int) -> float:
    """The scheduler's model-time figure without HTTP (mean over seeds)."""
    model = PerfModel(load_profile("k2.6-tp8-pcie"))
    rates = []
    for seed in range(5):
        engine = BatchEngine(model, spec=spec, max_running_requests=48, speedup=1.0, seed=seed,
                             clock=lambda: 0.0)
        reqs = [SimRequest(rid=str(i), prompt_tokens=model.prompt_tokens(PROMPT), max_new_tokens=tokens,
                           predictability=model.predictability(PROMPT)) for i in range(concurrency)]
        rates.append(concurrency * tokens / engine.simulate(reqs))
    return sum(rates) / len(rates)


def test_http_throughput_matches_model_time():
    """Requests over HTTP, batched by the server, take the model time the scheduler computes, at
    C=1 and C=8: tok/s by the server's own clock (completion tokens / the slowest request's
    e2e_latency x sim_speedup) agrees with the scheduler's figure. A server that ran the batch one
    request after another, or kept time wrong, is off by far more than the tolerance (acceptance is
    sampled; arrivals a loaded machine spreads out join the batch a step or two late). How close wall
    figures stay at each speedup is benchmarks/sim_fidelity.py's figure, not a test's."""
    tokens, speedup = 256, 20.0
    with running_sim(*SPEC_FLAGS, speedup=speedup) as sim:
        for concurrency in (1, 8):
            with ThreadPoolExecutor(concurrency) as pool:
                outs = list(pool.map(lambda _: _generate(sim.url, n=tokens).json(), range(concurrency)))
            total = sum(o["meta_info"]["completion_tokens"] for o in outs)
            measured = total / (max(o["meta_info"]["e2e_latency"] for o in outs) * speedup)
            expected = _engine_tok_per_s(SpecConfig(1, 1, 2), tokens, concurrency)
            assert measured == pytest.approx(expected, rel=0.15), concurrency


def test_e2e_latency_is_the_requests_model_time_in_wall_seconds(ar_sim):
    """meta_info.e2e_latency x sim_speedup is the scheduler's model-time latency of the request
    (arrival to finish), to rounding: the HTTP layer's wall time is left out of it, so a client can
    count that part unscaled (tuner.bench: figures that do not depend on the speedup). One request
    at a time, no noise: the engine's own computation of the same request is the expectation."""
    model = PerfModel(load_profile("k2.6-tp8-pcie"))
    for tokens in (1, 64, 300):
        meta = _generate(ar_sim.url, n=tokens).json()["meta_info"]
        engine = BatchEngine(model, spec=None, max_running_requests=None, speedup=1.0, clock=lambda: 0.0)
        expected = engine.simulate([SimRequest(rid="x", prompt_tokens=meta["prompt_tokens"],
                                               max_new_tokens=tokens, predictability=0.5)])
        assert meta["e2e_latency"] * SPEEDUP == pytest.approx(expected, rel=1e-9), tokens


def test_api_keys_are_checked_as_sglang_checks_them():
    """SGLang 0.5.23 (utils/auth.py decide_request_auth) with --api-key answers every route but
    /health*, /ready and /metrics 401 without `Authorization: Bearer KEY`; with --admin-api-key,
    /flush_cache wants the admin key (and no longer takes the API key). The simulator took the flags
    and answered everything, so a client without the key worked on the simulator only."""
    body = {"text": "hi", "sampling_params": {"max_new_tokens": 2, "temperature": 0}}
    user, admin = {"Authorization": "Bearer sekret"}, {"Authorization": "bearer adm"}
    with running_sim("--api-key", "sekret", "--admin-api-key", "adm", speedup=SPEEDUP) as sim:
        for method, path, kwargs in (("post", "/generate", {"json": body}), ("get", "/server_info", {}),
                                     ("get", "/v1/models", {}), ("post", "/flush_cache", {})):
            r = getattr(requests, method)(sim.url + path, timeout=30, **kwargs)
            assert (r.status_code, r.json()) == (401, {"error": "Unauthorized"}), path
        assert requests.get(sim.url + "/health", timeout=30).status_code == 200
        assert requests.post(sim.url + "/generate", json=body, headers=user, timeout=30).status_code == 200
        assert requests.post(sim.url + "/generate", json=body, headers={"Authorization": "Bearer adm"},
                             timeout=30).status_code == 401
        assert requests.post(sim.url + "/flush_cache", headers=user, timeout=30).status_code == 401
        assert requests.post(sim.url + "/flush_cache", headers=admin, timeout=30).status_code == 200
    with running_sim("--admin-api-key", "adm", speedup=SPEEDUP) as sim:  # admin key alone: flushes only
        assert requests.post(sim.url + "/generate", json=body, timeout=30).status_code == 200
        assert requests.post(sim.url + "/flush_cache", timeout=30).status_code == 401
