"""The search space: enumeration of valid effective configs and Optuna distributions."""

from pathlib import Path

import optuna
import pytest

from tuner.config.space import SearchSpace
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]
EAGLE3 = ROOT / "search_spaces" / "eagle3.yaml"


def write(tmp_path, text, name="space.yaml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_shipped_space_has_949_effective_configs():
    configs = SearchSpace.load(EAGLE3).effective_configs()
    assert len(configs) == 949
    assert len(set(configs)) == 949
    # topk 1 collapses to one config per step count: draft = steps + 1
    assert [c for c in configs if c.eagle_topk == 1] == [SpecConfig(s, 1, s + 1) for s in range(1, 9)]
    # every config respects the tree limit
    assert all(c.num_draft_tokens - 1 <= c.eagle_topk + (c.num_steps - 1) * c.eagle_topk ** 2 for c in configs)


def brute_force_count(steps, topks, drafts):
    seen = set()
    for s in steps:
        for k in topks:
            for d in drafts:
                if k == 1:
                    d = s + 1
                if d - 1 <= k + (s - 1) * k * k:
                    seen.add((s, k, d))
    return len(seen)


@pytest.mark.parametrize("steps,topks,drafts", [
    ((1, 3), [1, 2], (2, 8)),
    ((2, 5), [1, 4, 8], (2, 32)),
    ((1, 1), [4], (2, 16)),
])
def test_enumeration_matches_brute_force(tmp_path, steps, topks, drafts):
    p = write(tmp_path, f"""
algorithm: EAGLE3
params:
  speculative_num_steps: {{low: {steps[0]}, high: {steps[1]}}}
  speculative_eagle_topk: {{choices: {topks}}}
  speculative_num_draft_tokens: {{low: {drafts[0]}, high: {drafts[1]}}}
""")
    got = SearchSpace.load(p).effective_configs()
    expected = brute_force_count(range(steps[0], steps[1] + 1), topks, range(drafts[0], drafts[1] + 1))
    assert len(got) == expected


def test_fixed_args_feed_the_rules(tmp_path):
    p = write(tmp_path, """
params:
  speculative_num_steps: {low: 1, high: 3}
  speculative_eagle_topk: {choices: [1, 2]}
  speculative_num_draft_tokens: {low: 2, high: 8}
fixed: {attention_backend: trtllm_mha}
""")
    configs = SearchSpace.load(p).effective_configs()
    assert configs and all(c.eagle_topk == 1 for c in configs)


def test_distributions():
    d = SearchSpace.load(EAGLE3).distributions()
    assert d["speculative_num_steps"] == optuna.distributions.IntDistribution(1, 8)
    assert d["speculative_eagle_topk"] == optuna.distributions.CategoricalDistribution([1, 2, 4, 8])
    assert d["speculative_num_draft_tokens"] == optuna.distributions.IntDistribution(2, 64)


def test_contains():
    sp = SearchSpace.load(EAGLE3)
    assert sp.contains(SpecConfig(1, 1, 3))
    assert not sp.contains(SpecConfig(9, 1, 3))
    assert not sp.contains(SpecConfig(1, 3, 3))
