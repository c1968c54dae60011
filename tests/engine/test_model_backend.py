"""The model backend (tuner/engine/backends.py, ModelBackend): the performance model or a landscape
table as measurements, with seeded noise per measurement, failures for settings a table lacks or
memory cannot hold, and the modelled duration of every measurement."""

from __future__ import annotations

import statistics

import pytest
import yaml
from support.landscapes import table_from_profile, write_table

from tuner.bench.plan import stage_plan
from tuner.config.landscape import load_landscape
from tuner.config.suite import load_suite
from tuner.engine.backends import DEFAULT_LOAD_S, NOT_IN_LANDSCAPE, ModelBackend, suite_model_seconds
from tuner.engine.model_backend import parsed_server_args
from tuner.engine.model_suite import FLUSH_S
from tuner.sglang.rules import SpecConfig
from tuner.sim.profile import load_profile

CHAIN, TREE = SpecConfig(3, 1, 4), SpecConfig(4, 4, 16)


def measure(backend, spec, label):
    seen = []
    m = backend.measure(spec, label, seen.append)
    assert seen == [m]  # record is called exactly once, with the measurement
    return m


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("t") / "t.json"
    return load_landscape(write_table(path, table_from_profile(keep=lambda s: s.num_draft_tokens <= 16, load_s=900)))


def test_a_table_row_is_measured_with_noise_around_its_figures(table):
    backend = ModelBackend(table, load_suite("quick"), noise=0.02, seed=1)
    truth = table.configs[TREE]
    readings = [measure(backend, TREE, f"trials/{i}").figures for i in range(200)]
    ratios = [f.tok_per_s_at(32) / truth.tok_per_s[32] for f in readings]
    assert statistics.mean(ratios) == pytest.approx(1.0, abs=0.005)
    assert statistics.stdev(ratios) == pytest.approx(0.02, rel=0.2)
    assert all(f.accept_length == truth.accept_length for f in readings)  # exact: averaged over many steps
    base = measure(backend, None, "baseline").figures
    assert base.single_tok_per_s == pytest.approx(table.baseline.single_tok_per_s, rel=0.1)


def test_noise_is_a_function_of_seed_and_label(table):
    a, b = (ModelBackend(table, load_suite("quick"), seed=5) for _ in range(2))
    first = measure(a, TREE, "trials/7").figures
    measure(b, CHAIN, "trials/3")  # another order of measurements does not shift the draws
    assert measure(b, TREE, "trials/7").figures == first
    assert measure(a, TREE, "trials/8").figures != first  # a re-measurement draws anew
    assert measure(ModelBackend(table, load_suite("quick"), seed=6), TREE, "trials/7").figures != first
    noiseless = ModelBackend(table, load_suite("quick"), noise=0.0, seed=None)
    assert measure(noiseless, TREE, "x").figures.single_tok_per_s == table.configs[TREE].single_tok_per_s


def test_a_setting_the_table_lacks_fails_at_launch(table):
    backend = ModelBackend(table, load_suite("quick"), seed=1)
    m = measure(backend, SpecConfig(5, 8, 32), "trials/1")
    assert m.figures is None and m.failure_class == NOT_IN_LANDSCAPE
    assert "steps=5 topk=8 draft=32" in m.failure_message and str(table.source) in m.failure_message
    assert m.model_duration_s == 900  # the load happened: the table's load_s


def test_modelled_duration_is_load_plus_the_suite_at_the_measured_rates(table):
    suite = load_suite("seed")
    backend = ModelBackend(table, suite, noise=0.0, seed=None, load_s=120)
    m = measure(backend, CHAIN, "trials/0")
    f = m.figures
    single = (2 * 16 + 3 * 5 * (256 + 1024 + 2048)) / f.single_tok_per_s  # warm-up, 3 repeats
    sweep = 32 * 512 / f.tok_per_s_at(32)
    assert suite_model_seconds(f, suite) > single + sweep  # plus the levels 1..16 the table lacks
    assert m.model_duration_s == pytest.approx(120 + suite_model_seconds(f, suite))
    # a profile measures every level; its seed-suite baseline on K2.6 PCIe takes about half an hour
    pcie = ModelBackend("k2.6-tp8-pcie", suite, noise=0.0, seed=None)
    base = measure(pcie, None, "baseline")
    assert pcie.load_s == DEFAULT_LOAD_S and 25 * 60 < base.model_duration_s - DEFAULT_LOAD_S < 45 * 60


def test_a_profile_without_the_memory_fails_large_trees_as_oom(tmp_path):
    # dense-27b-tp1 on an 80 GB card: the weights fit, the verify buffers of a 64-token tree do not
    data = load_profile("dense-27b-tp1").model_dump()
    data["hardware"]["gpu_memory_gb"] = 80.0
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(data))
    backend = ModelBackend(str(path), load_suite("quick"), seed=1)
    assert measure(backend, None, "baseline").failure_class is None
    assert measure(backend, CHAIN, "trials/0").failure_class is None
    big = measure(backend, SpecConfig(8, 8, 64), "trials/1")
    assert big.failure_class == "oom" and "Not enough memory" in big.failure_message


