"""SGLang's validity rules and rewrites, table-driven (tuner/rules.py)."""

import pytest

from tuner.sglang.rules import (
    WARN_DRAFT_TOKENS_ADJUSTED,
    WARN_MAX_RUNNING_REQUESTS,
    ServerContext,
    SpecConfig,
    candidate_count,
    effective_config,
    flag_name,
    resolve,
    resolve_max_running_requests,
)

S = SpecConfig


def MLA(**kw):
    """An MLA target (Kimi K2.x, DeepSeek V3) with an MLA EAGLE-3 head unless ``draft_attention``."""
    return ServerContext(**{"target_attention": "mla", "draft_attention": "mla", **kw})


# (requested, context, effective or None, violated rule or None, SGLang exception, fails at launch)
CASES = [
    # all three unset: SGLang auto-chooses (3, 1, 4) for DeepSeek-V3-style models and the default
    (S(), ServerContext(), S(3, 1, 4), None, None, None),
    # the article's first failure: topk without num_steps -> bare AssertionError
    (S(None, 4, None), ServerContext(), None, "all-or-none", "AssertionError", True),
    # the article's second failure: draft tokens without num_steps
    (S(None, None, 3), ServerContext(), None, "all-or-none", "AssertionError", True),
    # the article's third failure: num_steps without topk -> TypeError comparing None to 1
    (S(1, None, 3), ServerContext(), None, "all-or-none", "TypeError", True),
    # the article's running config: topk 1 silently rewrites draft tokens to num_steps + 1
    (S(1, 1, 3), ServerContext(), S(1, 1, 2), None, None, None),
    (S(3, 1, 4), ServerContext(), S(3, 1, 4), None, None, None),
    (S(5, 1, 64), ServerContext(), S(5, 1, 6), None, None, None),
    # topk 1 without draft tokens: rewritten too
    (S(2, 1, None), ServerContext(), S(2, 1, 3), None, None, None),
    # topk > 1 without draft tokens: the tree size is missing
    (S(2, 4, None), ServerContext(), S(2, 4, None), "all-or-none", "TypeError", False),
    # tree limits: draft - 1 <= topk + (steps - 1) * topk^2
    (S(1, 4, 5), ServerContext(), S(1, 4, 5), None, None, None),
    (S(1, 4, 6), ServerContext(), S(1, 4, 6), "tree-too-large", "RuntimeError", False),
    (S(2, 2, 7), ServerContext(), S(2, 2, 7), None, None, None),
    (S(2, 2, 8), ServerContext(), S(2, 2, 8), "tree-too-large", "RuntimeError", False),
    (S(2, 8, 64), ServerContext(), S(2, 8, 64), None, None, None),
    # attention backend and paging
    (S(2, 2, 4), ServerContext(attention_backend="trtllm_mha"), None, "trtllm-topk", "ValueError", True),
    (S(2, 1, 3), ServerContext(attention_backend="trtllm_mha"), S(2, 1, 3), None, None, None),
    (S(2, 2, 4), ServerContext(page_size=16, attention_backend="torch_native"), None, "page-size-topk", "ValueError", True),
    (S(2, 2, 4), ServerContext(page_size=16, attention_backend="flashinfer"), S(2, 2, 4), None, None, None),
    (S(2, 2, 4), ServerContext(page_size=16, attention_backend="triton"), S(2, 2, 4), None, None, None),
    (S(2, 1, 3), ServerContext(page_size=16), S(2, 1, 3), None, None, None),
    (S(2, 2, 4), ServerContext(use_rejection_sampling=True), None, "rejection-sampling-topk", "ValueError", True),
    (S(2, 1, 3), ServerContext(use_rejection_sampling=True), S(2, 1, 3), None, None, None),
    (S(2, 1, 3), ServerContext(use_rejection_sampling=True, accept_thresholds=(0.9, 1.0)), None,
     "rejection-sampling-thresholds", "ValueError", True),
    (S(2, 1, 3), ServerContext(accept_thresholds=(0.9, 1.0)), S(2, 1, 3), None, None, None),
    # MLA trees (flashinfer_mla_backend.py, flashmla_backend.py, draft_utils.py): an MLA draft on a
    # chain-only MLA backend raises after the model load when num_steps > 1 ...
    (S(3, 4, 8), MLA(attention_backend="flashinfer"), S(3, 4, 8), "mla-tree-backend", "ValueError", False),
    # trtllm_mla (SGLang's SM100 choice for DeepSeek-style MLA) and flashmla snap the page size to 64
    # (overrides.py, _mla_backend_page_constraints): a tree is then refused during argument handling
    (S(3, 4, 8), MLA(attention_backend="trtllm_mla"), None, "page-size-topk", "ValueError", True),
    (S(3, 4, 8), MLA(attention_backend="flashmla"), None, "page-size-topk", "ValueError", True),
    (S(3, 4, 8), MLA(attention_backend="trtllm_mla", page_size=32), None, "page-size-topk", "ValueError", True),
    (S(3, 4, 8), MLA(attention_backend="fa3", draft_attention_backend="flashinfer"), S(3, 4, 8),
     "mla-tree-backend", "ValueError", False),
    # ... one step has no multi-step draft backend: SGLang runs it, with no tree mask in the verify
    (S(1, 4, 5), MLA(attention_backend="flashinfer"), S(1, 4, 5), "mla-tree-backend", "", False),
    # a Llama-style EAGLE-3 head (MHA draft) on an MLA target: the verify still has no tree mask
    (S(3, 4, 8), MLA(attention_backend="flashinfer", draft_attention="mha"), S(3, 4, 8), "mla-tree-backend",
     "", False),
    # the draft runner gets the target's backends unless speculative_draft_attention_backend is set
    # (model_runner.py); an MLA-only backend refuses an MHA head as it starts (attention_registry.py),
    # whatever the setting, and an MHA-only one an MLA head
    (S(3, 1, 4), MLA(attention_backend="trtllm_mla", draft_attention="mha"), S(3, 1, 4), "draft-backend-kind",
     "ValueError", False),
    (S(3, 1, 4), MLA(attention_backend="cutedsl_mla", draft_attention="mha"), S(3, 1, 4), "draft-backend-kind",
     "ValueError", False),
    (S(3, 1, 4), MLA(attention_backend="flashmla", draft_attention="mha"), S(3, 1, 4), "draft-backend-kind",
     "AttributeError", False),
    (S(3, 1, 4), MLA(decode_attention_backend="trtllm_mla", attention_backend="fa3", draft_attention="mha"),
     S(3, 1, 4), "draft-backend-kind", "ValueError", False),
    (S(3, 1, 4), MLA(attention_backend="trtllm_mla", draft_attention="mha", draft_attention_backend="flashinfer"),
     S(3, 1, 4), None, None, None),
    (S(3, 1, 4), MLA(attention_backend="fa3", draft_attention_backend="trtllm_mha"), S(3, 1, 4),
     "draft-backend-kind", "ValueError", False),
    (S(3, 1, 4), MLA(attention_backend="trtllm_mla"), S(3, 1, 4), None, None, None),  # an MLA head: fine
    # hpc_ops runs no speculative decoding at all (its runner raises as it starts)
    (S(3, 1, 4), ServerContext(attention_backend="hpc_ops"), S(3, 1, 4), "backend-no-spec", "ValueError", False),
    (S(3, 1, 4), ServerContext(attention_backend="trtllm_mla"), S(3, 1, 4), None, None, None),  # not known
    # chains are fine on every backend; trees on fa3 and triton with page size 1
    (S(3, 1, 4), MLA(attention_backend="flashinfer"), S(3, 1, 4), None, None, None),
    (S(3, 4, 8), MLA(attention_backend="fa3"), S(3, 4, 8), None, None, None),
    (S(3, 4, 8), MLA(attention_backend="triton"), S(3, 4, 8), None, None, None),
    (S(3, 4, 8), MLA(attention_backend="fa3", page_size=16), S(3, 4, 8), "mla-tree-page-size", "", False),
    # a non-MLA model runs trees on flashinfer; an unknown model is not judged by the MLA rules
    (S(3, 4, 8), ServerContext(attention_backend="flashinfer", target_attention="mha",
                               draft_attention="mha"), S(3, 4, 8), None, None, None),
    (S(3, 4, 8), ServerContext(attention_backend="flashinfer"), S(3, 4, 8), None, None, None),
    # each rule at its edge (mutation testing: a bound moved by one passed every case above)
    # a tree of one draft token verifies nothing drafted (draft < 2)
    (S(2, 2, 1), ServerContext(), S(2, 2, 1), "draft-tokens-min", "RuntimeError", False),
    # page size 2 is already paged: a tree there needs flashinfer, fa3 or triton
    (S(2, 2, 4), ServerContext(page_size=2, attention_backend="torch_native"), None, "page-size-topk",
     "ValueError", True),
    # ... and MLA trees on fa3 run with page size 1 only
    (S(3, 4, 8), MLA(attention_backend="fa3", page_size=2), S(3, 4, 8), "mla-tree-page-size", "", False),
    # hpc_ops as the draft runner's own backend refuses speculation too (attention_registry.py,
    # create_hpc_ops_backend: "does not support speculative decoding"), with an MHA head it could serve
    (S(3, 1, 4), ServerContext(attention_backend="flashinfer", draft_attention_backend="hpc_ops",
                               target_attention="mha", draft_attention="mha"), S(3, 1, 4), "backend-no-spec",
     "ValueError", False),
    # no speculative algorithm: SGLang ignores the flags (the autoregressive baseline)
    (S(1, 4, None), ServerContext(speculative_algorithm=None), S(), None, None, None),
]


