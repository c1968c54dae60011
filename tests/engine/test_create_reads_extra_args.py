"""The rules judge a study's settings with what ``server.extra_args`` sets too (raw argv appended last
to every launch, read as SGLang 0.5.23's argparse reads it: the last of a flag given twice wins), not
with ``server.args`` alone. QA (qa146): on a hybrid model (LFM2) ``extra_args: [--page-size, "16"]`` was
created and every launch failed (``no_buffer only supports page_size=1.``), ``--disable-radix-cache``
there was not seen and a study SGLang runs was refused; on SM120 ``--kv-cache-dtype fp8_e4m3`` there
with trtllm_mha was created; an attention backend given twice there was read as its first.

Real ``tuner study create`` in process (click's runner), profiles as
test_create_refuses_what_sglang_refuses.py builds them."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from support.demo_study import demo_study
from test_create_refuses_what_sglang_refuses import _profile

from tuner.cli import cli


def _create(tmp_path, name, args, extra_args, architecture="Lfm2ForCausalLM", capability="9.0"):
    profile = _profile(tmp_path, architecture, capability)
    study = demo_study(tmp_path, name, **{"server.sim": {"profile": str(profile)}, "server.args": args,
                                          "server.extra_args": extra_args})
    return CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)


@pytest.mark.parametrize("args, extra_args, architecture, capability, says", [
    ({}, ["--page-size", "16"], "Lfm2ForCausalLM", "9.0", "break mamba-cache"),
    ({}, ["--page-size=16", "--mamba-radix-cache-strategy", "no_buffer"], "Lfm2ForCausalLM", "9.0",
     "break mamba-cache"),
    ({"attention_backend": "trtllm_mha"}, ["--kv-cache-dtype", "fp8_e4m3"], "LlamaForCausalLM", "12.0",
     "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache"),
    ({"kv_cache_dtype": "fp8_e4m3"}, ["--attention-backend", "triton", "--attention-backend", "trtllm_mha"],
     "LlamaForCausalLM", "12.0", "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache"),
])
def test_what_extra_args_set_is_judged_at_create(tmp_path, args, extra_args, architecture, capability, says):
    r = _create(tmp_path, "refused", args, extra_args, architecture, capability)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "server.args" in lines[0] and says in lines[0], r.output
    assert not (tmp_path / "refused.db").exists()


@pytest.mark.parametrize("args, extra_args, architecture, capability", [
    ({"page_size": 16}, ["--disable-radix-cache"], "Lfm2ForCausalLM", "9.0"),
    ({"kv_cache_dtype": "fp8_e4m3"}, ["--attention-backend", "trtllm_mha", "--attention-backend", "triton"],
     "LlamaForCausalLM", "12.0"),
])
def test_what_extra_args_set_lets_sglang_run_it(tmp_path, args, extra_args, architecture, capability):
    r = _create(tmp_path, "created", args, extra_args, architecture, capability)
    assert r.exit_code == 0, r.output
    assert (tmp_path / "created.db").exists()
