"""SLOs, goodput and the lossless check through real studies (SQLite storage, the real engine and
sampler) measured by tests/support/suite_backend.py: real suite results built from the performance
model, so the settings a limit excludes are known in advance."""

from __future__ import annotations

import pytest
from support.model_study import SPACE
from support.suite_backend import SuiteBackend

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.baseline import find_baseline
from tuner.engine.records import MEASURED, load_records
from tuner.engine.runner import run_study
from tuner.engine.study import WORKLOAD_ATTR, create_study, open_study
from tuner.results.export import build_export
from tuner.results.pareto import PickError, study_front
from tuner.results.status import study_status
from tuner.sglang.rules import SpecConfig

STUDY = """
name: {name}
search_space: {space}
server: {{backend: sim, model_path: moonshotai/Kimi-K2.6, draft_model_path: d, tp_size: 8}}
bench: {{suite: quick, stream: true{lossless}}}
sampler: {{seed: 5}}
budget: {{n_trials: 40}}
{extra}
"""
#: e2e p99 at C=32 of 25 s: on k2.6-tp8-pcie every setting below ~0.81x of the baseline's C=32
#: throughput breaks it (the baseline itself measures ~20 s).
LIMIT_MS = 25_000


def make(tmp_path, name, extra="", lossless=""):
    path = tmp_path / f"{name}.yaml"
    path.write_text(STUDY.format(name=name, space=SPACE, extra=extra, lossless=lossless))
    config = load_study(path)
    create_study(config, config.storage)
    return config


def run(config, n, backend=None):
    backend = backend or SuiteBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=2)
    run_study(config, config.storage, backend, n_trials=n)
    return open_study(config.name, config.storage)


def e2e(r) -> float:
    return r.attrs["latency_ms@32"]["e2e_p99"]


def broke(r) -> bool:
    return any(not c["ok"] for c in r.attrs.get("slo_checks") or [])


def test_slo_marks_trials_infeasible_steers_the_sampler_and_filters_the_picks(tmp_path):
    slo = f"slo: [{{concurrency: 32, e2e_p99_ms: {LIMIT_MS}}}]"
    limited = run(make(tmp_path, "limited", slo), 10)
    free = run(make(tmp_path, "free"), 10)

    records = [r for r in load_records(limited) if r.status == MEASURED]
    assert records and any(broke(r) for r in records) and any(not broke(r) for r in records)
    for r in records:
        ms = e2e(r)
        assert broke(r) == (ms > LIMIT_MS)
        assert r.feasible == (not broke(r))  # measured, with values, but infeasible
        assert r.values is not None
        frozen = limited.trials[r.number]
        assert frozen.constraints["slo:e2e_p99_ms@32"] == pytest.approx(ms / LIMIT_MS - 1)
        assert frozen.constraints["measured"] < 0

    # the unconstrained single-request pick is a large tree that breaks the limit; the constrained
    # study picks only settings that meet it
    free_single = study_front(free).single.record
    assert e2e(free_single) > LIMIT_MS
    front = study_front(limited)
    assert all(e2e(p.record) <= LIMIT_MS for p in front.points)
    assert front.single.record.effective != free_single.effective

    # the sampler learns: after the four seed trials, fewer proposals break the limit
    def share_broken(study):
        later = [r for r in load_records(study) if r.status == MEASURED and r.number >= 4]
        return sum(e2e(r) > LIMIT_MS for r in later) / len(later)
    assert share_broken(limited) < share_broken(free)

    # status and export say which limit and by how much
    data = study_status(limited)
    bad = next(t for t in data["trials"] if t["limits"])
    assert "e2e_p99_ms@32" in bad["limits"] and "> 25000 (+" in bad["limits"]
    assert data["baseline"]["slo_checks"][0]["ok"] is True
    with pytest.raises(PickError, match=r"breaks e2e_p99_ms@32 \d+ > 25000 \(\+\d+\.\d%\)"):
        build_export(limited, str(bad["number"]))
    text = build_export(limited, "single").yaml_text()
    assert "# latency SLOs: this setting meets every limit: e2e_p99_ms@32" in text
    assert "# latency SLOs: the baseline meets every limit" in text
    from click.testing import CliRunner

    from tuner.cli import cli
    out = CliRunner().invoke(cli, ["study", "pareto", str(tmp_path / "limited.yaml")]).output
    assert "measured settings are off the front because they break the study's limits" in out
    assert f"trial {bad['number']} (" in out and "breaks e2e_p99_ms@32" in out
    from tuner.results.report import write_report
    page = write_report(limited, tmp_path / "r.html").html.read_text()
    assert "Latency SLOs" in page and "e2e_p99_ms@32" in page and "NO" in page


