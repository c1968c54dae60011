"""``tuner study create`` judges a study's attention backends on its GPUs as SGLang 0.5.23 does: its
argument-handling checks first, in its order (``tuner.sglang.attention.launch_refusal``: overrides.py,
``_mla_kv_cache_dtype_checks`` then ``_cutedsl_prefill_backend_fill``, then attention_hook.py's
trtllm_mha checks), then the fa3 fallback (``_attention_backend_fa3_fp8_fallback``), then fa3's GPU
assert as each runner starts (``attention_registry.py``, ``create_flashattention_v3_backend``).

QA (qa150), Kimi K2.6 (MLA) on the simulator, each case run against SGLang 0.5.23's own argument
handling on CPU (benchmarks/sglang_agreement.py's child):

* ``attention_backend: trtllm_mla`` with ``prefill_attention_backend``/``decode_attention_backend``
  both given on Hopper was created; SGLang checks the attention backend too and refuses every launch,
  the baseline first ("TRTLLM MLA backend is only supported on Blackwell GPUs");
* fa3 with ``kv_cache_dtype: fp8_e5m2`` on SM100 was refused (fa3's GPU assert); SGLang turns it into
  triton before any runner starts and runs it;
* with a split and fp8_e5m2 on Hopper create named the KV-cache dtype, and prefill cutedsl_mla with
  decode trtllm_mla named cutedsl; SGLang refuses trtllm_mla's GPU first in both.

Real ``tuner study create`` in process (click's runner)."""

from __future__ import annotations

import yaml
from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli
from tuner.sim.profile import PROFILES_DIR

TRTLLM_MLA_GPU = "TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x)"


def _create(tmp_path, name, args, capability):
    data = yaml.safe_load((PROFILES_DIR / "k2.6-tp8-nvlink.yaml").read_text())
    data["hardware"]["compute_capability"] = capability
    profile = tmp_path / f"profile-{name}.yaml"
    profile.write_text(yaml.safe_dump(data))
    study = demo_study(tmp_path, name, **{"server.sim": {"profile": str(profile)}, "server.args": args})
    return CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)


def _refused(r, tmp_path, name) -> str:
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and ": server.args: " in lines[0], r.output
    assert not (tmp_path / f"{name}.db").exists()
    return lines[0]


def test_trtllm_mla_as_the_attention_backend_beside_a_split_is_refused_off_blackwell(tmp_path):
    args = {"attention_backend": "trtllm_mla", "prefill_attention_backend": "triton",
            "decode_attention_backend": "flashinfer"}
    line = _refused(_create(tmp_path, "split", args, "9.0"), tmp_path, "split")
    assert "attention backend trtllm_mla does not start for the model on sm90" in line, line
    assert TRTLLM_MLA_GPU in line and line.endswith("set another attention_backend"), line
    # prefill and decode alike: SGLang's attention backend becomes theirs (_attention_backend_default)
    alike = {**args, "decode_attention_backend": "triton"}
    assert _create(tmp_path, "alike", alike, "9.0").exit_code == 0


def test_fa3_with_an_fp8_e5m2_kv_cache_runs_on_triton_off_hopper(tmp_path):
    r = _create(tmp_path, "e5m2", {"attention_backend": "fa3", "kv_cache_dtype": "fp8_e5m2"}, "10.0")
    assert r.exit_code == 0, r.output
    line = _refused(_create(tmp_path, "e4m3", {"attention_backend": "fa3", "kv_cache_dtype": "fp8_e4m3"}, "10.0"),
                    tmp_path, "e4m3")
    assert "attention backend fa3 does not start for the model on sm100" in line, line
    # prefill fa3 as given stays fa3: the fallback changes the attention backend only
    split = {"attention_backend": "fa3", "prefill_attention_backend": "fa3", "decode_attention_backend": "triton",
             "kv_cache_dtype": "fp8_e5m2"}
    line = _refused(_create(tmp_path, "pfa3", split, "10.0"), tmp_path, "pfa3")
    assert "attention backend fa3 does not start for the model on sm100" in line, line


def test_the_gpu_is_named_before_the_kv_cache_dtype_and_the_prefill_role_as_sglang_checks_them(tmp_path):
    args = {"attention_backend": "trtllm_mla", "prefill_attention_backend": "triton",
            "decode_attention_backend": "flashinfer", "kv_cache_dtype": "fp8_e5m2"}
    line = _refused(_create(tmp_path, "kv", args, "9.0"), tmp_path, "kv")
    assert TRTLLM_MLA_GPU in line and "kv-cache-dtype" not in line, line
    roles = {"prefill_attention_backend": "cutedsl_mla", "decode_attention_backend": "trtllm_mla"}
    line = _refused(_create(tmp_path, "roles", roles, "9.0"), tmp_path, "roles")
    assert TRTLLM_MLA_GPU in line and line.endswith("set another decode_attention_backend"), line
    # on Blackwell the cutedsl prefill is what SGLang refuses
    line = _refused(_create(tmp_path, "b200", roles, "10.0"), tmp_path, "b200")
    assert "prefill_attention_backend cutedsl_mla" in line and "only supports decoding" in line, line