@pytest.mark.parametrize("requested,ctx,effective,rule,exc,at_launch", CASES)
def test_resolve(requested, ctx, effective, rule, exc, at_launch):
    res = resolve(requested, ctx)
    assert res.effective == effective
    if rule is None:
        assert res.ok and res.violation is None
    else:
        assert not res.ok
        assert res.violation.rule == rule
        assert res.violation.sglang_exception == exc
        assert res.violation.at_launch is at_launch
        assert res.violation.message  # a person gets a fix, not just a rule id


def test_rewrite_is_flagged_with_sglangs_warning():
    res = resolve(S(1, 1, 3))
    assert res.rewritten
    assert res.warnings == (WARN_DRAFT_TOKENS_ADJUSTED,)
    assert not resolve(S(1, 1, 2)).rewritten
    assert resolve(S(1, 1, 2)).warnings == ()


def test_type_error_message_matches_sglang():
    v = resolve(S(1, None, 3)).violation
    assert v.sglang_message == "'>' not supported between instances of 'NoneType' and 'int'"
    assert resolve(S(None, 4, None)).violation.sglang_message == ""  # a bare assert


@pytest.mark.parametrize("steps,topk,expected", [(1, 1, 1), (3, 1, 3), (1, 4, 4), (2, 4, 20), (3, 2, 10), (2, 8, 72)])
def test_candidate_count(steps, topk, expected):
    assert candidate_count(steps, topk) == expected


