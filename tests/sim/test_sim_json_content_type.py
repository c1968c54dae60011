"""The ``Content-Type`` of the simulator's JSON answers, as SGLang 0.5.23's: ``application/json``.

SGLang answers JSON with Starlette's ``ORJSONResponse`` / ``JSONResponse`` (``media_type =
"application/json"``; ``Response.init_headers`` appends a charset to ``text/*`` types only), its
401 too (``srt/utils/auth.py``). aiohttp's ``json_response`` said ``application/json;
charset=utf-8``: a client that matched the simulator's header exactly failed on SGLang.
"""

from __future__ import annotations

import pytest
import requests
from support.simproc import running_sim


@pytest.fixture(scope="module")
def sim():
    with running_sim("--api-key", "k3y", speedup=200.0) as s:
        yield s


AUTH = {"Authorization": "Bearer k3y"}


@pytest.mark.parametrize(("method", "path", "body", "status"), [
    ("POST", "/generate", {"text": "hi", "sampling_params": {"max_new_tokens": 2}}, 200),
    ("POST", "/generate", {"text": "hi", "sampling_params": {"max_new_tokens": -1}}, 400),
    ("POST", "/v1/completions", {"prompt": "hi", "max_tokens": 2}, 200),
    ("POST", "/v1/completions", {"prompt": "", "max_tokens": 2}, 400),
    ("GET", "/v1/models", None, 200),
    ("GET", "/server_info", None, 200),
    ("GET", "/nope", None, 404),
])
def test_json_answers_say_application_json(sim, method, path, body, status):
    r = requests.request(method, sim.url + path, json=body, headers=AUTH, timeout=30)
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"] == "application/json"
    r.json()


def test_unauthorized_says_application_json(sim):
    r = requests.get(sim.url + "/v1/models", timeout=10)
    assert (r.status_code, r.json()) == (401, {"error": "Unauthorized"})
    assert r.headers["Content-Type"] == "application/json"

