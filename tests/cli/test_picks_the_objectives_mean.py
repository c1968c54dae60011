"""`export --pick single|throughput` and `confirm --picks` on a study without the objective the
pick is named after (QA: on a study of single_speedup alone, `--pick throughput` exported the best
single-request setting, speedup@32 0.26x, without a word; on one of speedup@64 alone `--pick single`
exported its best at C=64): one line naming the flag, the study's objectives and the picks that
work, exit 2, nothing written. `confirm`'s default picks leave such a pick out."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data
from support.prepared_once import prepared_once

from tuner.cli import cli


def _study(folder, name: str, objectives: list[str]):
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({**model_study_data(name, seed=1), "objectives": objectives}))
    r = CliRunner().invoke(cli, ["study", "run", str(path)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return path


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    def build(folder):
        _study(folder, "one", ["single_speedup"])
        _study(folder, "c32", ["speedup@32"])

    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    folder = prepared_once(tmp_path_factory, "objective-picks", build)
    return {"single": folder / "one.yaml", "c32": folder / "c32.yaml"}


@pytest.mark.parametrize("which, pick, works, missing", [
    ("single", "throughput", "single or knee", "objective at a concurrency"),
    ("c32", "single", "throughput or knee", "single-request objective"),
])
def test_a_pick_the_objectives_cannot_mean_is_refused(studies, tmp_path, which, pick, works, missing):
    out = tmp_path / "best.yaml"
    r = CliRunner().invoke(cli, ["study", "export", str(studies[which]), "--pick", pick, "-o", str(out)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith(f"error: --pick: {pick}: the study has no {missing}"), r.output
    assert f"give {works} or a trial number" in r.output, r.output
    assert not out.exists()
    r = CliRunner().invoke(cli, ["study", "confirm", str(studies[which]), "--picks", pick, "--repeats", "2"])
    assert r.exit_code == 2 and r.output.startswith(f"error: --picks: {pick}: the study has no"), r.output


@pytest.mark.parametrize("which, picks", [("single", ["single", "knee", "0"]), ("c32", ["throughput", "knee"])])
def test_the_picks_it_can_mean_still_export(studies, which, picks):
    for pick in picks:
        r = CliRunner().invoke(cli, ["study", "export", str(studies[which]), "--pick", pick])
        assert r.exit_code == 0 and "speculative-num-steps:" in r.stdout, r.output


def test_confirm_s_default_picks_leave_out_the_ones_the_objectives_cannot_mean(studies):
    r = CliRunner().invoke(cli, ["study", "confirm", str(studies["single"]), "--repeats", "2"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["study", "export", str(studies["single"]), "--pick", "single"])
    assert r.exit_code == 0 and "# confirmed: run" in r.stdout, r.output