def test_effective_config_raises_naming_the_rule():
    assert effective_config(S(1, 1, 3)) == S(1, 1, 2)
    with pytest.raises(ValueError, match="tree-too-large"):
        effective_config(S(1, 4, 8))


def test_max_running_requests():
    assert resolve_max_running_requests(None, True) == (48, WARN_MAX_RUNNING_REQUESTS)
    assert resolve_max_running_requests(64, True) == (64, None)
    assert resolve_max_running_requests(None, False) == (None, None)


def test_flag_name_and_server_args():
    assert flag_name("speculative_num_draft_tokens") == "--speculative-num-draft-tokens"
    assert S(3, 1, 4).server_args() == {
        "speculative_num_steps": 3, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4}
    assert S(3, None, None).server_args() == {"speculative_num_steps": 3}


def test_flag_name_is_a_flag_sglangs_parser_registers_for_the_argument():
    """QA: five of SGLang 0.5.23's options are spelled otherwise than their name (``Arg(cli_name=)``:
    fp8_gemm_runner_backend is --fp8-gemm-backend); the launcher wrote --fp8-gemm-runner-backend,
    which SGLang's argparse refuses ("unrecognized arguments"), and so did the export's YAML key."""
    from tuner.sglang.server_args import server_args_table

    assert flag_name("fp8_gemm_runner_backend") == "--fp8-gemm-backend"
    assert flag_name("ep_join_rank_offset") == "--elastic-ep-join-rank-offset"
    assert flag_name("enable_amd_monokernel") == "--enable-amd-monokernel"  # not the old alias
    for option in server_args_table().options:
        assert flag_name(option.dest) in server_args_table().option_named(option.dest).flags, option
    assert flag_name("sim_profile") == "--sim-profile"  # not SGLang's: spelled from its name


