"""The draft's multi-step decode backend with prefill and decode backends apart: SGLang 0.5.23 builds it
on ``--speculative-draft-attention-backend``, else on the decode half, whatever
``--speculative-attention-mode`` says (``speculative/draft_utils.py`` lines 55-60,
``DraftBackendFactory._create_backend`` called by ``create_decode_backend`` with
"decode_attention_backend"; EAGLE's draft runner names no backend of its own,
``speculative/eagle_worker_v2.py`` line 223, so ``draft_attn_backend`` is the flag or None).

QA (qa141): an MLA target with an MLA draft (an ``Eagle3DeepseekV2ForCausalLM`` head, or NEXTN with the
model itself), prefill fa3 + decode flashinfer, steps 3 topk 2, was "valid: runs as written" (the rules
took the verify half, fa3, for the draft); SGLang builds ``FlashInferMLAMultiStepDraftBackend`` there,
which raises "Currently Flashinfer MLA only supports topk=1 for speculative decoding" after the model
load (``layers/attention/flashinfer_mla_backend.py``), and the simulator started it.
"""

import logging

import pytest
import yaml

from tuner.sglang.rules import STAGE_STARTUP, ServerContext, SpecConfig, resolve
from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import PROFILES_DIR, Profile

FLASHINFER_MLA = "Currently Flashinfer MLA only supports topk=1 for speculative decoding"
TREE = SpecConfig(3, 2, 4)

# (prefill, decode, --speculative-attention-mode, --speculative-draft-attention-backend,
#  the draft decode backend SGLang builds, its error after the load: None when it builds it)
CASES = [
    ("fa3", "flashinfer", "prefill", None, "flashinfer", FLASHINFER_MLA),
    ("fa3", "flashinfer", "decode", None, "flashinfer", FLASHINFER_MLA),
    ("triton", "flashinfer", "decode", None, "flashinfer", FLASHINFER_MLA),
    ("fa3", "flashinfer", "prefill", "fa3", "fa3", None),  # the draft's own flag wins
    ("flashinfer", "fa3", "decode", None, "fa3", None),
    # the draft builds on fa3; the verify, on the FlashInfer-MLA prefill half, is SGLang's unsupported
    ("flashinfer", "fa3", "prefill", None, "fa3", None),
]


@pytest.mark.parametrize("prefill, decode, mode, draft_flag, builds, error", CASES)
def test_the_mla_draft_decodes_on_the_decode_half(prefill, decode, mode, draft_flag, builds, error):
    ctx = ServerContext(prefill_attention_backend=prefill, decode_attention_backend=decode,
                        speculative_attention_mode=mode, draft_attention_backend=draft_flag,
                        target_attention="mla", draft_attention="mla")
    assert ctx.draft_backend == builds
    v = resolve(TREE, ctx).violation
    if error is None:
        assert v is None or v.rule != "mla-tree-backend" or v.stage != STAGE_STARTUP, v
    else:
        assert (v.rule, v.stage, v.sglang_exception, v.sglang_message) == \
            ("mla-tree-backend", STAGE_STARTUP, "ValueError", error)
        assert f"attention backend {builds} drafts MLA chains only" in v.message


def test_the_simulator_fails_after_the_load_as_sglang():
    data = yaml.safe_load((PROFILES_DIR / "k2.6-tp8-nvlink.yaml").read_text())
    data["draft"].update(architecture="Eagle3DeepseekV2ForCausalLM", attention="mla")
    ns = parse_args(["--model-path", "m", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
                     "--speculative-num-steps", "3", "--speculative-eagle-topk", "2",
                     "--speculative-num-draft-tokens", "4", "--prefill-attention-backend", "fa3",
                     "--decode-attention-backend", "flashinfer"])
    plan = resolve_launch(ns, logging.getLogger("mla-draft-test"), Profile(**data))
    v = plan.startup_violation
    assert v is not None and (v.rule, v.sglang_message) == ("mla-tree-backend", FLASHINFER_MLA)
