"""The backends each model runner builds (tuner.sglang.attention.runner_backends): the one list study
create's check (tuner.engine.preflight.check_backends_start) and the simulator's runner check
(tuner.sim.args._runner_gpu_refusal) both read, as SGLang 0.5.23 builds it
(model_runner_components/attention_backend_setup.py, resolve_attention_backend_strs)."""

from __future__ import annotations

import pytest

from tuner.sglang.attention import runner_backends


@pytest.mark.parametrize("given, expected", [
    # the target's prefill and decode backends are the resolved one where not given; the draft
    # runner, naming none, runs the target's pair
    ((("fa3", None, None, None), {}),
     [("fa3", "target"), ("fa3", "target"), ("fa3", "draft"), ("fa3", "draft")]),
    ((("triton", "flashinfer", None, None), {}),
     [("flashinfer", "target"), ("triton", "target"), ("flashinfer", "draft"), ("triton", "draft")]),
    ((("triton", None, "fa3", None), {}),
     [("triton", "target"), ("fa3", "target"), ("triton", "draft"), ("fa3", "draft")]),
    # --speculative-draft-attention-backend: one backend for the draft's prefill and decode alike
    ((("fa3", "flashinfer", "triton", "flashmla"), {}),
     [("flashinfer", "target"), ("triton", "target"), ("flashmla", "draft")]),
    # no speculation: the target's runner alone, whatever draft backend was given
    ((("fa3", None, None, "triton"), {"speculative": False}), [("fa3", "target"), ("fa3", "target")]),
    # fa3 with an fp8_e5m2 KV cache is triton (overrides.py, _attention_backend_fa3_fp8_fallback);
    # a prefill, decode or draft backend given as fa3 stays fa3
    ((("fa3", None, None, None), {"kv_cache_dtype": "fp8_e5m2"}),
     [("triton", "target"), ("triton", "target"), ("triton", "draft"), ("triton", "draft")]),
    ((("fa3", "fa3", None, "fa3"), {"kv_cache_dtype": "fp8_e5m2"}),
     [("fa3", "target"), ("triton", "target"), ("fa3", "draft")]),
    ((("fa3", None, None, None), {"kv_cache_dtype": "fp8_e4m3"}),
     [("fa3", "target"), ("fa3", "target"), ("fa3", "draft"), ("fa3", "draft")]),
    # nothing resolved (SGLang's own choice not known): no backend to check
    (((None, None, None, None), {}), [(None, "target"), (None, "target"), (None, "draft"), (None, "draft")]),
])
def test_runner_backends_in_sglangs_order(given, expected):
    args, kwargs = given
    assert runner_backends(*args, **kwargs) == expected


def test_the_fa3_fallback_applied_twice_changes_nothing():
    """The simulator passes the backend /server_info reports (the fallback already applied)."""
    once = runner_backends("fa3", None, None, None, "fp8_e5m2")
    assert runner_backends(once[0][0], None, None, None, "fp8_e5m2") == once
