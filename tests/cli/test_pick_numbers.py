"""`--pick` (export) and `--picks` (confirm) take a trial number in ASCII digits only (QA: '３', '٣',
' 1', '+1' and '0_1' were each taken as a trial number): anything else is one line naming the flag,
exit 2, nothing written or measured; every valid form still works."""

import pytest
from click.testing import CliRunner
from support.model_study import make_model_study

from tuner.cli import cli

NOT_NUMBERS = ["\uff10", "\u0660", "\u09e6", " 0", "0 ", "+0", "0_0", "-0", "\u00b2"]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return make_model_study(tmp_path_factory.mktemp("pick"), "p", n_trials=3)


@pytest.mark.parametrize("pick", NOT_NUMBERS)
def test_export_takes_a_trial_number_in_ascii_digits_only(study, tmp_path, pick):
    out = tmp_path / "best.yaml"
    r = CliRunner().invoke(cli, ["study", "export", str(study), "--pick", pick, "-o", str(out)])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith("error: --pick: ") and "a trial number in digits 0-9" in r.output, r.output
    assert not out.exists()


# (--picks is a list: spaces around its commas are the list's, 'single, 3' names trial 3)
@pytest.mark.parametrize("pick", [p for p in NOT_NUMBERS if p.strip() == p])
def test_confirm_takes_a_trial_number_in_ascii_digits_only(study, pick):
    r = CliRunner().invoke(cli, ["study", "confirm", str(study), "--picks", f"single,{pick}"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith("error: --picks: ") and "a trial number in digits 0-9" in r.output, r.output


@pytest.mark.parametrize("pick", ["single", "throughput", "knee", "0", "00"])
def test_every_valid_pick_still_exports(study, pick):
    r = CliRunner().invoke(cli, ["study", "export", str(study), "--pick", pick])
    assert r.exit_code == 0 and "speculative-num-steps:" in r.stdout, r.output
