"""Cases nobody wrote that SGLang 0.5.23 refuses in its launch checks (``ServerArgs.check_server_args``,
``arg_groups/validation_hook.py``, which its Engine runs after ``resolve_once`` and before loading:
``entrypoints/engine.py`` line 1165) while the tuner took the study: found by
``benchmarks/sglang_agreement.py --fuzz N --seed S`` once its child ran those checks too. Each case holds
the fuzz line and SGLang's verdict as the agreement child printed it."""

from __future__ import annotations

import pytest
from support.demo_study import demo_study

from tuner.config.server_arg_checks import check_server_args, pipeline_parallel_refusal
from tuner.config.study import load_study

# (fuzz line, server.args, SGLang's verdict at every speculative launch)
PIPELINE_CASES = [
    ("--seed 7 --fuzz-case 17: Qwen3-Next, tp 1, EAGLE3 steps=3 topk=1 draft=1",
     {"mem_fraction_static": 0.7, "pp_size": 2, "speculative_attention_mode": "decode"},
     "AssertionError: Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"),
    ("--seed 7 --fuzz-case 18: Llama MQA, tp 4, EAGLE3 steps=3 topk=2 draft=4",
     {"mem_fraction_static": 0.7, "page_size": 32, "pp_size": 2, "speculative_moe_runner_backend": "triton"},
     "AssertionError: Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"),
    ("EAGLE, tp 2, pp 2 given by its long alias, overlap schedule off (the agreement child, qa194)",
     {"pipeline_parallel_size": 2, "disable_overlap_schedule": True},
     "AssertionError: PP + speculative decoding (MTP) is only supported on prefill nodes "
     "(disaggregation-mode=prefill)"),
]


@pytest.mark.parametrize("line,args,sglang", PIPELINE_CASES, ids=[c[0][:40] for c in PIPELINE_CASES])
def test_pipeline_parallelism_with_speculation_is_refused_as_sglang_does(line, args, sglang):
    assert sglang.startswith("AssertionError")
    with pytest.raises(ValueError) as err:
        check_server_args(args, "server.args")
    text = str(err.value)
    name = "pp_size" if "pp_size" in args else "pipeline_parallel_size"
    assert text.startswith(f"{name}: 2;"), text  # the key as the file wrote it
    assert "validation_hook.py" in text and "remove it from server.args" in text.lower(), text
    assert "\n" not in text, text


def test_one_pipeline_stage_is_what_sglang_runs():
    # pp_size 1 is SGLang's default: no pipeline, nothing refused (the agreement child: accepted)
    assert check_server_args({"pp_size": 1}, "server.args") == {"pp_size": 1}
    assert pipeline_parallel_refusal({"pp_size": 1}) is None and pipeline_parallel_refusal({}) is None


def test_a_study_with_pipeline_parallelism_is_refused_when_it_loads(tmp_path):
    path = demo_study(tmp_path, **{"server.args": {"pp_size": 2}})
    with pytest.raises(Exception) as err:
        load_study(path)
    assert "pp_size: 2;" in str(err.value) and "check_pipeline_parallel_compat" in str(err.value), err.value
    assert not (tmp_path / "demo.db").exists()


# (fuzz line, server.args, SGLang's verdict while handling the arguments, the baseline's too)
RADIX_CASES = [
    ("--seed 7 --fuzz-case 741: Qwen2, tp 4, EAGLE3, all three flags unset",
     {"disable_radix_cache": True, "enable_hierarchical_cache": True, "ep_size": 2,
      "speculative_use_rejection_sampling": True},
     "ValueError: The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and "
     "cannot be used at the same time. Please use only one of them."),
    ("--seed 7 --fuzz-case 869: Qwen3, tp 1, EAGLE steps=8 topk=1 draft=2",
     {"disable_radix_cache": True, "enable_hierarchical_cache": True, "speculative_accept_threshold_acc": 0.5},
     "ValueError: The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and "
     "cannot be used at the same time. Please use only one of them."),
    # a decode node's radix cache is off unless it is turned back on (pd_disaggregation_hook.py)
    ("--seed 8 --fuzz-case 685: Kimi K2, tp 4, EAGLE steps=2 topk=8 draft=5, a decode node",
     {"attention_backend": "flashinfer", "disaggregation_mode": "decode", "enable_hierarchical_cache": True,
      "enable_mixed_chunk": True, "moe_a2a_backend": "deepep", "page_size": 1,
      "speculative_draft_attention_backend": "trtllm_mla"},
     "ValueError: The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and "
     "cannot be used at the same time. Please use only one of them."),
]


@pytest.mark.parametrize("line,args,sglang", RADIX_CASES, ids=[c[0][:40] for c in RADIX_CASES])
def test_the_hierarchical_cache_without_a_radix_cache_is_refused_as_sglang_does(line, args, sglang):
    assert sglang.startswith("ValueError")
    with pytest.raises(ValueError) as err:
        check_server_args(args, "server.args")
    text = str(err.value)
    other = "disable_radix_cache" if args.get("disable_radix_cache") else "disaggregation_mode: decode"
    assert text.startswith(f"enable_hierarchical_cache and {other}: "), text
    assert "kv_cache_hook.py" in text and "remove one of them from server.args" in text and "\n" not in text, text


@pytest.mark.parametrize("args", [
    {"enable_hierarchical_cache": True},  # the agreement child: accepted (Llama-3, sm90, EAGLE3 3/1/4)
    {"enable_hierarchical_cache": True, "disable_radix_cache": False},
    # a decode node that turns its radix cache back on (pd_disaggregation_hook.py): the child accepted it
    {"enable_hierarchical_cache": True, "disable_radix_cache": True, "disaggregation_mode": "decode",
     "disaggregation_decode_enable_radix_cache": True},
    {"enable_hierarchical_cache": True, "disaggregation_mode": "prefill"},
])
def test_what_sglang_takes_with_the_hierarchical_cache(args):
    assert check_server_args(args, "server.args") == args


def test_the_alias_is_named_as_written():
    with pytest.raises(ValueError) as err:
        check_server_args({"enable_hicache": True, "disable_radix_cache": True}, "fixed")
    assert str(err.value).startswith("enable_hicache and disable_radix_cache: "), err.value
