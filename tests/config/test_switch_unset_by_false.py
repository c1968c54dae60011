"""``false`` for a switch whose SGLang 0.5.23 default is None (``enable_multimodal``, ``enable_lora``,
...) is refused at ``tuner study create``, in ``server.args`` and a space's ``fixed``, in one line
naming the key (tuner/config/server_arg_checks.py ``unset_by_false``); a stored study holding one
stays readable.

QA (qa200): a false store_true is left off the command line, and out of the export (SGLang's
``--config`` loader skips it), which keeps SGLang's default; for these fields that is None, decided
by SGLang (``enable_multimodal`` by the model's architecture, ``enable_lora`` on with ``lora_paths``),
not false. ``enable_multimodal: false`` was created, launched and exported without the flag, so
SGLang's parser (run on CPU, the export through its own ``ConfigArgumentMerger``) held None, while
the study recorded it off."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.demo_study import ROOT, demo_study

from tuner.cli import cli
from tuner.config import server_arg_checks
from tuner.config.server_arg_checks import check_server_args
from tuner.engine.study import config_from_study, open_study
from tuner.sglang.server_args import server_args_table


def _study(tmp_path, args=None, fixed=None):
    space = tmp_path / "space.yaml"
    data = yaml.safe_load((ROOT / "search_spaces" / "eagle3.yaml").read_text())
    data["fixed"] = fixed or {}
    space.write_text(yaml.safe_dump(data))
    return demo_study(tmp_path, "mm", **{"search_space": str(space), "server.args": args or {}})


@pytest.mark.parametrize("where, key", [("server.args", "enable_multimodal"), ("fixed", "enable_lora")])
def test_false_that_sglang_reads_as_unset_is_refused_at_create(tmp_path, where, key):
    assert server_args_table().defaults()[key] is None  # SGLang 0.5.23's ServerArgs default
    study = _study(tmp_path, **{"args" if where == "server.args" else "fixed": {key: False}})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    file = "mm.yaml" if where == "server.args" else "space.yaml"
    assert f"{file}: {where}: {key}: false cannot be given on SGLang 0.5.23's command line" in lines[0], r.output
    assert "leave the key out" in lines[0], r.output
    assert not (tmp_path / "mm.db").exists()


def test_true_and_a_false_default_are_kept():
    assert check_server_args({"enable_multimodal": True, "enable_mixed_chunk": False}, "server.args") == \
        {"enable_multimodal": True, "enable_mixed_chunk": False}


def test_a_stored_study_holding_one_stays_readable(tmp_path, monkeypatch):
    # a study created before the check (stands in: the check off for create)
    study = _study(tmp_path, args={"enable_multimodal": False})
    monkeypatch.setattr(server_arg_checks, "unset_by_false", lambda dest, value: None)
    assert CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False).exit_code == 0
    monkeypatch.undo()
    # what every reader of the study (export, confirm, run --study) rebuilds it from
    config, _, _ = config_from_study(open_study("mm", f"sqlite:///{tmp_path / 'mm.db'}"))
    assert config.server.args == {"enable_multimodal": False}
