"""`tuner sim landscape`: the model's ground truth over a search space, and the shape it must show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tuner.cli.sim_landscape import landscape as landscape_cmd
from tuner.config.suite import DEFAULT_SWEEP_TOKENS
from tuner.config.yamlfile import ConfigError
from tuner.sglang.rules import SpecConfig
from tuner.sim.landscape import Landscape, LandscapeRow, landscape, load_suite_inputs, pareto_front

ROOT = Path(__file__).resolve().parents[2]
SPACE = ROOT / "search_spaces/eagle3.yaml"


@pytest.fixture(scope="module")
def maps() -> dict[str, Landscape]:
    return {name: landscape(name, SPACE, concurrencies=(1, 32))
            for name in ("k2.6-tp8-pcie", "k2.6-tp8-nvlink", "dense-27b-tp1")}


def test_every_effective_config_is_evaluated(maps):
    land = maps["k2.6-tp8-pcie"]
    assert len(land) == 949
    assert len({row.config for row in land}) == 949
    assert land.objectives == ("single_speedup", "speedup@32")
    assert land.baseline.single_speedup == 1.0 and land.baseline.speedup == {1: 1.0, 32: 1.0}


def test_pcie_best_single_request_setting_drafts_several_steps(maps):
    best = maps["k2.6-tp8-pcie"].optima["single_speedup"]
    assert 3 <= best.config.num_steps <= 5
    assert best.single_speedup > 2.0


def test_pcie_at_c32_one_step_or_no_speculation_wins(maps):
    land = maps["k2.6-tp8-pcie"]
    best = land.optima["speedup@32"]
    assert best.config.num_steps == 1 or best.speedup[32] <= 1.0
    assert max(r.speedup[32] for r in land) < 1.1


def test_nvlink_keeps_more_gain_at_c32(maps):
    pcie = maps["k2.6-tp8-pcie"].optima["speedup@32"].speedup[32]
    nvlink = maps["k2.6-tp8-nvlink"].optima["speedup@32"].speedup[32]
    assert nvlink > pcie + 0.2


def test_dense_single_gpu_gains_more_and_fades_slowly(maps):
    dense, pcie = maps["dense-27b-tp1"], maps["k2.6-tp8-pcie"]
    assert dense.optima["single_speedup"].single_speedup > pcie.optima["single_speedup"].single_speedup
    assert dense.optima["single_speedup"].single_speedup > 3.0
    assert dense.optima["speedup@32"].speedup[32] > 2.0


def _row(name: str, a: float, b: float) -> LandscapeRow:
    steps = int(name)
    return LandscapeRow(SpecConfig(steps, 1, steps + 1), 0.0, {32: 0.0}, a, {32: b}, 1.0)


PARETO_CASES = [
    ("one dominates", [("1", 2, 2), ("2", 1, 1)], ["1"]),
    ("trade-off", [("1", 3, 1), ("2", 1, 3), ("3", 2, 2), ("4", 1.5, 1.5)], ["1", "3", "2"]),
    ("ties all stay", [("1", 2, 2), ("2", 2, 2), ("3", 1, 2)], ["1", "2"]),
    ("equal on one, worse on other", [("1", 2, 3), ("2", 2, 1)], ["1"]),
]


@pytest.mark.parametrize("label,rows,expected", PARETO_CASES, ids=[c[0] for c in PARETO_CASES])
def test_pareto_front(label, rows, expected):
    front = pareto_front([_row(*r) for r in rows], ("single_speedup", "speedup@32"))
    assert [str(r.config.num_steps) for r in front] == expected


def test_front_of_the_real_landscape_is_not_dominated(maps):
    land = maps["k2.6-tp8-pcie"]
    front = land.front
    assert land.optima["single_speedup"] in front and land.optima["speedup@32"] in front
    for f in front:
        assert not any(r.single_speedup > f.single_speedup and r.speedup[32] > f.speedup[32] for r in land)


def test_suite_inputs(tmp_path):
    seed = load_suite_inputs("seed")
    assert len(seed.prompts) == 5 and seed.single_lengths == (256, 1024, 2048) and seed.sweep_tokens == 512
    (tmp_path / "p.txt").write_text("def f(x): return x")
    good = tmp_path / "s.yaml"
    good.write_text("name: t\nprompts: [{name: a, file: p.txt}]\nsingle: {lengths: [64]}\nsweep: {max_tokens: 32}\n")
    assert load_suite_inputs(str(good)).prompts == ("def f(x): return x",)
    # a sweep without max_tokens takes the suite's default, as in a study (it used to be refused here)
    open_sweep = tmp_path / "open.yaml"
    open_sweep.write_text("name: t\nprompts: [{name: a, text: hi}]\nsingle: {lengths: [64]}\nsweep: {}\n")
    assert load_suite_inputs(str(open_sweep)).sweep_tokens == DEFAULT_SWEEP_TOKENS
    bad = tmp_path / "bad.yaml"  # no single requests: nothing for single_speedup
    bad.write_text("name: t\nprompts: [{name: a, text: hi}]\nsingle: {lengths: []}\nsweep: {concurrencies: [4], max_tokens: 8}\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: single.lengths"):
        load_suite_inputs(str(bad))


def test_cli_json_has_every_row():
    result = CliRunner().invoke(landscape_cmd, ["--profile", "k2.6-tp8-pcie", "--space", str(SPACE), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["count"] == 949 and len(data["rows"]) == 949
    assert set(data["optima"]) == {"single_speedup", "speedup@32"}
    row = data["rows"][0]
    assert {"num_steps", "eagle_topk", "num_draft_tokens", "single_speedup", "speedup@32", "tok_per_s@1",
            "accept_length"} <= set(row)
    assert data["baseline"]["single_speedup"] == 1.0


def test_cli_table_and_bad_input(tmp_path):
    runner = CliRunner()
    result = runner.invoke(landscape_cmd, ["--space", str(SPACE), "--top", "3", "--concurrency", "1,8"])
    assert result.exit_code == 0, result.output
    assert "Top 3 by speedup@8" in result.output and "Pareto front" in result.output
    assert "949 valid effective settings" in result.output
    bad = tmp_path / "p.yaml"
    bad.write_text("name: x\nmodel: {}\n")
    result = runner.invoke(landscape_cmd, ["--profile", str(bad), "--space", str(SPACE)])
    assert result.exit_code == 2 and f"{bad}: model.layers: required key is missing" in result.output
    result = runner.invoke(landscape_cmd, ["--space", str(SPACE), "--concurrency", "0"])
    assert result.exit_code == 2 and "--concurrency" in result.output


def test_cli_table_lists_what_a_study_on_the_profile_fails_as_oom_as_failed(tmp_path):
    # QA: --concurrency 1,1024 --table wrote all 949 settings of k2.6-tp8-pcie, 758 of which do not fit
    # in memory at 1024 requests: a study on the profile fails them (oom), a study on the table measured
    # them; on dense-27b-tp1 even the baseline does not fit, and the table was written all the same.
    from tuner.config.landscape import load_landscape
    from tuner.sim.model import PerfModel
    from tuner.sim.profile import load_profile

    runner = CliRunner()
    out = tmp_path / "t.json"
    result = runner.invoke(landscape_cmd, ["--space", str(SPACE), "--concurrency", "1,1024", "--table", str(out)])
    assert result.exit_code == 0, result.output
    model = PerfModel(load_profile("k2.6-tp8-pcie"))
    context = model.profile.runtime.default_context_tokens
    table = load_landscape(out)
    rows = landscape(model, SPACE, concurrencies=(1, 1024)).rows  # the model is deterministic: computed once
    fits = [s for s in rows if model.kv_budget_ok(s.config, 1024, context)[0]]
    assert 0 < len(fits) < 949 and set(table.configs) == {r.config for r in fits}
    # the rest are listed as failed (oom), as a grid measured on a node lists what it launched
    assert set(table.failures) == {r.config for r in rows} - set(table.configs)
    assert set(table.failures.values()) == {"oom"} and len(table.listed) == 949
    assert f"{949 - len(fits)} of them listed as failed, oom" in result.output
    dense = tmp_path / "d.json"
    result = runner.invoke(landscape_cmd, ["--profile", "dense-27b-tp1", "--space", str(SPACE),
                                           "--concurrency", "1,1024", "--table", str(dense)])
    assert result.exit_code == 2 and "baseline" in result.output and "--table" in result.output, result.output
    assert not dense.exists()


def test_a_dataset_suite_gives_the_figures_a_study_on_the_profile_measures(tmp_path):
    # QA: `tuner sim landscape --suite sharegpt-mini` (a shipped suite; a study on the profile runs
    # it) exited 2 with "sharegpt-mini.yaml: prompts: at least one prompt is required".
    from tuner.config.suite import load_suite
    from tuner.engine.backends import ModelBackend

    # a corner of the shipped space (chains and trees both): each row costs the model the dataset's
    # every prompt, and the rows checked below are three (the whole space: 949 rows, most of this file's CPU)
    space = tmp_path / "corner.yaml"
    space.write_text("algorithm: EAGLE3\nparams:\n  speculative_num_steps: {low: 1, high: 3}\n"
                     "  speculative_eagle_topk: {choices: [1, 4]}\n"
                     "  speculative_num_draft_tokens: {low: 2, high: 8}\n")
    result = CliRunner().invoke(landscape_cmd, ["--space", str(space), "--suite", "sharegpt-mini", "--json",
                                                "--concurrency", "1,32"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    backend = ModelBackend("k2.6-tp8-pcie", load_suite("sharegpt-mini"), noise=0.0)
    for row in (data["baseline"], data["rows"][0], data["rows"][-1]):
        spec = None if row["num_steps"] is None else SpecConfig(row["num_steps"], row["eagle_topk"],
                                                                row["num_draft_tokens"])
        truth = backend.expected(spec)
        assert row["single_tok_per_s"] == pytest.approx(truth.single_tok_per_s, abs=1e-3)
        assert row["tok_per_s@32"] == pytest.approx(truth.tok_per_s[32], abs=1e-3)


def test_a_suite_without_single_requests_is_one_line(tmp_path):
    # QA: single.lengths: [] (a sweep-only suite) died with ZeroDivisionError in the landscape's
    # single_speedup; a landscape always has that objective.
    suite = tmp_path / "sweep-only.yaml"
    suite.write_text("name: s\nprompts: [{name: a, text: hi}]\nsingle: {lengths: []}\n"
                     "sweep: {concurrencies: [32], max_tokens: 64}\n")
    result = CliRunner().invoke(landscape_cmd, ["--space", str(SPACE), "--suite", str(suite)])
    line = result.output.strip()
    assert result.exit_code == 2 and line.splitlines() == [line], result.output
    assert f"{suite}: single.lengths: " in line and "Traceback" not in line, line


def test_the_default_space_is_the_shipped_one_from_any_folder(tmp_path, monkeypatch):
    # QA: the default --space was search_spaces/eagle3.yaml, a path in the tuner's checkout, so an
    # installed tuner refused to run without --space; now it is the shipped space, by name.
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(landscape_cmd, ["--suite", "quick", "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)["rows"]) == 949
    result = CliRunner().invoke(landscape_cmd, ["--space", "eagl3"])
    line = result.output.strip()
    assert result.exit_code == 2 and line.splitlines() == [line], result.output
    assert "eagl3: unknown search space 'eagl3' (did you mean 'eagle3'?)" in line, line
    assert list(tmp_path.iterdir()) == []
