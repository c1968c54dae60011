"""``tuner study run --dry-run FILE`` where the storage holds study NAME made from another file.

QA (qa164): with the file's suite changed after the study was made, the dry run printed the plan,
exit 0, where the run refuses at once ("the study exists with a different suite ...", exit 2); the
README says the dry run refuses what a run would refuse, with the same line. A larger
budget.n_trials, the one change a study takes, still gets the plan.
"""

from click.testing import CliRunner

from support.faults import ROOT
from tuner.cli import cli

STUDY = f"""
name: demo
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
storage: sqlite:///demo.db
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 1}}
bench: {{suite: SUITE}}
budget: {{n_trials: N}}
"""


def _tuner(*args):
    return CliRunner().invoke(cli, ["study", *map(str, args)], catch_exceptions=False)


def test_dry_run_refuses_a_file_the_stored_study_was_not_made_from(tmp_path):
    study = tmp_path / "demo.yaml"
    study.write_text(STUDY.replace("SUITE", "quick").replace("N", "2"))
    made = _tuner("create", study)
    assert made.exit_code == 0, made.output
    db = (tmp_path / "demo.db").read_bytes()

    study.write_text(STUDY.replace("SUITE", "mixed").replace("N", "2"))
    dry = _tuner("run", "--dry-run", study)
    assert dry.exit_code == 2, dry.output
    assert dry.stdout == ""
    assert dry.stderr.strip().splitlines() == [
        f"error: sqlite:///{tmp_path / 'demo.db'}: demo: the study exists with a different suite (dataset "
        "differs); use a new study name or the original file (a larger budget.n_trials is the one change a "
        f"study takes), or go on with the study as stored: `tuner study run --study demo --storage "
        f"sqlite:///{tmp_path / 'demo.db'}`"]
    run = _tuner("run", study)
    assert (run.exit_code, run.stderr) == (2, dry.stderr)  # the run's own line
    assert (tmp_path / "demo.db").read_bytes() == db
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.db", "demo.yaml"]  # nothing written

    study.write_text(STUDY.replace("SUITE", "quick").replace("N", "5"))  # a larger budget: the plan
    larger = _tuner("run", "--dry-run", study)
    assert larger.exit_code == 0, larger.output
    assert larger.stdout.startswith("# study demo, storage ")
