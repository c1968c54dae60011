"""`--min-speedup-c32` on a study whose suite never sweeps concurrency 32 (QA: a study sweeping 64
only; `export` and `pareto` said "no feasible trial reaches speedup@32 >= 1 (the best measured is
0.000)", blaming the settings, and `confirm` launched every round before saying "no safe
improvement ... (none measured C=32)"): one line naming the flag, the concurrencies the suite
sweeps and the fix, exit 2, before anything is measured or written."""

from __future__ import annotations

import optuna
import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli

SUITE = {"name": "c64", "prompts": [{"name": "a", "text": "Write a haiku about autumn leaves."}],
         "single": {"lengths": [128], "repeats": 1}, "sweep": {"concurrencies": [1, 64], "max_tokens": 256},
         "timeout_s": 300}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    path = tmp_path_factory.mktemp("no-c32") / "c64.yaml"
    data = model_study_data("c64", seed=1)
    path.write_text(yaml.safe_dump({**data, "bench": {"suite": SUITE}, "objectives": ["single_speedup", "speedup@64"]}))
    r = CliRunner().invoke(cli, ["study", "run", str(path)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return path


@pytest.mark.parametrize("args", [["export", "--pick", "knee"], ["export", "--pick", "0"], ["pareto"],
                                  ["confirm", "--repeats", "2"], ["confirm", "--show"]])
def test_min_speedup_c32_on_a_study_without_c32_is_one_line(study, tmp_path, args):
    url = f"sqlite:///{study.parent / 'c64.db'}"
    before = sorted(s.study_name for s in optuna.get_all_study_summaries(url))
    out = ["-o", str(tmp_path / "best.yaml")] if args[0] == "export" else []
    r = CliRunner().invoke(cli, ["study", args[0], str(study), *args[1:], "--min-speedup-c32", "1", *out])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert lines == ["error: --min-speedup-c32: study c64 never measured concurrency 32 (its suite sweeps 1, 64); "
                     "leave --min-speedup-c32 out"], r.output
    assert not (tmp_path / "best.yaml").exists()
    assert sorted(s.study_name for s in optuna.get_all_study_summaries(url)) == before  # nothing measured
