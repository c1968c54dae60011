"""The workload line's output tokens are lengths the suite sends (QA: a suite of single requests
alone, `single: {lengths: [8]}` and no sweep, printed "output tokens 512/512/512", the length of a
sweep it never runs, in `tuner bench`, `status`, the report and the export's header)."""

import pytest

from tuner.bench.workload import workload_line, workload_stats
from tuner.config.suite import load_suite

PROMPTS = [{"name": "a", "text": "Name a colour."}, {"name": "b", "text": "Write a haiku.", "max_tokens": 64}]


def test_a_suite_without_a_sweep_states_its_single_lengths():
    suite = load_suite({"name": "s", "prompts": PROMPTS, "single": {"lengths": [8, 32], "prompts": 1}})
    stats = workload_stats(suite)
    assert stats["output_tokens"] == pytest.approx({"p50": 20.0, "p90": 29.6, "p99": 31.76, "max": 32})
    assert "output tokens 20/30/32;" in workload_line(stats)


def test_each_prompt_at_its_own_length_without_a_sweep():
    # single.lengths omitted: each prompt at its own max_tokens, a prompt without one skipped
    suite = load_suite({"name": "s", "prompts": PROMPTS, "single": {"repeats": 1}})
    assert workload_stats(suite)["output_tokens"]["max"] == 64
    assert "output tokens 64/64/64;" in workload_line(workload_stats(suite))


def test_a_sweep_states_the_sweep_lengths_as_before():
    suite = load_suite({"name": "s", "prompts": PROMPTS, "single": {"lengths": [8]},
                        "sweep": {"concurrencies": [1, 32]}})
    assert workload_stats(suite)["output_tokens"] == pytest.approx({"p50": 288.0, "p90": 467.2, "p99": 507.52,
                                                                      "max": 512})


def test_one_inline_prompt_is_one_prompt():
    suite = load_suite({"name": "s", "prompts": PROMPTS[:1], "single": {"lengths": [8]}})
    assert workload_line(workload_stats(suite)).startswith("suite s: 1 inline prompt; prompt chars ")