def test_an_unrefused_mla_tree_yields_to_the_failure_sglang_hits():
    # steps 1 on flashinfer-MLA: SGLang builds no MLA draft backend (draft_utils.py), so the oversized
    # tree fails first, in SGLang's warmup
    res = resolve(S(1, 2, 8), MLA(attention_backend="flashinfer"))
    assert res.violation.rule == "tree-too-large" and res.violation.stage == "startup"
    # steps 3: the MLA draft backend's ValueError comes before the draft graph capture
    res = resolve(S(3, 2, 64), MLA(attention_backend="flashinfer"))
    assert res.violation.rule == "mla-tree-backend" and res.violation.stage == "startup"


def test_auto_choice_follows_the_architecture():
    # speculative_hook.py, _auto_choose_speculative_params
    assert resolve(S(), ServerContext(target_architecture="LlamaForCausalLM")).effective == S(5, 4, 8)
    assert resolve(S(), ServerContext(target_architecture="DeepseekV3ForCausalLM")).effective == S(3, 1, 4)


def test_server_arguments_that_bring_rules_along():
    """speculative_hook.py: block verification turns rejection sampling on (topk 1 only); the
    accept thresholds read as SGLang's defaults unless given."""
    from tuner.config.space import context_from_args

    block = context_from_args("EAGLE3", {"speculative_use_block_verification": True})
    assert block.use_rejection_sampling and block.accept_thresholds == (1.0, 1.0)
    assert resolve(S(2, 2, 4), block).violation.rule == "rejection-sampling-topk"
    both = context_from_args("EAGLE3", {"speculative_use_rejection_sampling": True,
                                        "speculative_accept_threshold_acc": 0.5})
    assert resolve(S(2, 1, 3), both).violation.rule == "rejection-sampling-thresholds"


def test_split_backends_verify_on_the_prefill_half_unless_the_mode_says_decode():
    """QA: prefill flashinfer + decode fa3 passed as fa3 trees; SGLang's HybridAttnBackend verifies
    on the prefill half by default (hybrid_attn_backend.py), where FlashInfer-MLA has no tree mask."""
    from tuner.config.space import context_from_args

    def ctx(**args):
        return context_from_args("EAGLE3", args, "mla", "mha")

    split = ctx(prefill_attention_backend="flashinfer", decode_attention_backend="fa3")
    assert split.verify_backend == "flashinfer"
    assert resolve(S(3, 4, 8), split).violation.rule == "mla-tree-backend"
    reverse = ctx(prefill_attention_backend="fa3", decode_attention_backend="flashinfer")
    assert reverse.verify_backend == "fa3" and resolve(S(3, 4, 8), reverse).ok
    decode = ctx(prefill_attention_backend="flashinfer", decode_attention_backend="fa3",
                 speculative_attention_mode="decode")
    assert decode.verify_backend == "fa3" and resolve(S(3, 4, 8), decode).ok
    assert ctx(attention_backend="fa3", decode_attention_backend="fa3").verify_backend == "fa3"


def test_deprecated_backend_names_are_read_as_sglang_renames_them():
    """QA: `tokenspeed_mla` passed every check; SGLang 0.5.23 runs it as cutedsl_mla
    (serving_hook.py, _handle_deprecated_args), which refuses trees and an MHA draft head."""
    from tuner.config.space import context_from_args
    from tuner.sglang.rules import resolve_backend_aliases

    args = resolve_backend_aliases({"attention_backend": "tokenspeed_mla", "prefill_attention_backend": "tokenspeed_mla",
                                    "speculative_draft_attention_backend": "compressed"}, speculative=True)
    assert args == {"attention_backend": "cutedsl_mla", "prefill_attention_backend": "trtllm_mla",
                    "speculative_draft_attention_backend": "dsv4", "speculative_attention_mode": "decode",
                    "kv_cache_dtype": "fp8_e4m3"}  # "tokenspeed_mla required FP8 KV"
    assert resolve_backend_aliases({"attention_backend": "tokenspeed_mla"}, speculative=False) == {
        "attention_backend": "cutedsl_mla", "kv_cache_dtype": "fp8_e4m3"}
    aliased = context_from_args("EAGLE3", {"attention_backend": "tokenspeed_mla"}, "mla", "mla")
    plain = context_from_args("EAGLE3", {"attention_backend": "cutedsl_mla"}, "mla", "mla")
    assert aliased.verify_backend == plain.verify_backend == "cutedsl_mla"
    assert not resolve(S(3, 4, 8), aliased).ok
    assert resolve(S(3, 4, 8), aliased).violation.rule == resolve(S(3, 4, 8), plain).violation.rule


