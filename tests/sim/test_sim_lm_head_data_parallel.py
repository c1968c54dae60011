"""The LM-head data-parallel flags as SGLang 0.5.23's argument handling resolves and refuses them
(``arg_groups/overrides.py``: ``_data_parallelism_defaults``, ``_tp_lm_head_all_to_all_default``,
``_dp_lm_head_validation``, run by ``parallel_hook.py``'s ``handle_data_parallelism`` before the
speculative hook), in the simulator, in-process.

QA (qa145): 250 generated launches of an MLA (DeepSeek-V3-shaped) model through SGLang's own
``prepare_server_args`` + ``resolve_once`` on CPU against ``tuner.sim.args.resolve_launch``:
``--dp-size 2 --enable-dp-lm-head`` (DP replicas, no attention DP) started the simulator, where SGLang
raises "AssertionError: --enable-dp-lm-head requires attention DP (--attn-dp-size)." on every launch,
the baseline's too; with one DP rank SGLang reports the flag off, the simulator reported it on. Each
row below is that child's answer for the command line.
"""

import logging

import pytest

from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import load_profile

LOG = logging.getLogger("sim-lm-head-test")
SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


def _launch(*flags: str):
    return resolve_launch(parse_args(["--model-path", "m", *SPEC, *flags]), LOG, load_profile("dense-27b-tp1"))


@pytest.mark.parametrize("flags, says", [
    (("--tp-size", "4", "--dp-size", "2", "--enable-dp-lm-head"),
     "--enable-dp-lm-head requires attention DP (--attn-dp-size)."),
    (("--tp-size", "4", "--enable-tp-lm-head-all-to-all"),
     "--enable-tp-lm-head-all-to-all requires attention DP (--attn-dp-size)."),
    (("--tp-size", "4", "--attn-dp-size", "2", "--enable-tp-lm-head-all-to-all"),
     "--enable-tp-lm-head-all-to-all currently requires tp_size == attn_dp_size, got tp_size=4, attn_dp_size=2."),
    (("--tp-size", "4", "--attn-dp-size", "4", "--enable-tp-lm-head-all-to-all", "--enable-dp-lm-head"),
     "--enable-tp-lm-head-all-to-all uses a TP-sharded LM head and is incompatible with --enable-dp-lm-head."),
])
def test_sglang_refuses_these_with_its_assertion(flags, says):
    with pytest.raises(AssertionError) as err:
        _launch(*flags)
    assert str(err.value) == says


@pytest.mark.parametrize("flags, dp_lm_head, all_to_all", [
    (("--tp-size", "4", "--enable-dp-lm-head"), False, False),  # one DP rank: SGLang turns it off
    (("--tp-size", "4", "--enable-dp-attention", "--enable-dp-lm-head"), False, False),  # --dp-size 1: one rank
    (("--tp-size", "4", "--attn-dp-size", "2", "--enable-dp-lm-head"), True, False),
    (("--tp-size", "4", "--enable-dp-attention", "--dp-size", "4", "--enable-dp-lm-head"), True, False),
    (("--tp-size", "4", "--attn-dp-size", "4", "--enable-tp-lm-head-all-to-all"), False, True),
    (("--tp-size", "4", "--attn-dp-size", "4", "--no-enable-tp-lm-head-all-to-all", "--enable-dp-lm-head"),
     True, False),
])
def test_what_sglang_runs_is_reported(flags, dp_lm_head, all_to_all):
    args = _launch(*flags).server_args
    assert (args["enable_dp_lm_head"], args["enable_tp_lm_head_all_to_all"]) == (dp_lm_head, all_to_all)
