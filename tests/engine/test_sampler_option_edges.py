"""The default sampler's options at the edges of what a study file may give: ``noise_weight: 0``
(the study's repeats alone) and the largest ``local_doubt``. Real studies on ``server.backend:
model`` (in-memory storage, no process)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import optuna
import pytest
from support.landscapes import table_from_profile, write_table

from tuner.config.sampler import MAX_LOCAL_DOUBT
from tuner.config.space import SearchSpace
from tuner.config.study import SamplerSettings, study_from_dict
from tuner.config.suite import load_suite
from tuner.engine.backends import make_backend
from tuner.engine.records import launched, load_records
from tuner.engine.runner import run_study
from tuner.engine.structured import Readings, StructuredSampler
from tuner.engine.study import create_study, open_study

ROOT = Path(__file__).resolve().parents[2]
SPACE_FILE = ROOT / "search_spaces" / "eagle3.yaml"
SPACE = SearchSpace.load(SPACE_FILE)


def run_with(tmp_path: Path, options: dict, budget: int = 6):
    table = write_table(tmp_path / "nvlink.json", table_from_profile("k2.6-tp8-nvlink"))
    config = study_from_dict({
        "name": "s", "search_space": str(SPACE_FILE), "bench": {"suite": "quick"},
        "server": {"backend": "model", "model_path": "m", "draft_model_path": "d",
                   "model": {"landscape": str(table), "noise": 0.03, "seed": 2}},
        "sampler": {"name": "auto", "seed": 2, "options": options}, "budget": {"n_trials": budget}})
    storage = optuna.storages.InMemoryStorage()
    create_study(config, storage)
    run_study(config, storage, make_backend(config, SPACE, load_suite("quick")))
    return load_records(open_study("s", storage))


def test_noise_weight_zero_takes_the_prior_until_repeats_then_the_repeats_alone():
    sampler = StructuredSampler(SPACE, seed=0, noise=0.03, noise_weight=0)
    readings = Readings()
    readings.values[(3, 1, 4)] = [[1.0, 1.0]]  # one reading: nothing repeated yet
    assert sampler.noise_var(readings) == pytest.approx(np.log1p(0.03) ** 2)
    readings.values[(3, 1, 4)] = [[1.0, 1.0], [1.1, 1.1]] * 5
    assert sampler.noise_var(readings) == pytest.approx(np.var(np.log([1.0, 1.1] * 5), ddof=1), rel=0.15)


def test_a_study_with_noise_weight_zero_spends_its_budget(tmp_path):
    # QA: it crashed (ZeroDivisionError) at the first proposal after the seed trials
    records = run_with(tmp_path, {"noise_weight": 0})
    assert sum(1 for r in records if launched(r.status, r.attrs)) == 6


def test_the_largest_local_doubt_proposes_without_numpy_overflow(tmp_path):
    # QA: local_doubt 1e200 was taken, and every proposal warned "overflow encountered in square"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        records = run_with(tmp_path, {"local_doubt": MAX_LOCAL_DOUBT}, budget=6)
    assert sum(1 for r in records if launched(r.status, r.attrs)) == 6
    with pytest.raises(TypeError, match="local_doubt in"):
        StructuredSampler(SPACE, local_doubt=MAX_LOCAL_DOUBT * 10)


def test_a_study_file_with_a_larger_local_doubt_is_refused_naming_the_option():
    with pytest.raises(ValueError, match=r"local_doubt: input should be less than or equal to 1 \(for the auto sampler\)"):
        SamplerSettings(name="auto", options={"local_doubt": 1e200})
    assert SamplerSettings(name="auto", options={"local_doubt": MAX_LOCAL_DOUBT}).options == {"local_doubt": 1.0}
