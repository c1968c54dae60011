"""``server.model_path`` or ``draft_model_path`` starting with ``~`` or holding ``$VAR`` is refused at
``tuner study create`` in one line naming the file and the key, with the path written out
(tuner/config/paths.py ``model_path_not_expanded``); a stored study holding one still opens.

QA (qa228): ``model_path: ~/models/kimi`` on ``backend: sglang`` was created ("the model's config.json
is not readable here", attention backend guessed), and launched as ``--model-path ~/models/kimi``:
the launcher starts SGLang without a shell, and SGLang 0.5.23 expands nothing
(``configs/model_config.py``; its ``--config`` loader, reading the export, neither), so the path is
no folder to it and no Hugging Face id: every launch, the baseline's first, would fail."""

from __future__ import annotations

import os
import sys

import pytest
from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli
from tuner.config.study import study_from_dict


@pytest.mark.parametrize("key", ["model_path", "draft_model_path"])
@pytest.mark.parametrize("value, found", [("~/models/kimi", "'~'"), ("$MODELS/kimi", "'$MODELS'"),
                                          ("/srv/${RUN}/kimi", "'${RUN}'")])
def test_a_path_nobody_expands_is_refused_at_create(tmp_path, monkeypatch, key, value, found):
    monkeypatch.setenv("HOME", "/home/me")
    monkeypatch.setenv("MODELS", "/models")
    study = demo_study(tmp_path, "mp", **{"server.backend": "sglang", f"server.{key}": value,
                                          "server.python": os.path.realpath(sys.executable)})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert f"mp.yaml: server.{key}: {value!r}: {found} is not expanded" in lines[0], r.output
    assert "write the path out" in lines[0], r.output
    if value.startswith("~"):
        assert "(/home/me/models/kimi)" in lines[0], r.output
    assert not (tmp_path / "mp.db").exists() and not (tmp_path / "work").exists()


def test_a_path_with_a_tilde_inside_is_taken(tmp_path):
    # only a leading ~ is the shell's home; inside a name it is a character of the folder's name
    study = demo_study(tmp_path, "mp", **{"server.model_path": "/models/kimi~2"})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 0, r.output


def test_a_stored_study_holding_one_still_opens(tmp_path):
    import yaml
    study = demo_study(tmp_path, "mp", **{"server.model_path": "/models/kimi"})
    data = yaml.safe_load(study.read_text())
    data["server"]["model_path"] = "~/models/kimi"
    assert study_from_dict(data).server.model_path == "~/models/kimi"