# -- the study's staged order (tuner/bench/plan.py) -------------------------------------------------
def stages_of(backend, spec, label, stop_after=None):
    seen = []

    def on_stage(i, name, partial):
        seen.append((name, partial))
        return name == stop_after

    m = backend.measure(spec, label, lambda m: None, on_stage=on_stage)
    return m, seen


def test_every_stage_offers_partial_figures_that_end_at_the_whole_suite(table):
    suite = load_suite("seed")
    backend = ModelBackend(table, suite, noise=0.02, seed=2, plan=stage_plan(suite, [32]))
    m, seen = stages_of(backend, TREE, "trials/4")
    names = [s.name for s in backend.plan]
    assert [n for n, _ in seen] == names[:-1] and m.stopped_after is None
    assert [n for n, _ in m.figures.stage_results()] == names
    assert m.figures.stage_results()[-1][1].single_tok_per_s == m.figures.single_tok_per_s
    assert m.figures == backend.full_figures(TREE, "trials/4")  # the stages do not move the draw
    # the sweep objective is measured in the probe, exactly; the single figure converges
    probe = seen[0][1]
    assert probe.tok_per_s == {32: m.figures.tok_per_s_at(32)}
    errors = [abs(p.single_tok_per_s / m.figures.single_tok_per_s - 1) for _, p in seen]
    assert errors[-1] == pytest.approx(0.0, abs=1e-12) and max(errors) < 0.05
    noiseless = ModelBackend(table, suite, noise=0.0, seed=None, plan=backend.plan)
    _, exact = stages_of(noiseless, TREE, "x")
    assert all(p.single_tok_per_s == pytest.approx(table.configs[TREE].single_tok_per_s) for _, p in exact)


def test_a_suite_stopped_after_a_stage_costs_what_it_measured(table):
    suite = load_suite("seed")
    plan = stage_plan(suite, [32])
    backend = ModelBackend(table, suite, noise=0.02, seed=2, load_s=300, plan=plan)
    whole, _ = stages_of(backend, CHAIN, "trials/1")
    stopped, seen = stages_of(backend, CHAIN, "trials/1", stop_after="probe")
    assert stopped.stopped_after == "probe" and len(seen) == 1
    assert stopped.figures is seen[0][1] and [n for n, _ in stopped.figures.stage_results()] == ["probe"]
    f = whole.figures
    probe_s = (2 * 16 + 5 * 256) / f.single_tok_per_s + 32 * 512 / f.tok_per_s_at(32) + 2 * FLUSH_S
    assert stopped.model_duration_s == pytest.approx(300 + probe_s, rel=0.02)  # per-request noise
    assert whole.model_duration_s == pytest.approx(300 + suite_model_seconds(f, suite, plan), rel=0.01)


def test_a_profile_reads_its_load_time_and_each_row_at_its_own_rate():
    suite = load_suite("seed")
    backend = ModelBackend("dense-27b-tp1", suite, noise=0.0, seed=None, plan=stage_plan(suite, [32]))
    assert backend.load_s == 150.0  # the profile's runtime.load_s
    m, seen = stages_of(backend, SpecConfig(5, 8, 32), "x")
    base, _ = stages_of(backend, None, "baseline")
    # the probe's 256-token requests pay a larger share of prefill: slower than the suite's mean
    # (the model's own figure for those rows); the probe's speedup, the same requests over the
    # baseline's, is within 1% of the whole suite's
    rows = backend.row_rates(SpecConfig(5, 8, 32))
    assert seen[0][1].single_tok_per_s == pytest.approx(sum(v for (_, n), v in rows.items() if n == 256) / 5)
    assert seen[0][1].single_tok_per_s < m.figures.single_tok_per_s
    probe_speedup = seen[0][1].single_tok_per_s / base.figures.stage_results()[0][1].single_tok_per_s
    assert probe_speedup == pytest.approx(m.figures.single_tok_per_s / base.figures.single_tok_per_s, rel=0.01)


def test_server_args_are_read_as_sglangs_argparse_reads_them(tmp_path):
    """QA: ``mem_fraction_static: "0.8"`` (a string, which SGLang's argparse converts by the option's
    type) reached the memory check as text: TypeError, the study run dead. The backend now reads each
    argument as the simulated server's parser does, so text and number fail or pass alike."""
    suite = load_suite("quick")
    for low, high in ((0.2, 0.9), ("0.2", "0.9")):
        small = ModelBackend("k2.6-tp8-pcie", suite, seed=1, server_args={"mem_fraction_static": low,
                                                                            "context_length": "8192"})
        assert small.server_args == {"mem_fraction_static": 0.2, "context_length": 8192}
        assert small.launch_failure(CHAIN)[0] == "oom"
        assert ModelBackend("k2.6-tp8-pcie", suite, seed=1,
                            server_args={"mem_fraction_static": high}).launch_failure(CHAIN) is None
    # lists by their items' type, a switch given false stays false
    assert parsed_server_args({"gc_threshold": ["1", 2], "enable_metrics": False}) == {
        "gc_threshold": [1, 2], "enable_metrics": False}
    with pytest.raises(ValueError, match="server.args: argument --mem-fraction-static: invalid float value"):
        parsed_server_args({"mem_fraction_static": "most"})  # handed in by code: refused, never an exit


