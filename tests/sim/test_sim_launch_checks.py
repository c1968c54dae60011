"""The simulator refuses what SGLang 0.5.23's launch checks refuse, before anything loads, in-process.

SGLang's Engine runs ``ServerArgs.check_server_args`` (``arg_groups/validation_hook.py``) right after
``resolve_once`` (``entrypoints/engine.py`` line 1165). QA (qa194): ``benchmarks/sglang_agreement.py``'s
child, running those checks too, refused these command lines with the ``AssertionError`` below while
the simulator started them; each row is that child's answer (Llama-style model, EAGLE3 3/1/4). The
accepted rows are its answers too: a multiple of the page size, chunked prefill off (-1), a
disaggregated decode node, which SGLang does not check.
"""

import logging

import pytest

from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import load_profile

LOG = logging.getLogger("sim-launch-checks-test")
SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


def _launch(*flags: str, spec=SPEC):
    return resolve_launch(parse_args(["--model-path", "m", *spec, *flags]), LOG, load_profile("dense-27b-tp1"))


@pytest.mark.parametrize("flags, says", [
    (("--page-size", "16", "--chunked-prefill-size", "1000"), "chunked_prefill_size must be divisible by page_size"),
    # attention DP checks the size per DP rank it resolved: 1040 // 4 = 260
    (("--tp-size", "4", "--attn-dp-size", "4", "--page-size", "16", "--chunked-prefill-size", "1040"),
     "chunked_prefill_size must be divisible by page_size"),
    (("--nnodes", "3"), "tp_size must be divisible by number of nodes"),
    (("--tp-size", "2", "--dp-size", "2", "--nnodes", "2"),
     "multi-node data-parallel replicas are not supported; use attention DP (--attn-dp-size) across nodes"),
    (("--pp-size", "2"), "Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding"),
])
def test_sglang_refuses_these_before_loading(flags, says):
    with pytest.raises(AssertionError) as err:
        _launch(*flags)
    assert str(err.value) == says


def test_eagle_with_pipeline_parallelism_outside_a_prefill_node():
    spec = [("EAGLE" if f == "EAGLE3" else f) for f in SPEC]
    with pytest.raises(AssertionError) as err:
        _launch("--pp-size", "2", "--disable-overlap-schedule", spec=spec)
    assert str(err.value) == ("PP + speculative decoding (MTP) is only supported on prefill nodes "
                              "(disaggregation-mode=prefill)")


@pytest.mark.parametrize("flags, chunk", [
    (("--page-size", "16", "--chunked-prefill-size", "1024"), 1024),
    (("--page-size", "16", "--chunked-prefill-size", "-1"), -1),
    (("--page-size", "16", "--chunked-prefill-size", "1000", "--disaggregation-mode", "decode"), 1000),
    (("--tp-size", "4", "--page-size", "16", "--chunked-prefill-size", "1040"), 1040),
])
def test_sglang_takes_these(flags, chunk):
    plan = _launch(*flags)
    assert plan.server_args["chunked_prefill_size"] == chunk and plan.server_args["page_size"] == 16


def test_the_baseline_with_pipeline_parallelism_starts():
    plan = _launch("--pp-size", "2", spec=[])
    assert plan.spec is None and plan.server_args["pp_size"] == 2


_HICACHE = ("The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and cannot "
            "be used at the same time. Please use only one of them.")


@pytest.mark.parametrize("flags", [
    # --seed 7 --fuzz-case 869 (the agreement child: ValueError, the baseline's too)
    ("--enable-hierarchical-cache", "--disable-radix-cache"),
    # --seed 8 --fuzz-case 685: a decode node's radix cache is off (pd_disaggregation_hook.py)
    ("--enable-hierarchical-cache", "--disaggregation-mode", "decode"),
])
def test_the_hierarchical_cache_without_a_radix_cache_is_refused(flags):
    for spec in (SPEC, []):
        with pytest.raises(ValueError) as err:
            _launch(*flags, spec=spec)
        assert str(err.value) == _HICACHE


def test_the_hierarchical_cache_with_a_radix_cache_starts():
    # the agreement child accepted both (Llama-3, sm90, EAGLE3 3/1/4)
    assert _launch("--enable-hierarchical-cache").spec is not None
    assert _launch("--enable-hierarchical-cache", "--disable-radix-cache", "--disaggregation-mode", "decode",
                   "--disaggregation-decode-enable-radix-cache").spec is not None
