"""`export --pick` after a confirmation, on a study extended since (`run --add-trials`): a setting
measured after the confirmation that reads best is named in a warning, and the confirmed pick is
still the one exported (QA, qa130: only the header's parenthesis "one measurement each picked trial
N" said that a newer, never confirmed setting read better)."""

from __future__ import annotations

from click.testing import CliRunner
from support.model_study import model_study_yaml

from tuner.cli import cli


def tuner(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_a_setting_measured_since_the_confirmation_that_reads_best_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cf.yaml").write_text(model_study_yaml("cf", "sqlite:///cf.db", 2, noise=0.02, seed=1))
    assert tuner("study", "run", "cf.yaml").exit_code == 0
    confirmed = tuner("study", "confirm", "cf.yaml", "--repeats", "2")
    assert confirmed.exit_code == 0, confirmed.output
    before = tuner("study", "export", "cf.yaml", "--pick", "single")
    assert before.exit_code == 0 and "never confirmed" not in before.output  # nothing measured since
    assert tuner("study", "run", "cf.yaml", "--add-trials", "6").exit_code == 0
    after = tuner("study", "export", "cf.yaml", "--pick", "single")
    assert after.exit_code == 0, after.output
    warning = next(line for line in after.stderr.splitlines() if line.startswith("warning: --pick single: trial "))
    assert "reads best by the study's measurements but was never confirmed" in warning
    assert "run `tuner study confirm` again" in warning
    newer = int(warning.split("trial ", 1)[1].split(" ", 1)[0])
    assert newer >= 2  # one of the trials added after the confirmation
    # the export is still the confirmed pick, as before the extension
    assert before.stdout.split("speculative-num-steps:")[1].split("\n")[0] == \
        after.stdout.split("speculative-num-steps:")[1].split("\n")[0]
    assert "# confirmed: run" in after.stdout
