"""Settings SGLang cannot tell apart in what it verifies (tuner/sglang/trees.py), checked against two
independent implementations of organize_draft_results' tree: the simulator's acceptance model and the
benchmark's landscape families."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from tuner.config.space import SearchSpace
from tuner.sglang.rules import SpecConfig
from tuner.sglang.trees import cheapest_per_tree, tree_key
from tuner.sim.acceptance import mean_accept_length
from tuner.sim.model import PerfModel
from tuner.sim.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
SPACE = SearchSpace.load(ROOT / "search_spaces" / "eagle3.yaml")


def test_keys_of_the_issue_examples():
    # (s, k, 2) verifies the draft's single best token whatever s and k
    assert {tree_key(SpecConfig(s, k, 2)) for s in (1, 3, 8) for k in (1, 2, 8)} == {(1, 1, 2)}
    # with 4 verified nodes: depth and width above 4 change nothing
    assert tree_key(SpecConfig(4, 8, 5)) == tree_key(SpecConfig(4, 4, 5)) == (4, 4, 5)
    assert tree_key(SpecConfig(8, 8, 5)) == (4, 4, 5)
    assert tree_key(SpecConfig(4, 2, 5)) != tree_key(SpecConfig(4, 4, 5))  # a narrower beam may differ
    assert tree_key(SpecConfig(5, 8, 64)) == (5, 8, 64)


def test_cheapest_per_tree_keeps_the_least_drafting_setting():
    cheap = cheapest_per_tree(SPACE.effective_configs())
    assert cheap[(1, 1, 2)] == SpecConfig(1, 1, 2)
    assert cheap[(4, 4, 5)] == SpecConfig(4, 4, 5)
    assert len(cheap) == 851 and len(SPACE.effective_configs()) == 949


@pytest.mark.parametrize("profile", ["k2.6-tp8-pcie", "dense-27b-tp1"])
def test_one_key_one_acceptance_and_the_cheapest_is_fastest_in_the_simulator(profile):
    model = PerfModel(load_profile(profile))
    cheap = cheapest_per_tree(SPACE.effective_configs())
    for spec in SPACE.effective_configs():
        best = cheap[tree_key(spec)]
        for pred in (0.25, 0.95):
            assert mean_accept_length(model.profile.acceptance, spec, pred) == pytest.approx(
                mean_accept_length(model.profile.acceptance, best, pred), abs=1e-12), spec
        for batch in (1, 32):
            assert model.decode_step_time_s(batch, best) <= model.decode_step_time_s(batch, spec) + 1e-15


def test_one_key_one_acceptance_in_the_benchmark_families():
    spec = importlib.util.spec_from_file_location("families", ROOT / "benchmarks" / "searchbench" / "families.py")
    families = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("families", families)
    spec.loader.exec_module(families)
    import random

    for family in "ABC":
        classes = families.FAMILIES[family][0](random.Random(3))
        for s in SPACE.effective_configs():
            if s.num_draft_tokens > 12:
                continue  # the small trees hold every kind of key; large ones are slow to enumerate
            best = SpecConfig(*tree_key(s))  # the smallest depth and width that verify the same
            for _, acc in classes:
                a = families.accept_length(families.verified_nodes(
                    s.num_steps, s.eagle_topk, s.num_draft_tokens, acc.q), acc.p)
                b = families.accept_length(families.verified_nodes(
                    best.num_steps, best.eagle_topk, best.num_draft_tokens, acc.q), acc.p)
                assert a == pytest.approx(b, abs=1e-12), (family, s, best)
