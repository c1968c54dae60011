"""``--speculative-draft-attention-backend`` outside EAGLE's draft maps: SGLang 0.5.23 gives the flag no
choices (``arg_groups/fields/spec.py``) and EAGLE's draft worker runs it as given (``eagle_worker_v2.py``
builds its ``TpModelWorker`` without ``draft_attention_backend``; ``model_runner.py``,
``resolve_draft_attention_backend``), so ``DraftBackendFactory._create_backend`` (``speculative/draft_utils.py``)
looks the flag up in its maps and raises as the draft worker starts, after the model load, for every
speculative launch; the baseline runs.

QA (qa144): ``server.args: {attention_backend: flashinfer, speculative_draft_attention_backend:
torch_native}`` was created ("the study sets it") and the simulator started it, the rule reading any
draft flag as a backend of the maps.
"""

import logging

import pytest
import yaml

from tuner.sglang.rules import STAGE_STARTUP, ServerContext, SpecConfig, resolve
from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import PROFILES_DIR, Profile

# (draft flag, steps, SGLang 0.5.23's ValueError as the draft starts; None: the factory builds it).
# With num_steps > 1 create_decode_backend comes first; with one step only the draft extend is built.
CASES = [
    ("torch_native", 3, "EAGLE is not supported in decode attention backend torch_native"),
    ("torch_native", 1, "EAGLE is not supported in attention backend torch_native"),
    ("flex_attention", 2, "EAGLE is not supported in decode attention backend flex_attention"),
    ("triton", 3, None),
    ("fa3", 1, None),
]


@pytest.mark.parametrize("draft, steps, sglang", CASES)
def test_a_draft_flag_outside_the_maps_fails_the_draft_as_sglang(draft, steps, sglang):
    ctx = ServerContext(attention_backend="flashinfer", draft_attention_backend=draft,
                        target_attention="mha", draft_attention="mha")
    v = resolve(SpecConfig(steps, 1, steps + 1), ctx).violation
    if sglang is None:
        assert v is None, v
        return
    assert (v.rule, v.stage, v.sglang_exception, v.sglang_message) == \
        ("backend-no-spec", STAGE_STARTUP, "ValueError", sglang)
    assert f"speculative_draft_attention_backend {draft}" in v.message and "leave it unset" in v.message


def test_the_simulator_fails_it_after_the_load_and_runs_the_baseline():
    profile = Profile(**yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text()))
    log = logging.getLogger("eagle-draft-flag-test")
    flags = ["--model-path", "m", "--attention-backend", "flashinfer",
             "--speculative-draft-attention-backend", "torch_native"]
    spec = parse_args(flags + ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
                               "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                               "--speculative-num-draft-tokens", "4"])
    v = resolve_launch(spec, log, profile).startup_violation
    assert v is not None and (v.rule, v.sglang_message) == \
        ("backend-no-spec", "EAGLE is not supported in decode attention backend torch_native")
    assert resolve_launch(parse_args(flags), log, profile).startup_violation is None
