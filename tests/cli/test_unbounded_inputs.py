"""Inputs the last fuzz found taken without a bound (qa80), each through the real command: the value
past its bound is one line naming the file (or the flag) and the key with the fix, exit 2, nothing
written; the bound itself (or a value just inside it) is taken."""

from __future__ import annotations

import pytest
from support.cli_inputs import SUITE, accepted, refused, study_with


@pytest.mark.parametrize("key, bad, says, good", [
    # held out (qa80): 1e308 MiB was created; every launch then ended in logcap's OverflowError
    ("server.log_max_mb", 1e308, "server.log_max_mb: 1e+308 MiB is more than a TiB (1,048,576 MiB), no cap on any "
                                 "disk; give 0 for no cap", 1024 * 1024),
    # held out (qa80): 10**30 was created, and pruning silently never began
    ("budget.prune", {"startup_trials": 10 ** 30}, "budget.prune.startup_trials: input should be less than or "
                                                   "equal to 100000", {"startup_trials": 100_000}),
    # QA: 1e308 was created; the baseline then failed ("e2e_latency 0 ... cannot be true") after
    # the study was written
    ("server.sim.speedup", 1e308, "server.sim.speedup: 1e+308 is more than 100,000x", 100_000),
    # QA: 2**70 was created
    ("server.tp_size", 2 ** 70, "server.tp_size: a number of 22 digits GPUs in one tensor-parallel group; give "
                                "the GPUs the server runs on (at most 1024)", 1024),
    # held out (qa80): load_seconds 1e308 was created; every launch then waited out startup_timeout_s
    ("server.sim.load_seconds", 1e308, "server: sim.load_seconds (1e+308 s) must be shorter than "
                                       "startup_timeout_s (60 s)", 59.5),
    # QA: n_startup_trials and auto's horizon of 10**30 were created
    ("sampler", {"name": "tpe", "options": {"n_startup_trials": 10 ** 30}},
     "sampler.options: n_startup_trials: input should be less than or equal to 100000 (for the tpe sampler)",
     {"name": "tpe", "options": {"n_startup_trials": 100_000}}),
    ("sampler", {"name": "auto", "options": {"horizon": 1e30}},
     "sampler.options: horizon: input should be less than or equal to 100000 (for the auto sampler)",
     {"name": "auto", "options": {"horizon": 100_000}}),
    ("sampler", {"name": "nsgaii", "options": {"population_size": 10 ** 30}},
     "population_size: input should be less than or equal to 100000", {"name": "nsgaii"}),
], ids=["log_max_mb 1e308", "prune startup_trials 1e30", "sim speedup 1e308", "tp_size 2^70", "sim load_seconds 1e308", "tpe n_startup_trials 1e30",
        "auto horizon 1e30", "nsgaii population 1e30"])
def test_a_study_value_past_its_bound_is_refused(tmp_path, key, bad, says, good):
    line = refused(tmp_path, ["study", "create", str(study_with(tmp_path, key, bad))])
    assert says in line, line
    accepted(["study", "create", str(study_with(tmp_path, key, good))])


@pytest.mark.parametrize("key, bad, says, good", [
    ("timeout_s", 1e-7, "suite.yaml: timeout_s: 1e-07 s would time out every request (the shortest takes tens "
                       "of model milliseconds); give at least 0.1 s", 0.1),
    ("timeout_s", 1e300, "suite.yaml: timeout_s: 1e+300 s is longer than a year (the most a study may give: "
                        "366 days); check the unit", 31_622_400),
    ("temperature", 1e308, "suite.yaml: temperature: input should be less than or equal to 2", 2.0),
], ids=["timeout 1e-7", "timeout 1e300", "temperature 1e308"])
def test_a_suite_value_past_its_bound_is_refused(tmp_path, key, bad, says, good):
    # QA: each was created; 1e-7 timed every request out, 1e300 overflows the deadline it is added to
    line = refused(tmp_path, ["study", "create", str(study_with(tmp_path, "bench.suite", "x", {**SUITE, key: bad}))])
    assert says in line, line
    accepted(["study", "create", str(study_with(tmp_path, "bench.suite", "x", {**SUITE, key: good}))])


@pytest.mark.parametrize("steps, shown", [(10 ** 30, "a number of 31 digits"), (9, "9")])
def test_a_grid_value_outside_the_search_space_is_refused(tmp_path, steps, shown):
    # held out (qa80): Optuna's GridSampler warns of a value out of range and uses it: steps 10**30
    # was created, then launched as --speculative-num-steps 1000000000000000000000000000000
    def grid(values):
        return {"name": "grid", "options": {"search_space": {"speculative_num_steps": values,
                                                             "speculative_eagle_topk": [1],
                                                             "speculative_num_draft_tokens": [4]}}}
    line = refused(tmp_path, ["study", "create", str(study_with(tmp_path, "sampler", grid([3, steps])))])
    assert line.endswith(f"sampler.options.search_space.speculative_num_steps: {shown} is not a value of the "
                         "search space eagle3 (1-8); give values of the space, or widen it"), line
    accepted(["study", "create", str(study_with(tmp_path, "sampler", grid([3, 8])))])
