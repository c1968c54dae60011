"""An adaptive SGLang server's flags are the steps it starts at, not a bound on its verify steps.

SGLang 0.5.23 under ``--speculative-adaptive`` reports ``speculative_adaptive: true`` and the
``speculative_num_steps`` it starts at in ``/server_info`` (``srt/arg_groups/speculative_hook.py``
``_init_adaptive_speculative_params``: one of the policy's ``candidate_steps``, draft tokens steps + 1),
then runs every threshold's candidate steps by batch size (``srt/speculative/adaptive_spec_params.py``;
``DEFAULT_ADAPTIVE_CONFIG`` goes up to 7). README ("The adaptive policy") tells users to measure the
exported policy with ``tuner bench --url``. QA: a server saying adaptive at steps 1, answering 4 tokens
a verify step (its policy's steps 3 at batch size 1), was refused as answers that "cannot be true",
exit 1. Real HTTP on 127.0.0.1: the SGLang-like server of test_bench_client, saying what SGLang says
(no simulator marks: wall time)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from test_bench_client import SUITE, FakeSGLang

from tuner.bench.records import RequestRecord
from tuner.bench.result import SuiteResult, says_adaptive
from tuner.cli import cli
from tuner.cli.bench_baseline import untrue_answers
from tuner.sglang.rules import SpecConfig

#: what SGLang 0.5.23's /server_info says of an adaptive EAGLE3 server started at steps 1 (resolved_dict:
#: top-level and, with the scheduler's overrides, each internal state)
FLAGS = {"speculative_algorithm": "EAGLE3", "speculative_num_steps": 1, "speculative_eagle_topk": 1,
         "speculative_num_draft_tokens": 2, "speculative_adaptive": True,
         "speculative_adaptive_config": "policy.json"}


def info(adaptive: bool) -> dict:
    flags = {**FLAGS, "speculative_adaptive": adaptive}
    return {"version": "0.5.23", "model_path": "fake/model", "served_model_name": "fake/model", **flags,
            "internal_states": [{**flags, "avg_spec_accept_length": 4.0}]}


def bench(tmp_path, adaptive: bool):
    suite_file = tmp_path / "tiny.yaml"
    suite_file.write_text(json.dumps({**SUITE, "timeout_s": 30}))  # wall seconds: no sim_speedup said
    # 4 tokens a verify step (8 tokens in 2 steps, 16 in 4): steps 3, more than steps 1 can commit
    with FakeSGLang(info=info(adaptive), verify_every=4) as srv:
        return CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file)])


def test_tuner_bench_measures_an_adaptive_server_beyond_its_starting_steps(tmp_path):
    r = bench(tmp_path, adaptive=True)
    assert r.exit_code == 0, r.output
    assert "cannot be true" not in r.output, r.output
    assert "speculative, adaptive: SGLang changes the steps by batch size, from steps=1 topk=1 draft=2" \
        in r.stdout, r.stdout
    assert "4.00" in r.stdout, r.stdout  # the accept length measured


def test_a_static_server_is_still_bounded_by_its_steps(tmp_path):
    r = bench(tmp_path, adaptive=False)
    assert r.exit_code == 1, r.output
    assert "8 tokens in 2 verify steps: accept length 4.00, outside 1 to num_steps + 1 + 1/spec_verify_ct" \
        in r.stderr, r.stderr


def test_an_adaptive_servers_flags_bound_no_answer_a_static_servers_do():
    # the flags of an adaptive server bound nothing (the client's own bounds apply: verify steps at
    # most the tokens, accept length 1 to them); a static server's do
    res = SuiteResult(suite=SUITE, base_url="http://x", server_info=info(True), resolved_spec=SpecConfig(1, 1, 2))
    res.records = [RequestRecord("single", "fib", 8, ok=True, completion_tokens=8, spec_verify_ct=2,
                                 finish_reason="length")]
    assert untrue_answers(res, ignore_eos=True) == []
    res.server_info = info(False)
    assert len(untrue_answers(res, ignore_eos=True)) == 1


def test_adaptive_is_read_where_the_flags_are():
    assert says_adaptive(info(True)) and not says_adaptive(info(False))
    # the scheduler's view first (internal_states), as the flags: SGLang resolves it false where
    # adaptive speculation cannot run (_maybe_disable_adaptive)
    assert not says_adaptive({**info(True), "internal_states": [{"speculative_adaptive": False}]})
    assert says_adaptive({"speculative_adaptive": True}) and not says_adaptive({}) and not says_adaptive(None)
    assert not says_adaptive({"speculative_adaptive": "yes"})  # a JSON true only
