"""Cases nobody wrote where the tuner's rules (``tuner.sglang.rules.resolve``) and SGLang 0.5.23
disagreed during argument handling: found by ``benchmarks/sglang_agreement.py --fuzz N --seed S``
(SGLang's own argument handling on CPU). Each case holds SGLang's verdict as data (checked with the
agreement child), the source file and function that decide it, and the fuzz line that found it."""

import pytest

from tuner.sglang.rules import ServerContext, SpecConfig, resolve

S = SpecConfig


def _launch(res):
    """SGLang's verdict during argument handling, as the fuzz prints it: the exception class, or the
    resolved draft-token count."""
    v = res.violation
    return v.sglang_exception if v is not None and v.at_launch else res.effective.num_draft_tokens


# (fuzz line, requested, context, SGLang's verdict: its exception during argument handling or the
#  resolved speculative_num_draft_tokens, the SGLang 0.5.23 source that decides it)
RULE_CASES = [
    ("--seed 1 --fuzz-case 11: Kimi K2, flex_attention, steps=2 topk=4 draft=2",
     S(2, 4, 2), ServerContext(attention_backend="flex_attention"), "AssertionError",
     "arg_groups/attention_hook.py, handle_attention_backend_compatibility: assert speculative_algorithm "
     "is None ('Speculative decoding is currently not supported with Flex Attention backend')"),
    ("--seed 1 --fuzz-case 65: GLM-4.5, flex_attention, steps=5 topk=1 draft=2",
     S(5, 1, 2), ServerContext(attention_backend="flex_attention", page_size=32), "AssertionError",
     "attention_hook.py, before the speculative hook's page-size check"),
    ("prefill and decode flex_attention: attention_backend becomes flex_attention",
     S(3, 1, 4), ServerContext(prefill_attention_backend="flex_attention",
                               decode_attention_backend="flex_attention"), "AssertionError",
     "overrides.py, _attention_backend_default, then attention_hook.py"),
    ("--seed 1 --fuzz-case 89: flex before rejection sampling",
     S(0, 2, 2), ServerContext(attention_backend="flex_attention", use_rejection_sampling=True),
     "AssertionError",
     "attention_hook.py runs before speculative_hook.py"),
    ("--seed 1 --fuzz-case 140: steps=2 topk unset, rejection sampling",
     S(2, None, 6), ServerContext(use_rejection_sampling=True), "ValueError",
     "arg_groups/speculative_hook.py, _handle_eagle_family: `speculative_eagle_topk != 1` (None is) raises "
     "'--speculative-use-rejection-sampling requires --speculative-eagle-topk=1.' before `topk > 1`"),
    ("--seed 1 --fuzz-case 298: steps=1 topk unset, rejection sampling, torch_native, page 16",
     S(1, None, 8),
     ServerContext(attention_backend="torch_native", page_size=16, use_rejection_sampling=True),
     "ValueError", "speculative_hook.py, _handle_eagle_family"),
    ("steps=2 topk unset, rejection sampling on trtllm_mha: its `topk > 1` comes first",
     S(2, None, 3), ServerContext(attention_backend="trtllm_mha", use_rejection_sampling=True), "TypeError",
     "speculative_hook.py, _handle_eagle_family: the trtllm_mha check compares None > 1"),
    ("--seed 2 --fuzz-case 1368: LFM2, prefill and decode triton (attention_backend unset)",
     S(1, 2, 6), ServerContext(prefill_attention_backend="triton", decode_attention_backend="triton",
                               target_architecture="Lfm2ForCausalLM"), 6,
     "arg_groups/model_hook.py reads attention_backend (None: not refused) before attention_hook.py's "
     "_attention_backend_default turns equal prefill and decode backends into it"),
]


@pytest.mark.parametrize("line,spec,ctx,sglang,source", RULE_CASES, ids=[c[0][:60] for c in RULE_CASES])
def test_rules_decide_as_sglang(line, spec, ctx, sglang, source):
    assert _launch(resolve(spec, ctx)) == sglang, f"{line}: SGLang 0.5.23 says {sglang!r} ({source})"
