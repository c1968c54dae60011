"""``--cuda-graph-config`` batch sizes SGLang 0.5.23's parser takes and its argument handling refuses
(``arg_groups/memory_hook.py``, ``handle_gpu_memory_settings``: ``max(bs)`` for decode, else
``range(..., max_bs + 1, ...)``), on the baseline's launch too: refused when the study loads, one line
naming the argument and the fix, and by the simulator with SGLang's exception.

QA (qa145): SGLang's own ``prepare_server_args`` + ``resolve_once`` on CPU (``benchmarks/sglang_agreement.py``'s
child), 46 cuda-graph command lines against the simulator; each expectation below is that child's
verdict. ``{"decode": {"max_bs": "8"}}`` (SGLang: ``TypeError: can only concatenate str (not "int") to
str``) loaded in a study and started the simulator.
"""

import logging

import pytest

from tuner.config.server_arg_checks import check_server_args
from tuner.sim.args import parse_args, resolve_launch

LOG = logging.getLogger("cuda-graph-sizes-test")

#: (the JSON, other flags, SGLang's exception class or None when it starts)
CASES = [
    ('{"decode":{"max_bs":"8"}}', [], "TypeError"),
    ('{"decode":{"max_bs":8.0}}', [], "TypeError"),
    ('{"decode":{"max_bs":[8]}}', [], "TypeError"),
    ('{"decode":{"bs":[]}}', [], "ValueError"),
    ('{"decode":{"bs":4}}', [], "TypeError"),
    ('{"decode":{"bs":["1",2]}}', [], "TypeError"),
    ('{"prefill":{"max_bs":"8"}}', [], "TypeError"),
    ('{"prefill":{"max_bs":8.5,"backend":"breakable"}}', [], "TypeError"),
    ('{"decode":{"max_bs":"8","backend":"disabled"}}', [], "TypeError"),
    ('{"decode":{"bs":[]}}', ["--cuda-graph-bs-decode", "1", "2"], "ValueError"),  # the JSON's bs wins
    # SGLang starts these
    ('{"decode":{"max_bs":8}}', [], None),
    ('{"decode":{"max_bs":true}}', [], None),
    ('{"decode":{"max_bs":"8","bs":[1,2]}}', [], None),  # bs given: max_bs is max(bs)
    ('{"decode":{"max_bs":"8"}}', ["--cuda-graph-bs-decode", "1", "2"], None),  # the flag's bs fills in
    ('{"prefill":{"max_bs":"8"}}', ["--cuda-graph-bs-prefill", "4", "8"], None),
    ('{"prefill":{"bs":[]}}', [], None),
    ('{"decode":{"max_bs":null}}', [], None),
]
SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


@pytest.mark.parametrize("config, flags, refused", CASES)
def test_the_simulator_refuses_what_sglang_refuses(config, flags, refused):
    ns = parse_args(["--model-path", "m", *SPEC, "--cuda-graph-config", config, *flags])
    if refused is None:
        assert resolve_launch(ns, LOG).server_args["cuda_graph_config"] is not None
        return
    with pytest.raises(Exception) as err:
        resolve_launch(ns, LOG)
    assert type(err.value).__name__ == refused


def _as_server_args(config: str, flags: list[str]) -> dict:
    args = {"cuda_graph_config": config}
    if flags:
        args[flags[0][2:].replace("-", "_")] = [int(v) for v in flags[1:]]
    return args


@pytest.mark.parametrize("config, flags, refused", CASES)
def test_a_study_refuses_what_sglang_refuses_in_one_line(config, flags, refused):
    args = _as_server_args(config, flags)
    if refused is None:
        assert check_server_args(args, "server.args") == args
        return
    with pytest.raises(ValueError) as err:
        check_server_args(args, "server.args")
    line = str(err.value)
    assert "\n" not in line and line.startswith("cuda_graph_config: SGLang 0.5.23 refuses"), line
    assert f"({refused}: " in line and "give max_bs as an integer" in line, line
