"""The Hugging Face cache looked up where there is no home folder: ``HOME`` unset and this user's id
in no passwd entry, as in a container run as ``-u 1234`` or a Kubernetes ``runAsUser``.

QA (qa157): ``tuner study create`` and ``tuner doctor`` of an SGLang study (a hub id as
``server.model_path``) ended in ``RuntimeError: Could not determine home directory.`` (pathlib's
``Path.home()``; a passwd ``KeyError`` on Python 3.10). Now the variables' folders are looked in
and ``~/.cache`` is not: the model's facts are then the study's ``server.facts``.
"""

import pytest

from support.rights import without_home
from tuner.sglang.model import find_config_json, hf_cache_dirs


@pytest.fixture
def no_home(monkeypatch):
    """HOME unset and the process's uid one the passwd database has no entry for (a real lookup)."""
    without_home(monkeypatch)


def test_no_home_folder_no_home_cache(no_home, tmp_path, monkeypatch):
    assert hf_cache_dirs() == []
    assert find_config_json("moonshotai/Kimi-K2.6") is None
    snapshot = tmp_path / "hub" / "models--moonshotai--Kimi-K2.6" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # the variables still count
    assert hf_cache_dirs() == [tmp_path / "hub"]
    assert find_config_json("moonshotai/Kimi-K2.6") == snapshot / "config.json"
