"""Server arguments SGLang 0.5.23 refuses during argument handling for the study's model and GPUs are
refused at ``tuner study create``, one line naming ``server.args`` and SGLang's words, nothing
written. QA (qa141): the rules and the simulator refused these, but the study path did not check
them, so create passed them and every launch failed, its baseline first:

* a hybrid (mamba) model's radix cache (``arg_groups/mamba_hook.py``: ``no_buffer only supports
  page_size=1.``; LFM2 takes no extra buffer); with the radix cache off the study is created;
* trtllm_mha as the prefill backend on SM120 with an fp8_e4m3 KV cache (``attention_hook.py`` lines
  207-221); fp8_e5m2 there is created.

Real ``tuner study create`` in process (click's runner)."""

from __future__ import annotations

import yaml
from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli
from tuner.sim.profile import PROFILES_DIR


def _profile(tmp_path, architecture, capability):
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["model"].update(architecture=architecture, attention="mha")
    data["hardware"]["compute_capability"] = capability
    path = tmp_path / f"profile-{architecture}-{capability}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _create(tmp_path, name, args, architecture="Lfm2ForCausalLM", capability="9.0"):
    profile = _profile(tmp_path, architecture, capability)
    study = demo_study(tmp_path, name, **{"server.sim": {"profile": str(profile)}, "server.args": args})
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


def test_trtllm_mha_prefill_with_an_fp8_e4m3_kv_cache_on_sm120_is_refused_at_create(tmp_path):
    args = {"attention_backend": "trtllm_mha", "kv_cache_dtype": "fp8_e4m3"}
    r = _create(tmp_path, "sm120", args, architecture="LlamaForCausalLM", capability="12.0")
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and ": server.args: kv_cache_dtype fp8_e4m3: the prefill backend trtllm_mha" in lines[0], \
        r.output
    assert "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache" in lines[0], r.output
    assert not (tmp_path / "sm120.db").exists()
    ok = _create(tmp_path, "sm120-e5m2", {**args, "kv_cache_dtype": "fp8_e5m2"}, architecture="LlamaForCausalLM",
                 capability="12.0")
    assert ok.exit_code == 0, ok.output
