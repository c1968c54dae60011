"""Unknown paths and wrong methods, answered as SGLang 0.5.23's FastAPI app answers them.

SGLang registers its error handler for FastAPI's ``HTTPException`` (``srt/entrypoints/http_server.py``
lines 578-632); the 404 and 405 Starlette's router raises are Starlette's own ``HTTPException``, so
FastAPI's default handler renders them: JSON ``{"detail": ...}``, a 405 with ``Allow``. FastAPI's
``@app.get`` routes do not answer ``HEAD``. The simulator answered aiohttp's plain text
("404: Not Found") and 200 to ``HEAD``, which a client parsing the error body as JSON fails on.
"""

from __future__ import annotations

import pytest
import requests
from support.simproc import running_sim


@pytest.fixture(scope="module")
def sim():
    with running_sim(speedup=200.0) as s:
        yield s


@pytest.mark.parametrize("path", ["/nope", "/v1/nope", "/metrics"])  # /metrics: not without --enable-metrics
def test_unknown_path_is_fastapis_json_404(sim, path):
    r = requests.get(sim.url + path, timeout=10)
    assert r.status_code == 404
    assert r.headers["Content-Type"].split(";")[0] == "application/json"
    assert r.json() == {"detail": "Not Found"}


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("GET", "/generate", {"POST", "PUT"}),
    ("POST", "/health", {"GET"}),
    ("GET", "/v1/chat/completions", {"POST"}),
    ("PUT", "/flush_cache", {"GET", "POST"}),
    ("HEAD", "/health", {"GET"}),
    ("HEAD", "/v1/models", {"GET"}),
])
def test_wrong_method_is_fastapis_json_405(sim, method, path, allow):
    r = requests.request(method, sim.url + path, timeout=10)
    assert r.status_code == 405
    assert r.headers["Content-Type"].split(";")[0] == "application/json"
    assert set(r.headers["Allow"].split(", ")) == allow
    if method != "HEAD":
        assert r.json() == {"detail": "Method Not Allowed"}


def test_known_routes_still_answer(sim):
    assert requests.get(sim.url + "/health", timeout=10).status_code == 200
    assert requests.get(sim.url + "/v1/models", timeout=10).json()["object"] == "list"


def test_root_says_sglang_is_running(sim):
    """http_server.py lines 2122-2128: ``GET /`` and ``HEAD /`` answer the JSON string (the simulator
    had no ``/``: 404)."""
    r = requests.get(sim.url + "/", timeout=10)
    assert r.status_code == 200
    assert r.headers["Content-Type"].split(";")[0] == "application/json"
    assert r.json() == "SGLang is running"
    assert requests.head(sim.url + "/", timeout=10).status_code == 200


@pytest.mark.parametrize(("method", "path", "to"), [
    ("POST", "/generate/?x=1", "/generate?x=1"),
    ("GET", "/generate/", "/generate"),  # the twin has a route, for another method: still redirected
    ("GET", "/health/", "/health"),
])
def test_trailing_slash_is_starlettes_307(sim, method, path, to):
    """starlette/routing.py Router.app (redirect_slashes): a path without a route whose trailing-slash
    twin has one is redirected there (307, the query kept); the simulator answered 404."""
    r = requests.request(method, sim.url + path, allow_redirects=False, timeout=10)
    assert r.status_code == 307
    assert r.headers["Location"] == sim.url + to


def test_a_client_following_the_redirect_is_served(sim):
    r = requests.post(sim.url + "/generate/", json={"text": "hi", "sampling_params": {"max_new_tokens": 2}},
                      timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["meta_info"]["completion_tokens"] == 2


def test_empty_model_name_is_sglangs_model_not_found(sim):
    """Starlette's ``{model:path}`` matches the empty name: ``/v1/models/`` is retrieve_model's 404."""
    r = requests.get(sim.url + "/v1/models/", allow_redirects=False, timeout=10)
    assert r.status_code == 404
    assert r.json()["error"]["code"] == "model_not_found"
    assert r.json()["error"]["message"] == "The model '' does not exist"
