"""The Hugging Face cache is looked up where huggingface_hub (and so the server) looks: the legacy
``HUGGINGFACE_HUB_CACHE`` too, and ``~`` and ``$VAR`` in the variables expanded (constants.py).

QA (qa167): with ``HUGGINGFACE_HUB_CACHE=/data/hub``, or ``HF_HUB_CACHE='$SCRATCH/hub'`` as an env
file gives it, ``tuner doctor`` said ``fail model files: no config.json for server.model_path
'org/ds' ... download the model first`` and ``model: unknown`` (an MLA model pinned flashinfer), where
the server finds it.
"""

from __future__ import annotations

import pytest

from tuner.sglang.model import find_config_json, read_model_facts


@pytest.fixture
def cached(tmp_path, monkeypatch):
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # nothing cached there
    snapshot = tmp_path / "scratch" / "hub" / "models--org--ds" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 512}')
    monkeypatch.setenv("SCRATCH", str(tmp_path / "scratch"))
    return snapshot / "config.json"


@pytest.mark.parametrize("var, value", [
    ("HUGGINGFACE_HUB_CACHE", "{scratch}/hub"),
    ("HF_HUB_CACHE", "$SCRATCH/hub"),
    ("HF_HUB_CACHE", "~/../scratch/hub"),
    ("HF_HOME", "${SCRATCH}"),
    ("XDG_CACHE_HOME", "$SCRATCH/xdg")])
def test_the_cache_the_hub_reads_is_found(cached, monkeypatch, tmp_path, var, value):
    if var == "XDG_CACHE_HOME":  # $XDG_CACHE_HOME/huggingface/hub
        (tmp_path / "scratch" / "xdg" / "huggingface").mkdir(parents=True)
        (tmp_path / "scratch" / "hub").rename(tmp_path / "scratch" / "xdg" / "huggingface" / "hub")
        cached = tmp_path / "scratch" / "xdg" / "huggingface" / "hub" / cached.relative_to(
            tmp_path / "scratch" / "hub")
    monkeypatch.setenv(var, value.replace("{scratch}", str(tmp_path / "scratch")))
    found = find_config_json("org/ds")
    assert found is not None and found.resolve() == cached.resolve()
    assert read_model_facts("org/ds").attention == "mla"


def test_a_cache_without_the_model_is_still_none(cached, monkeypatch, tmp_path):
    monkeypatch.setenv("HUGGINGFACE_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert find_config_json("org/ds") is None