def test_page_size_and_backend_as_sglangs_attention_resolution_leaves_them():
    """QA: with no attention backend the page-size rule refused trees quoting `None` (SGLang picks
    its default first: flashinfer for an MHA tree); the snaps read the wrong roles
    (overrides.py, _mla_backend_page_constraints)."""
    from tuner.sglang.rules import ServerContext, resolved_attention_backend, resolved_page_size

    assert resolve(S(3, 4, 8), ServerContext(page_size=16)).ok  # SGLang's default backend decides
    assert resolve(S(3, 4, 8), ServerContext(page_size=16, attention_backend="trtllm_mha")).violation.rule in (
        "page-size-topk", "trtllm-topk")
    split = ServerContext(page_size=16, prefill_attention_backend="fa3", decode_attention_backend="fa3")
    assert resolved_attention_backend(split) == "fa3" and resolve(S(3, 4, 8), split).ok
    assert resolved_page_size(ServerContext(attention_backend="flashinfer", draft_attention_backend="trtllm_mha")) == 64
    assert resolved_page_size(ServerContext(prefill_attention_backend="trtllm_mla")) == 1  # decode or attention only
    assert resolved_page_size(ServerContext(prefill_attention_backend="cutedsl_mla", page_size=32)) == 32
    assert resolved_page_size(ServerContext(decode_attention_backend="flashmla", page_size=32)) == 64


@pytest.mark.parametrize("spec, rule, says", [
    # topk 1 sets draft tokens to num_steps + 1: with 0 steps the steps are the fix, not the draft tokens
    (S(0, 1, 2), "draft-tokens-min", "--speculative-num-steps 0 drafts no token (with topk 1 SGLang sets the "
                                     "draft tokens to num_steps + 1 = 1); use at least 1 step"),
    (S(2, 2, 1), "draft-tokens-min", "--speculative-num-draft-tokens 1 verifies no draft token; use at least 2"),
    # a topk or steps of 0 drafts nothing: "use at most 1 draft tokens" was no fix (QA)
    (S(2, 0, 4), "tree-too-large", "steps=2 topk=0 drafts none: use at least 1 step and a topk of at least 1"),
    (S(0, 2, 4), "tree-too-large", "steps=0 topk=2 drafts none: use at least 1 step and a topk of at least 1"),
    # a negative topk squared counts as candidates: (3, -2, 4) read "valid: runs as written" (QA fuzz)
    (S(3, -2, 4), "tree-too-large", "steps=3 topk=-2 drafts none: use at least 1 step and a topk of at least 1"),
    (S(2, -7, 4), "tree-too-large", "steps=2 topk=-7 drafts none: use at least 1 step and a topk of at least 1"),
    (S(2, 2, 8), "tree-too-large", "steps=2 topk=2 drafts only 6; use at most 7 draft tokens or more steps"),
])
def test_the_fix_a_too_small_setting_is_told_is_one_that_runs(spec, rule, says):
    res = resolve(spec, ServerContext())
    assert res.violation is not None and res.violation.rule == rule and says in res.violation.message, res.violation


def test_the_kv_cache_dtype_is_the_one_sglang_runs_for_the_refusal_to_read():
    """trtllm_mla and cutedsl_mla refuse some KV-cache dtypes at every launch, and a study is refused
    for them at create (tuner.engine.preflight); the deprecated tokenspeed_mla sets fp8_e4m3 first
    (serving_hook.py, _handle_deprecated_args), so a dtype given beside it is no refusal."""
    from tuner.config.space import context_from_args
    from tuner.sglang.attention import kv_dtype_refusal

    ctx = context_from_args("EAGLE3", {"attention_backend": "trtllm_mla", "kv_cache_dtype": "fp8_e5m2"})
    assert "only supports kv-cache-dtype" in kv_dtype_refusal(ctx.attention_backend, ctx.kv_cache_dtype)
    ctx = context_from_args("EAGLE3", {"attention_backend": "tokenspeed_mla", "kv_cache_dtype": "fp8_e5m2"})
    assert (ctx.attention_backend, ctx.kv_cache_dtype) == ("cutedsl_mla", "fp8_e4m3")
    assert kv_dtype_refusal(ctx.attention_backend, ctx.kv_cache_dtype) is None
    assert context_from_args("EAGLE3", {}).kv_cache_dtype is None  # not given: SGLang's auto, no refusal
