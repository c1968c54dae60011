"""A repo id's config.json is looked for in the one Hugging Face cache folder the server uses
(huggingface_hub's constants.py: the first set of HF_HUB_CACHE, HUGGINGFACE_HUB_CACHE, HF_HOME/hub,
XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub), not in each of them in turn.

QA (qa193): with ``HF_HUB_CACHE=/scratch/hub`` (where the server looks; the model not there) and the
model in ``~/.cache/huggingface/hub``, ``tuner doctor`` said the model files were there and the
facts were read from a cache the server never opens (offline it finds no model; online it downloads
it again)."""

from __future__ import annotations

import pytest

from tuner.sglang.model import find_config_json, hf_cache_dirs


@pytest.fixture
def home_cache(tmp_path, monkeypatch):
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    snap = tmp_path / "home" / ".cache" / "huggingface" / "hub" / "models--org--m" / "snapshots" / "abc"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text('{"architectures": ["DeepseekV3ForCausalLM"]}')
    return snap / "config.json"


def test_the_home_cache_is_the_server_s_when_no_variable_names_another(home_cache):
    assert find_config_json("org/m") == home_cache


@pytest.mark.parametrize("var, sub", [("HF_HUB_CACHE", ""), ("HUGGINGFACE_HUB_CACHE", ""),
                                      ("HF_HOME", "hub"), ("XDG_CACHE_HOME", "huggingface/hub")])
def test_a_cache_the_server_does_not_use_is_not_read(home_cache, tmp_path, monkeypatch, var, sub):
    monkeypatch.setenv(var, str(tmp_path / "scratch"))
    assert hf_cache_dirs() == [tmp_path / "scratch" / sub if sub else tmp_path / "scratch"]
    assert find_config_json("org/m") is None
    # ... also when the variable comes from the study's server.env
    monkeypatch.delenv(var)
    assert find_config_json("org/m", env={var: str(tmp_path / "scratch")}) is None


def test_the_first_variable_set_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "a"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "b"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    assert hf_cache_dirs() == [tmp_path / "a"]
    monkeypatch.delenv("HF_HUB_CACHE")
    assert hf_cache_dirs() == [tmp_path / "b" / "hub"]
