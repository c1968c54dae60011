"""The sampler factory (tuner/engine/sampling.py) and the previous default, ``local-tpe`` (TPE with local
moves), on the real study engine with the performance model as backend (no processes): its local
moves are valid and new. The default, ``auto``, is tested in test_structured_sampler.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import optuna
import pytest

from tuner.config.space import SPEC_PARAMS, SearchSpace
from tuner.config.study import SamplerSettings
from tuner.config.yamlfile import ConfigError
from tuner.engine.sampling import LocalTPESampler, make_sampler
from tuner.engine.seeds import DEFAULT_SEED_TRIALS
from tuner.sglang.rules import SpecConfig, resolve

ROOT = Path(__file__).resolve().parents[2]
SPACE = SearchSpace.load(ROOT / "search_spaces" / "eagle3.yaml")
GRID = {name: SPACE.values(name) for name in SPEC_PARAMS}


def _benchmark():
    spec = importlib.util.spec_from_file_location("search_efficiency", ROOT / "benchmarks" / "search_efficiency.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("search_efficiency", module)
    spec.loader.exec_module(module)
    return module


def test_local_tpe_and_its_options():
    sampler = make_sampler(SamplerSettings(name="local-tpe", options={"draft_factor": 2.0, "n_startup_trials": 3}),
                           1, SPACE)
    assert isinstance(sampler, LocalTPESampler)
    assert sampler._draft_factor == 2.0 and sampler._tpe._n_startup_trials == 3
    assert isinstance(make_sampler(SamplerSettings(name="tpe"), 1, SPACE), optuna.samplers.TPESampler)
    assert isinstance(make_sampler(SamplerSettings(name="nsgaii"), 1, SPACE), optuna.samplers.NSGAIISampler)


@pytest.mark.parametrize("name, options, says", [
    ("local-tpe", {"local_prob": 2}, "local_prob: input should be less than or equal to 1"),
    ("auto", {"local_prob": 0.5}, "local_prob: unknown key"),
    ("auto", {"noise": 1.5}, "noise: input should be less than 1"),
    ("auto", {"local_radius": [2, 1]}, "local_radius"),
    ("tpe", {"no_such_option": 1}, "no_such_option: unknown key"),
    ("tpe", {"n_startup_trail": 3}, "did you mean 'n_startup_trials'"),
    ("tpe", {"n_startup_trials": "ten"}, "n_startup_trials: input should be a valid integer"),
    ("nsgaii", {"population_size": 1}, "population_size: input should be greater than or equal to 2"),
    ("random", {"seed": 3}, "seed: set sampler.seed instead"),
    ("grid", {"search_space": {"speculative_num_steps": [1]}}, "search_space: give a non-empty list"),
])
def test_bad_options_are_refused_when_the_file_loads(name, options, says):
    from tuner.config.yamlfile import parse_model

    with pytest.raises(ConfigError) as exc:
        parse_model(SamplerSettings, {"name": name, "options": options}, "s.yaml")
    assert exc.value.key == "options" and says in exc.value.message


def test_the_auto_sampler_s_options_as_a_study_file_gives_them():
    from tuner.config.yamlfile import parse_model

    options = {"local_radius": [2, 1, 2], "horizon": 3, "noise": 0.02, "confirm": 0}  # YAML lists, ints
    settings = parse_model(SamplerSettings, {"name": "auto", "options": options}, "s.yaml")
    sampler = make_sampler(settings, 1, SPACE)
    assert sampler._radius == (2, 1, 2) and sampler._noise == 0.02 and sampler._confirm == 0


def test_options_that_reach_the_factory_unchecked_are_still_config_errors():
    # e.g. an old stored study config
    for name, options in (("tpe", {"no_such_option": 1}), ("local-tpe", {"local_prob": 2})):
        with pytest.raises(ConfigError, match="sampler.options"):
            make_sampler(SamplerSettings.model_construct(name=name, seed=None, options=options), 1, SPACE)


def test_gp_needs_torch():
    settings = SamplerSettings(name="gp")
    if importlib.util.find_spec("torch") is None:
        with pytest.raises(ConfigError, match="torch"):
            make_sampler(settings, 1, SPACE)
    else:
        assert isinstance(make_sampler(settings, 1, SPACE), optuna.samplers.GPSampler)


def test_seed_trials_are_valid_and_span_the_tree_sizes():
    effective = [resolve(s).effective for s in DEFAULT_SEED_TRIALS]
    assert all(resolve(s).ok and SPACE.contains(s) for s in DEFAULT_SEED_TRIALS)
    assert effective[0] == SpecConfig(3, 1, 4)  # SGLang's own choice: the reference, measured first
    sizes = [e.num_draft_tokens for e in effective]
    assert min(sizes) <= 8 and max(sizes) >= 32 and len(set(effective)) == len(effective)


@pytest.mark.parametrize("center", [(3, 1, 4), (1, 1, 2), (4, 4, 16), (5, 8, 32), (2, 2, 5), (8, 8, 64), (1, 8, 9)])
def test_local_moves_are_valid_effective_settings_in_the_space(center):
    sampler = LocalTPESampler(GRID, seed=0)
    moves = sampler._neighbours(center)
    assert moves and center not in moves
    for m in moves:
        res = resolve(SpecConfig(*m))
        assert res.ok and res.effective == SpecConfig(*m), m
        assert SPACE.contains(SpecConfig(*m)), m


def test_a_tree_too_large_is_shrunk_to_what_sglang_accepts():
    sampler = LocalTPESampler(GRID, seed=0)
    # steps 2, topk 2 drafts 2 + 4 candidates: at most 7 draft tokens (eagle_utils.py)
    assert sampler._valid((2, 2, 40)) == (2, 2, 7)
    assert sampler._valid((3, 1, 40)) == (3, 1, 4)  # topk 1: SGLang runs steps + 1
    assert sampler._valid((9, 1, 10)) is None  # outside the space


def test_default_strategy_finds_both_optima_within_16_launches(tmp_path):
    """dense-27b-tp1 is the profile where the seeds alone are not enough: local moves must climb."""
    bench = _benchmark()
    target, truth = bench.truth_for("dense-27b-tp1", cache=tmp_path)
    for seed in (0, 1, 2):
        run = bench.run_one(target, truth, "default", seed, space=bench.SPACE, suite="seed", budget=16, noise=0.02)
        assert run.launches == 16
        assert run.both_launches is not None and run.both_launches <= 16, (seed, run.launches_to)


def test_local_moves_never_relaunch_or_repeat_a_setting(tmp_path):
    from tuner.engine.records import load_records

    bench = _benchmark()  # first: loading the benchmark puts benchmarks/ (searchbench) on sys.path
    from searchbench.runs import run_study_on

    target, truth = bench.truth_for("k2.6-tp8-nvlink", suite="quick", cache=tmp_path)
    study, _ = run_study_on(target, truth, "local-tpe", 3, space=bench.SPACE, suite="quick", budget=20, noise=0.02)
    local = [t.number for t in study.trials if LocalTPESampler.LOCAL_FROM in t.system_attrs]
    records = load_records(study)
    assert len(local) >= 5
    assert all(records[n].status == "measured" for n in local)
    launched = [r.effective for r in records if r.status == "measured"]
    assert len(launched) == len(set(launched)) == 20


def test_a_workers_seed_stays_in_numpys_range_at_the_top_of_the_study_seed():
    # QA: sampler.seed 4294967295 (the largest numpy takes) plus the trials already in the study
    # died in numpy: "Seed must be between 0 and 2**32 - 1".
    from types import SimpleNamespace

    from tuner.engine.runner import make_sampler as worker_sampler

    for name in ("auto", "tpe", "random"):
        config = SimpleNamespace(sampler=SamplerSettings(name=name, seed=2**32 - 1))
        worker_sampler(config, SPACE, 10)
