"""A Hugging Face cache named in the study's ``server.env`` (where the server looks for its model) is
where the model's ``config.json`` is looked up too.

QA (qa167): with ``server.env: {HF_HUB_CACHE: /data/hub}`` and the model there, ``tuner doctor`` said
``fail model files: no config.json for server.model_path 'org/ds' ... download the model first`` and
``model: unknown`` (an MLA model pinned flashinfer), though the server, started with that
environment, finds it.
"""

from __future__ import annotations

import pytest
from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, PASS, check_model_files
from tuner.engine.facts import gather_facts


@pytest.fixture
def hub(tmp_path, monkeypatch):
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # nothing cached there
    snapshot = tmp_path / "hub" / "models--org--ds" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 512}')
    return tmp_path / "hub"


def study(tmp_path, env: dict):
    return load_study(demo_study(tmp_path, **{
        "server.backend": "sglang", "server.model_path": "org/ds", "server.draft_model_path": "org/ds",
        "server.env": env}))


@pytest.mark.parametrize("env", [{"HF_HUB_CACHE": "{hub}"}, {"HF_HOME": "{home}"}])
def test_the_server_s_cache_is_read(tmp_path, hub, env):
    env = {k: v.format(hub=hub, home=hub.parent) for k, v in env.items()}
    config = study(tmp_path, env)
    facts = gather_facts(config.server)
    assert facts.target.attention == "mla" and facts.draft.attention == "mla"
    assert str(hub) in facts.target.source
    assert check_model_files(config).status == PASS


def test_without_it_the_model_is_still_not_found(tmp_path, hub):
    config = study(tmp_path, {})
    assert gather_facts(config.server).target is None
    assert check_model_files(config).status == FAIL
