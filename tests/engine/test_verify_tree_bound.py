"""tuner.engine.verify bounds a trial's verify steps by its tree as well as its depth: a step of
steps=5 topk=4 draft=3 commits at most 3 tokens (the root and 2 verified candidates), so 8 tokens in 2
verify steps fail the trial as ``bad_response``, where ``num_steps + 1 = 6`` let them pass (QA). The
same rule against a real HTTP server, through ``tuner bench``: tests/bench/test_verify_bound_by_the_tree.py."""

from __future__ import annotations

import pytest
import test_verify
from test_verify import info, rec, result

from tuner.engine.verify import verify_result
from tuner.sglang.rules import SpecConfig

TREE = SpecConfig(5, 4, 3)
config = test_verify.config  # the study fixture: the simulator at 20x, the eagle3 search space


@pytest.mark.parametrize("tokens, verify, ok", [(7, 2, True), (8, 2, False), (16, 5, True), (17, 5, False)])
def test_a_trial_is_bounded_by_the_tokens_its_tree_verifies(config, tokens, verify, ok):
    failure = verify_result(result(info(TREE), [rec(tokens, asked=tokens, verify=verify)]), TREE, config, "EAGLE3")
    assert (failure is None) == ok, failure
    if not ok:
        assert failure[0] == "bad_response", failure
        assert f"{tokens} tokens in {verify} verify steps" in failure[1], failure
        assert "num_draft_tokens = 3 per verify step" in failure[1], failure