def test_a_baseline_that_breaks_the_limit_says_so_and_nothing_is_picked(tmp_path):
    study = run(make(tmp_path, "tight", "slo: [{concurrency: 32, e2e_p99_ms: 1000}]"), 2)
    base = find_baseline(study).attrs
    assert base["slo_checks"][0]["ok"] is False
    from tuner.results.traffic import baseline_slo_lines
    assert "the baseline itself breaks e2e_p99_ms@32" in baseline_slo_lines(base)[0]
    with pytest.raises(PickError, match="no measured trial of study tight meets the study's limits"):
        study_front(study)
    # QA: with --min-speedup-c32 the same study said "no feasible trial reaches speedup@32 >= 1
    # (none measured it)": every trial measured it; they break the SLO, which is what to say
    with pytest.raises(PickError, match="no measured trial of study tight meets the study's limits"):
        study_front(study, min_speedup_c32=1.0)


def test_goodput_objective_counts_requests_within_every_limit(tmp_path):
    extra = (f"slo: [{{concurrency: 32, e2e_p99_ms: {LIMIT_MS}, ttft_p50_ms: 100000}}]\n"
             "objectives: [single_speedup, goodput@32]")
    study = run(make(tmp_path, "goodput", extra), 3)
    for r in load_records(study):
        if r.status != MEASURED:
            continue
        # suite_backend: request i of 32 ends at span * (0.8 + 0.2 (i + 1) / 32)
        span_ms = 32 * 512 / r.attrs["tok_per_s@32"] * 1000
        good = sum(span_ms * (0.8 + 0.2 * (i + 1) / 32) <= LIMIT_MS for i in range(32))
        assert r.values[1] == pytest.approx(good / (span_ms / 1000), rel=1e-6)
        assert r.attrs["goodput_tok_per_s@32"] == pytest.approx(r.values[1] * 512, rel=1e-6)
        assert r.attrs["slo_attainment@32"] == pytest.approx(good / 32)


@pytest.mark.parametrize("enforce", [False, True])
def test_lossless_share_is_stored_flagged_and_optionally_enforced(tmp_path, enforce):
    lossy = SpecConfig(3, 1, 4)  # SGLang's automatic choice, the first seed trial
    backend = SuiteBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=2, lossy={lossy: 2})
    config = make(tmp_path, f"lossless{enforce}", lossless=", lossless: {min_share: 0.9, enforce: %s}" % str(enforce).lower())
    study = run(config, 2, backend)
    assert set(find_baseline(study).attrs["single_outputs"]) == {"fib@128", "fib@256", "json@128", "json@256",
                                                                 "haiku@128", "haiku@256"}
    by = {r.effective: r for r in load_records(study) if r.status == MEASURED}
    bad, good = by[lossy], next(r for spec, r in by.items() if spec != lossy)  # the second seed: lossless
    assert bad.attrs["lossless_share"] == pytest.approx(4 / 6) and bad.attrs["lossless_flag"] is True
    assert bad.attrs["lossless_first_divergence"] == {"prompt": "fib", "max_tokens": 128, "repeat": 0, "position": 5}
    assert good.attrs["lossless_share"] == 1.0 and good.attrs["lossless_flag"] is False
    assert bad.feasible is (not enforce)
    assert ("lossless" in study.trials[bad.number].constraints) is enforce
    status = study_status(study)
    row = next(t for t in status["trials"] if t["number"] == bad.number)
    assert row["lossless_share"] == pytest.approx(4 / 6) and row["lossless_flag"] is True
    assert study.user_attrs[WORKLOAD_ATTR]["suite"] == "quick"
    from tuner.results.report import write_report
    page = write_report(study, tmp_path / "r.html").html.read_text()
    assert "Traffic and limits" in page and "sampling temperature" in page and "FLAGGED" in page
    assert "fib (128 tokens), character 5" in page and "67%" in page
