"""Pruning on a suite with adaptive repeats (`suite.adaptive`): each row may get up to `max_repeats`
readings after the last stage, so no figure is final before the suite ends. The probe's one batch at
C=32 is an estimate with an error, not the whole figure (QA, qa139: it was judged final, and a trial
whose first batch read 1.5% low was pruned on the margin alone, while the whole figure is the mean of
up to `max_repeats` batches)."""

import json
import math
import subprocess
import sys

import optuna
from test_pruning_server import STUDY

from tuner.bench.plan import stage_plan
from tuner.bench.result import SuiteResult
from tuner.config.study import PruneSettings
from tuner.config.suite import Suite
from tuner.engine.pruning import FrontPruner, adaptive_max_repeats, front_verdict

OBJECTIVES = ["single_speedup", "speedup@32"]
SUITE = {"name": "a", "prompts": [{"name": "p", "text": "Write a haiku."}, {"name": "q", "text": "Sum 1..n."}],
         "single": {"lengths": [64, 128], "repeats": 2}, "sweep": {"concurrencies": [1, 32], "max_tokens": 64}}


def _verdict_after_the_probe(suite: dict):
    """A trial 1.5% behind the front on the sweep objective (far behind on the single one), judged
    after the probe with no history: the verdict and what each gap had to clear."""
    parsed = Suite.model_validate(suite)
    plan = stage_plan(parsed, [32])
    settings = PruneSettings()
    pruner = FrontPruner(OBJECTIVES, plan, settings, 0.02, adaptive_max_repeats(SuiteResult(suite=suite)))
    noise = pruner.noise(0, [])
    return front_verdict([1.5, 0.985], [(0, [2.5, 1.0])], noise, settings.z, settings.margin)


def test_the_probe_batch_is_final_without_adaptive_repeats():
    verdict = _verdict_after_the_probe(SUITE)
    assert verdict.needed[1] == math.log1p(PruneSettings().margin) and verdict.pruned


def test_with_adaptive_repeats_the_probe_batch_is_an_estimate():
    verdict = _verdict_after_the_probe({**SUITE, "adaptive": {"rel_ci95": 0.02, "max_repeats": 4}})
    # the sampling error of one batch of up to four: 2% x sqrt(1 - 1/4), times z, plus the margin
    expected = PruneSettings().z * 0.02 * math.sqrt(1 - 1 / 4) + math.log1p(PruneSettings().margin)
    assert math.isclose(verdict.needed[1], expected, rel_tol=1e-9), verdict
    assert not verdict.pruned, verdict


def test_a_real_adaptive_run_judges_its_probe_batch_with_an_error(tmp_path):
    # the real path: the simulated server, the suite runner's SuiteResult handed to the judge
    study = STUDY.replace("    timeout_s: 120", "    adaptive: {rel_ci95: 0.005, max_repeats: 2}\n    timeout_s: 120")
    assert "adaptive" in study
    (tmp_path / "staged.yaml").write_text(study)
    run = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(tmp_path / "staged.yaml")],
                         capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    whole = json.loads((tmp_path / "staged" / "trials" / "0" / "suite.json").read_text())
    assert len({r["repeat"] for r in whole["records"] if r["phase"] == "sweep" and r["concurrency"] == 32}) > 1
    trial = optuna.load_study(study_name="staged", storage=f"sqlite:///{tmp_path / 'staged.db'}").trials[1]
    assert trial.state.name == "PRUNED" and "done: 1 measured, 1 pruned" in run.stdout, run.stdout
    # whatever stage decided it, the sweep objective's figure was not final yet (its adaptive repeats
    # come at the end): what its gap had to clear is more than the margin alone
    verdict = trial.user_attrs["prune_verdict"]
    assert verdict["needed"][1] > round(math.log1p(PruneSettings().margin), 5), verdict
