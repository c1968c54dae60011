"""A speculative server's verify steps are bounded by its tree too, not by its depth alone: one verify
step commits at most ``min(num_steps + 1, num_draft_tokens)`` tokens, since SGLang 0.5.23 verifies the
root and the ``num_draft_tokens - 1`` best candidates alone (``speculative/eagle_utils.py``
``organize_draft_results``). QA: a server saying steps=5 topk=4 draft=3 answered 8 tokens in 2 verify
steps (accept length 4.00, where a step commits at most 3): ``tuner bench`` exit 0, and a study kept it,
bounded by ``num_steps + 1 = 6``. Real HTTP on 127.0.0.1: the SGLang-like server of test_bench_client."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_bench_client import SUITE, FakeSGLang

from tuner.bench.records import RequestRecord
from tuner.cli import cli
from tuner.engine.verify import speculation_problem
from tuner.sglang.rules import SpecConfig

#: a tree shallower in tokens than in depth: 5 steps, but 3 verified nodes (the root and 2 candidates)
TREE = {"version": "0.5.23-fake", "model_path": "fake/model", "sim_speedup": 100.0,
        "speculative_algorithm": "EAGLE3", "speculative_num_steps": 5, "speculative_eagle_topk": 4,
        "speculative_num_draft_tokens": 3}


def bench(tmp_path, verify_every: int):
    suite_file = tmp_path / "tiny.yaml"
    suite_file.write_text(json.dumps(SUITE))
    with FakeSGLang(info=TREE, verify_every=verify_every) as srv:
        return CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file)])


def test_tuner_bench_fails_accept_lengths_the_servers_tree_cannot_give(tmp_path):
    # 4 tokens a verify step (8 tokens in 2 steps, 16 in 4): more than the 3 a step of draft=3 commits
    r = bench(tmp_path, verify_every=4)
    assert r.exit_code == 1, r.output
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, r.stderr
    assert "8 tokens in 2 verify steps: accept length 4.00, outside 1 to num_draft_tokens + 1/spec_verify_ct " \
           "= 3.5 (at most 7 tokens: num_draft_tokens = 3 per verify step" in errors[0], errors[0]


def test_tuner_bench_keeps_accept_lengths_the_tree_can_give(tmp_path):
    r = bench(tmp_path, verify_every=3)  # 3 tokens a verify step: the most draft=3 commits
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("tokens, verify, accept, ok, says", [
    (7, 2, None, True, None),       # the bound exactly: the prefill's token and 2 x 3
    (8, 2, None, False, "num_draft_tokens + 1/spec_verify_ct = 3.5 (at most 7 tokens"),
    (16, None, 4.0, True, None),    # an accept length alone: at most num_draft_tokens + 1 = 4
    (16, None, 4.5, False, "outside 1 to num_draft_tokens + 1 = 4 (num_draft_tokens = 3 per verify step"),
])
def test_the_study_bounds_a_trial_by_its_tree(tokens, verify, accept, ok, says):
    # what tuner.engine.verify's bad_response applies to every answer of a trial
    r = RequestRecord("single", "fib", tokens, ok=True, completion_tokens=tokens, spec_verify_ct=verify,
                      spec_accept_length=accept)
    problem = speculation_problem(r, SpecConfig(5, 4, 3))
    assert (problem is None) == ok, problem
    if says:
        assert says in problem, problem


def test_a_tree_deeper_in_tokens_than_in_steps_keeps_the_depths_bound():
    # steps=3 topk=4 draft=8: the path is at most 3 deep, so num_steps + 1 = 4 bounds it, as before
    r = RequestRecord("single", "fib", 18, ok=True, completion_tokens=18, spec_verify_ct=4)
    assert "outside 1 to num_steps + 1 + 1/spec_verify_ct = 4.25" in speculation_problem(r, SpecConfig(3, 4, 8))
    r.completion_tokens = 17
    assert speculation_problem(r, SpecConfig(3, 4, 8)) is None
