"""A study of a hybrid (mamba) model whose radix cache SGLang 0.5.23 refuses during argument handling
(``arg_groups/mamba_hook.py``: ``no_buffer only supports page_size=1.``; LFM2 takes no extra buffer)
is refused at ``tuner study create``, one line naming ``server.args`` and SGLang's words, nothing
written; the same study with the radix cache off is created. QA (qa141): the rules and the simulator
refused it, but the study path did not read the radix-cache flags, so create passed it and every
launch failed, its baseline first. Real ``tuner study create`` in process (click's runner)."""

from __future__ import annotations

import yaml
from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli
from tuner.sim.profile import PROFILES_DIR


def _lfm2_profile(tmp_path):
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["model"].update(architecture="Lfm2ForCausalLM", attention="mha")
    data["hardware"]["compute_capability"] = "9.0"
    path = tmp_path / "profile-lfm2.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _create(tmp_path, name, args):
    study = demo_study(tmp_path, name, **{"server.sim": {"profile": str(_lfm2_profile(tmp_path))},
                                          "server.args": args})
    return CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)


def test_a_hybrid_models_page_size_sglang_refuses_is_refused_at_create(tmp_path):
    r = _create(tmp_path, "lfm2", {"page_size": 16})
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "server.args" in lines[0], r.output
    assert "break mamba-cache" in lines[0] and "SGLang refuses --page-size 16 for Lfm2ForCausalLM" in lines[0], r.output
    assert lines[0].endswith("use page_size 1, or disable_radix_cache"), r.output
    assert not (tmp_path / "lfm2.db").exists()
    ok = _create(tmp_path, "lfm2-nocache", {"page_size": 16, "disable_radix_cache": True})
    assert ok.exit_code == 0, ok.output
