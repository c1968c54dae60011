"""Target attention backends EAGLE's draft cannot be built on: SGLang 0.5.23's ``DraftBackendFactory``
(``speculative/draft_utils.py``) builds the draft's multi-step decode (num_steps > 1) and its draft extend
from two maps of backends (flashinfer, fa3, triton, trtllm_*, flashmla, cutedsl_mla, fa4, dsa, ...); any
other raises as the draft worker starts, after the model load, while the baseline runs.

QA (qa141): ``attention_backend: torch_native`` with EAGLE3 was "valid: runs as written" and the
simulator started it. Each case holds SGLang's verdict as data: its own ``DraftBackendFactory`` run on CPU
after ``prepare_server_args`` + ``resolve_once`` + ``runtime_context.publish`` of a Llama config.json and
a Llama-style EAGLE-3 head (the agreement child's stubs), each ``create_*`` called with a stand-in runner:
the ValueError, or None where the name check passed (the backend is then built).
"""

import logging

import pytest
import yaml

from tuner.sglang.rules import STAGE_STARTUP, ServerContext, SpecConfig, resolve
from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import PROFILES_DIR, Profile

DECODE = "EAGLE is not supported in decode attention backend torch_native"
EXTEND = "EAGLE is not supported in attention backend torch_native"

# (server args, steps, SGLang 0.5.23's first ValueError as the draft starts, None: none)
CASES = [
    ({"attention_backend": "torch_native"}, 3, DECODE),  # create_decode_backend comes first
    ({"attention_backend": "torch_native"}, 1, EXTEND),  # no multi-step decode for one step
    ({"prefill_attention_backend": "fa3", "decode_attention_backend": "torch_native"}, 1, None),
    ({"prefill_attention_backend": "fa3", "decode_attention_backend": "torch_native"}, 3, DECODE),
    ({"attention_backend": "torch_native", "speculative_draft_attention_backend": "triton"}, 3, None),
    ({"attention_backend": "flashinfer"}, 3, None),
]


def _ctx(args: dict) -> ServerContext:
    return ServerContext(attention_backend=args.get("attention_backend"),
                         prefill_attention_backend=args.get("prefill_attention_backend"),
                         decode_attention_backend=args.get("decode_attention_backend"),
                         draft_attention_backend=args.get("speculative_draft_attention_backend"),
                         target_attention="mha", draft_attention="mha")


@pytest.mark.parametrize("args, steps, sglang", CASES)
def test_the_rules_fail_the_draft_as_sglang(args, steps, sglang):
    res = resolve(SpecConfig(steps, 1, steps + 1), _ctx(args))
    v = res.violation
    if sglang is None:
        assert v is None, v
    else:
        assert (v.rule, v.stage, v.sglang_exception, v.sglang_message) == \
            ("backend-no-spec", STAGE_STARTUP, "ValueError", sglang)
        assert "torch_native" in v.message and "speculative_draft_attention_backend" in v.message


def test_the_simulator_fails_after_the_load_and_runs_the_baseline():
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    profile, log = Profile(**data), logging.getLogger("eagle-draft-test")
    spec = parse_args(["--model-path", "m", "--attention-backend", "torch_native", "--speculative-algorithm", "EAGLE3",
                       "--speculative-draft-model-path", "d", "--speculative-num-steps", "3",
                       "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"])
    v = resolve_launch(spec, log, profile).startup_violation
    assert v is not None and (v.rule, v.sglang_message) == ("backend-no-spec", DECODE)
    base = resolve_launch(parse_args(["--model-path", "m", "--attention-backend", "torch_native"]), log, profile)
    assert base.startup_violation is None
