"""A study's baseline stores how its server counted each prompt (``prompt_token_counts``); a trial on a
server that counts them otherwise (a node that fetched the model after its chat template changed,
another tokenizer) measured another workload, and fails as ``args_mismatch`` with no figure kept
(QA: the counts were never compared, and its speedups were read against the baseline). Real suites
on real HTTP (:mod:`support.tokenizing_router`); the verdict is the study's own
(:func:`tuner.engine.outcome.judge_measurement`)."""

from __future__ import annotations

from pathlib import Path

from support.tokenizing_router import SUITE, Router

from tuner.bench.runner import run_suite
from tuner.config.study import load_study
from tuner.engine.backends import Measurement
from tuner.engine.outcome import PROMPT_TOKENS_ATTR, baseline_attrs, judge_measurement, tokenizer_problem
from tuner.engine.records import StoredFigures
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]
OBJECTIVES = ["single_speedup", "speedup@2"]


def config(tmp_path):
    p = tmp_path / "s.yaml"
    p.write_text(f"name: s\nsearch_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}\n"
                 "server: {backend: sim, model_path: m, draft_model_path: d}\n"
                 "bench: {suite: {name: two, prompts: [{name: fib, text: x}], single: {lengths: [8]}, "
                 "sweep: {concurrencies: [2], max_tokens: 8}}}\n"
                 f"objectives: {OBJECTIVES}\n")
    return load_study(p)


def test_a_trial_whose_server_counts_the_prompts_otherwise_than_the_baselines_fails_as_args_mismatch(tmp_path):
    with Router(divisors=(4,)) as srv:
        base_run = run_suite(srv.url, SUITE)
    with Router(divisors=(3,)) as other:
        other_run = run_suite(other.url, SUITE)
    study = config(tmp_path)
    stored = baseline_attrs(Measurement(base_run), study)
    assert stored[PROMPT_TOKENS_ATTR] == {"fib": 15, "haiku": 12}
    base = StoredFigures.from_attrs(stored)

    def verdict(run):
        return judge_measurement(Measurement(run), SpecConfig(3, 1, 4), OBJECTIVES, base, study,
                                 baseline_attrs=stored)

    # the baseline's own counts agree (its own figures: a speedup of 1, no clock to doubt on a stand-in
    # that answers at once)
    assert verdict(base_run).status == "measured", verdict(base_run).attrs.get("failure_message")
    v = verdict(other_run)
    assert v.status == "failed" and v.values is None and v.attrs["failure_class"] == "args_mismatch", v.attrs
    assert v.attrs["failure_message"].startswith(
        "the server counts prompt 'fib' as 21 input tokens, the baseline's counted 15: another tokenizer"), v.attrs
    assert "--rebaseline" in v.attrs["failure_message"]
    assert "single_speedup" not in v.attrs and "single_tok_per_s" not in v.attrs
    # a baseline stored before the counts were (no attribute) judges nothing
    older = {k: val for k, val in stored.items() if k != PROMPT_TOKENS_ATTR}
    assert tokenizer_problem(other_run, older) is None
    assert tokenizer_problem(other_run, stored) == v.attrs["failure_message"]