def test_server_args_its_parser_refuses_fail_each_launch_as_invalid_args():
    """Arguments handed in by code that the simulated server's parser refuses (the study check refuses
    such a study file up front) are no traceback at construction: every launch fails as the process
    backend's would, ``invalid_args`` with the parser's message, after the modelled load."""
    backend = ModelBackend("k2.6-tp8-pcie", load_suite("quick"), seed=1, load_s=60,
                           server_args={"stream_interval": "often"})
    for spec in (None, CHAIN):
        m = measure(backend, spec, "trials/1")
        assert (m.failure_class, m.model_duration_s) == ("invalid_args", 60)
        assert "error: argument --stream-interval: invalid int value: 'often'" in m.failure_message


def test_a_table_level_the_suite_never_sweeps_is_not_reported(tmp_path):
    # QA: a table with tok_per_s@8 replayed by a suite sweeping 1 and 32 reported a C=8 figure
    # (pareto, export's header: "concurrency 8: 455.6 vs 205.2 tok/s") the suite never measured.
    data = table_from_profile(keep=lambda s: s == CHAIN)
    data["concurrency"] = [8, 32]
    for row in [data["baseline"], *data["configs"]]:
        row["tok_per_s@8"] = row["tok_per_s@32"] / 3
    table = load_landscape(write_table(tmp_path / "t.json", data))
    suite_file = tmp_path / "s132.yaml"
    suite_file.write_text(yaml.safe_dump({
        "name": "s132", "prompts": [{"name": "fib", "text": "Write a Python function for Fibonacci."}],
        "single": {"lengths": [128], "repeats": 1}, "sweep": {"concurrencies": [1, 32], "max_tokens": 512},
        "warmup": {"requests": 1, "max_tokens": 8}, "ignore_eos": True}))
    backend = ModelBackend(table, load_suite(suite_file), noise=0.0, seed=1)
    for spec, label in ((None, "baseline"), (CHAIN, "trials/0")):
        m = measure(backend, spec, label)
        assert set(m.figures.tok_per_s) == {32}
        assert all(set(f.tok_per_s) <= {32} for _, f in m.figures.stage_results())


@pytest.mark.parametrize("source", ["profile", "table"])
def test_a_suite_with_no_single_requests_reports_no_single_figure(tmp_path, table, source):
    # QA: a suite with single.lengths: [] (a sweep only): the baseline read "single request 0.0
    # tok/s" on the profile and "26.5 tok/s" (the table's) on a table, figures of requests never sent.
    suite_file = tmp_path / "sweep-only.yaml"
    suite_file.write_text(yaml.safe_dump({
        "name": "sweep-only", "prompts": [{"name": "fib", "text": "Write a Python function for Fibonacci."}],
        "single": {"lengths": [], "repeats": 1}, "sweep": {"concurrencies": [32], "max_tokens": 512},
        "warmup": {"requests": 1, "max_tokens": 8}, "ignore_eos": True}))
    suite = load_suite(suite_file)
    assert suite.n_single_requests() == 0
    backend = ModelBackend("k2.6-tp8-pcie" if source == "profile" else table, suite, noise=0.02, seed=1)
    for spec, label in ((None, "baseline"), (CHAIN, "trials/0")):
        m = measure(backend, spec, label)
        assert m.figures.single_tok_per_s is None and m.figures.tok_per_s_at(32) > 0
        assert all(f.single_tok_per_s is None for _, f in m.figures.stage_results())
        assert backend.full_figures(spec, label).single_tok_per_s is None


def test_a_request_that_fits_only_without_the_draft_slots_fails_the_trees_as_the_server_would():
    """SGLang (and the simulated server) count EAGLE's reserved draft slots, max(topk x steps, draft
    tokens), on top of a request's input: the quick suite's longest request (24 prompt tokens + 512)
    fits a 540-token context for the baseline and (3, 1, 4), not for (2, 4, 8) or (4, 8, 64). QA: on
    the simulator those trees failed as request_errors ("... maximum context length of 540 tokens"),
    while backend model measured them and put (5, 8, 32) on the front."""
    backend = ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.0, seed=None,
                           server_args={"context_length": 540})
    assert measure(backend, None, "baseline").figures is not None
    assert measure(backend, CHAIN, "trials/0").figures is not None
    for n, spec in enumerate([SpecConfig(2, 4, 8), SpecConfig(4, 8, 64)], start=1):
        m = measure(backend, spec, f"trials/{n}")
        assert m.figures is None and m.failure_class == "request_errors", (spec, m)
        assert "maximum context length of 540 tokens" in m.failure_message, m.failure_message
    # the profile's own context (8192) takes every one
    roomy = ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.0, seed=None)
    assert measure(roomy, SpecConfig(4, 8, 64), "trials/1").figures is not None
