"""GP-Hedge, the default sampler's ``hedge`` option (tuner/engine/structured.py, lookahead.py): off by
default and then the default's proposals exactly; on, seeded (the same seed and trials, the same
proposals), never a launch of a tree already measured, its nominees stored on the trials, and the
rule drawn by the model's belief at each rule's earlier nominees. Real studies on
``server.backend: model`` (in-memory storage, no process) and the sampler on hand-made readings."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import optuna
import pytest
from support.landscapes import table_from_profile, write_table

from tuner.config.sampler import AutoOptions
from tuner.config.space import SearchSpace
from tuner.config.study import SamplerSettings, study_from_dict
from tuner.config.suite import load_suite
from tuner.engine.backends import make_backend
from tuner.engine.lookahead import hedge_odds
from tuner.engine.records import launched as is_launch
from tuner.engine.records import load_records
from tuner.engine.runner import run_study
from tuner.engine.structured import HEDGE_ATTR, HEDGE_RULES, Readings, StructuredSampler, read_trials
from tuner.engine.study import create_study, open_study
from tuner.engine.trial import REMEASURE_ATTR
from tuner.sglang.rules import SpecConfig
from tuner.sglang.trees import tree_key

ROOT = Path(__file__).resolve().parents[2]
SPACE_FILE = ROOT / "search_spaces" / "eagle3.yaml"
SPACE = SearchSpace.load(SPACE_FILE)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return write_table(tmp_path_factory.mktemp("t") / "nvlink.json", table_from_profile("k2.6-tp8-nvlink"))


def run(table: Path, seed: int, options: dict | None = None, budget: int = 12):
    data = {"name": "s", "search_space": str(SPACE_FILE), "bench": {"suite": "quick"},
            "server": {"backend": "model", "model_path": "m", "draft_model_path": "d",
                       "model": {"landscape": str(table), "noise": 0.04, "seed": seed}},
            "sampler": {"seed": seed, **({"options": options} if options is not None else {})},
            "budget": {"n_trials": budget}}
    config = study_from_dict(data)
    storage = optuna.storages.InMemoryStorage()
    create_study(config, storage)
    run_study(config, storage, make_backend(config, SPACE, load_suite("quick")))
    return open_study("s", storage)


def trace(study) -> list[tuple]:
    return [(t.params.get("speculative_num_steps"), t.params.get("speculative_eagle_topk"),
             t.params.get("speculative_num_draft_tokens"), bool(t.system_attrs.get(REMEASURE_ATTR)),
             t.system_attrs.get("tuner:proposal"), t.system_attrs.get(HEDGE_ATTR)) for t in study.trials]


def test_hedge_is_an_option_of_auto_checked_when_the_file_loads():
    assert AutoOptions.model_validate({"hedge": 10}).hedge == 10
    for bad in (-1, 1e6, "ten"):
        with pytest.raises(ValueError, match="hedge"):
            SamplerSettings(name="auto", options={"hedge": bad})
    with pytest.raises(TypeError, match="hedge"):
        StructuredSampler(SPACE, seed=0, hedge=-1)


def test_off_it_is_the_default_and_on_it_is_seeded_and_launches_no_tree_twice(table):
    default = trace(run(table, seed=3))
    assert trace(run(table, seed=3, options={"hedge": 0})) == default  # off: the default's proposals exactly
    assert not any(t[5] for t in default)  # and nothing of the hedge stored

    study = run(table, seed=3, options={"hedge": 10}, budget=16)
    hedged = trace(study)
    assert trace(run(table, seed=3, options={"hedge": 10}, budget=16)) == hedged  # same seed, same proposals
    assert hedged[:12] != default  # the rules' draws change the search
    stored = [t[5] for t in hedged if t[5] is not None]
    assert len(stored) >= 8 and all(len(n) == len(HEDGE_RULES) for n in stored)
    assert any("(hedge: " in (t[4] or "") for t in hedged)
    # nominees are read back from the trials (a later proposal's gains)
    assert len(read_trials(study.trials, SPACE, current=len(study.trials)).nominees) == len(stored)

    launched = [r for r in load_records(study) if is_launch(r.status, r.attrs)]
    assert len(launched) == 16
    first = [tree_key(r.effective) for r in launched if r.attrs.get("remeasure_of") is None]
    assert len(first) == len(set(first)), "a setting that verifies a measured tree was launched"


def readings() -> Readings:
    """Ten settings read with exact accept lengths, each objective's best in the middle of the space:
    the default's value and the expected improvement nominate different trees here."""
    out = Readings()
    for spec, single, thr, accept in (
            (SpecConfig(1, 1, 2), 1.5, 1.4, 1.8), (SpecConfig(3, 1, 4), 2.0, 1.8, 2.6),
            (SpecConfig(2, 4, 8), 2.4, 2.0, 3.0), (SpecConfig(4, 4, 16), 2.8, 1.9, 3.6),
            (SpecConfig(5, 8, 32), 2.7, 1.5, 4.0), (SpecConfig(4, 8, 64), 2.3, 1.0, 4.2),
            (SpecConfig(6, 8, 48), 2.4, 1.1, 4.3), (SpecConfig(2, 2, 4), 2.1, 1.9, 2.7),
            (SpecConfig(3, 2, 6), 2.3, 2.05, 2.9), (SpecConfig(4, 2, 8), 2.5, 2.02, 3.2)):
        out.values[tree_key(spec)] = [[single, thr]]
        out.accept[tree_key(spec)] = [accept]
        out.spec[tree_key(spec)] = spec
    return out


def test_the_rule_is_drawn_by_the_belief_at_its_earlier_nominees():
    """One rule's earlier nominees are the best-read trees, the others' the worst: with a large eta
    the proposal is that rule's nominee, whatever the seed."""
    good, poor = tree_key(SpecConfig(4, 4, 16)), tree_key(SpecConfig(1, 1, 2))
    picked = {}
    for favoured in range(len(HEDGE_RULES)):
        earlier = [[good if r == favoured else poor for r in range(len(HEDGE_RULES))]] * 3
        for seed in range(3):
            r = readings()
            r.nominees = earlier
            spec, _again, why = StructuredSampler(SPACE, seed=seed, hedge=100).propose(r, number=14, remaining=8)
            assert f"(hedge: {HEDGE_RULES[favoured]}, odds 1.00)" in why, why
            assert r.nominated is not None and tree_key(spec) == r.nominated[favoured]
            picked.setdefault(favoured, set()).add(tree_key(spec))
    assert all(len(p) == 1 for p in picked.values())
    assert picked[0] != picked[1]  # the default's value and the expected improvement nominate apart here


def test_hedge_odds_follow_exp_eta_gain_and_never_overflow():
    odds = hedge_odds(np.array([0.0, 0.1, 0.1]), 10)
    assert odds.sum() == pytest.approx(1)
    assert odds[1] / odds[0] == pytest.approx(np.e)
    assert np.allclose(hedge_odds(np.array([5e3, 0.0, 1.0]), 1000), [1, 0, 0])
    assert np.allclose(hedge_odds(np.array([2.0, 1.0, 0.0]), 0), [1 / 3] * 3)
