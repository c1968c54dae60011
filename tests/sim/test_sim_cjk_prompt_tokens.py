"""The simulator counts a CJK prompt about a token a character, as SGLang's tokenizers do, and so
refuses a long Chinese prompt with SGLang 0.5.23's context-length 400 (``tokenizer_manager.py``
``_validate_one_request``, lines 1337-1351). QA: it counted characters / 4, CJK included, so a
9,000-character Chinese prompt (some 9,000 tokens, over the 8,192 context) was 2,250 tokens and
served. The count is the tuner's own estimate (:func:`tuner.config.dataset.estimate_tokens`)."""

from __future__ import annotations

import json

import pytest
import requests
from support.simproc import running_sim

from tuner.config.dataset import estimate_tokens
from tuner.sim.model import PerfModel, load_profile

JSON = {"Content-Type": "application/json"}
ZH = "中"  # one token to SGLang's tokenizers (Qwen's, Llama 3's, Kimi's)


def test_the_simulator_counts_a_prompt_as_the_tuner_estimates_it():
    model = PerfModel(load_profile("k2.6-tp8-pcie"))
    for text in ("x" * 400, ZH * 400, "日本語のテキスト and English " * 20, "한국어 " * 50):
        assert model.prompt_tokens(text) == estimate_tokens(text), text[:30]
    assert model.prompt_tokens(ZH * 400) == 400  # not 100: a character a token
    assert model.prompt_tokens("x" * 400) == 100  # other text keeps chars_per_token (4)


@pytest.fixture(scope="module")
def sim():
    with running_sim(speedup=200.0) as s:
        yield s


def _post(sim, route: str, body: dict) -> requests.Response:
    return requests.post(sim.url + route, data=json.dumps(body).encode(), headers=JSON, timeout=60)


def test_a_long_chinese_prompt_gets_sglangs_context_length_400(sim):
    context = requests.get(sim.url + "/server_info", timeout=30).json()["context_length"]
    text = ZH * (context + 808)  # 9,000 characters at the default 8,192
    r = _post(sim, "/generate", {"text": text, "sampling_params": {"max_new_tokens": 4}})
    said = f"The input ({context + 808} tokens) is longer than the model's context length ({context} tokens)."
    assert (r.status_code, r.json()) == (400, {"error": {"message": said}})
    chat = _post(sim, "/v1/chat/completions",
                 {"messages": [{"role": "user", "content": text}], "max_tokens": 4})
    assert chat.status_code == 400, chat.text
    assert chat.json()["type"] == "BadRequestError"
    assert f"is longer than the model's context length ({context} tokens)." in chat.json()["message"]


def test_a_chinese_prompt_within_the_context_reports_a_token_a_character(sim):
    r = _post(sim, "/generate", {"text": ZH * 6000, "sampling_params": {"max_new_tokens": 4}})
    assert r.status_code == 200, r.text
    assert r.json()["meta_info"]["prompt_tokens"] == 6000
    c = _post(sim, "/v1/completions", {"prompt": ZH * 6000, "max_tokens": 4})
    assert c.status_code == 200, c.text
    assert c.json()["usage"]["prompt_tokens"] == 6000
