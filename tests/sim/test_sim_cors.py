"""CORS, as SGLang 0.5.23 answers it (``srt/entrypoints/http_server.py`` lines 500-506: Starlette's
``CORSMiddleware``, every origin, method and header allowed, with credentials).

A browser client (a web UI on another origin) sends a preflight ``OPTIONS`` before its JSON
``POST``: SGLang answers it 200 and marks every answer with the origin; the simulator answered the
preflight 405 and sent no CORS headers, so a page that works against SGLang failed against it.
"""

from __future__ import annotations

import json

import pytest
import requests
from support.simproc import running_sim

ORIGIN = "http://ui.example:3000"


@pytest.fixture(scope="module")
def sim():
    with running_sim("--api-key", "k3y", speedup=200.0) as s:
        yield s


def test_preflight_is_answered_without_a_key(sim):
    r = requests.options(sim.url + "/v1/chat/completions", timeout=10, headers={
        "Origin": ORIGIN, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    assert (r.status_code, r.text) == (200, "OK")
    assert r.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert r.headers["Access-Control-Allow-Credentials"] == "true"
    assert r.headers["Access-Control-Allow-Headers"] == "authorization, content-type"
    assert "POST" in r.headers["Access-Control-Allow-Methods"].split(", ")
    assert r.headers["Access-Control-Max-Age"] == "600"


@pytest.mark.parametrize(("extra", "said"), [({"Access-Control-Request-Method": "FOO"}, "Disallowed CORS method"),
                                             ({"Access-Control-Request-Method": "POST",
                                               "Access-Control-Request-Private-Network": "true"},
                                              "Disallowed CORS private-network")])
def test_preflight_refusals_are_starlettes(sim, extra, said):
    r = requests.options(sim.url + "/generate", headers={"Origin": ORIGIN, **extra}, timeout=10)
    assert (r.status_code, r.text) == (400, said)


@pytest.mark.parametrize("stream", [False, True])
def test_answers_to_an_origin_carry_cors_headers(sim, stream):
    body = {"text": "hi", "stream": stream, "sampling_params": {"max_new_tokens": 2}}
    r = requests.post(sim.url + "/generate", data=json.dumps(body), timeout=30, headers={
        "Origin": ORIGIN, "Authorization": "Bearer k3y", "Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert r.headers["Access-Control-Allow-Credentials"] == "true"
    assert r.headers["Vary"] == "Origin"


def test_no_origin_no_cors_headers(sim):
    r = requests.get(sim.url + "/v1/models", headers={"Authorization": "Bearer k3y"}, timeout=10)
    assert r.status_code == 200
    assert "Access-Control-Allow-Origin" not in r.headers
    # an OPTIONS that is no preflight reaches the router: FastAPI's 405
    assert requests.options(sim.url + "/generate", headers={"Authorization": "Bearer k3y"},
                            timeout=10).status_code == 405
