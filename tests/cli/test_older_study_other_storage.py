"""`tuner study create` and `study run --dry-run` with ``--storage`` naming another database than the
file's ``storage``: the checks that read a stored study read the one the command uses (QA: an older
tuner's study moved to the ``--storage`` database had its tree seed judged as a new study's on this
node -- dsa, chains only -- and refused, exit 2, though its launches keep the backend they ran)."""

import shutil

import optuna
from click.testing import CliRunner
from support.older_study import older_dsa_study_with_a_tree_seed

from tuner.cli import cli


def _moved(tmp_path):
    path, config = older_dsa_study_with_a_tree_seed(tmp_path)
    other = f"sqlite:///{tmp_path / 'other.db'}"
    shutil.move(config.storage.removeprefix("sqlite:///"), tmp_path / "other.db")
    return path, other


def test_create_judges_the_study_in_the_storage_it_is_given(tmp_path):
    path, other = _moved(tmp_path)
    r = CliRunner().invoke(cli, ["study", "create", str(path), "--storage", other])
    assert r.exit_code == 0, r.output
    assert "study d ready" in r.stdout
    assert {s.study_name for s in optuna.get_all_study_summaries(other)} == {"d", "d.baseline"}
    assert not (tmp_path / "d.db").exists()  # the file's own storage is neither read into being nor written


def test_a_dry_run_judges_the_study_in_the_storage_it_is_given(tmp_path):
    path, other = _moved(tmp_path)
    r = CliRunner().invoke(cli, ["study", "run", str(path), "--storage", other, "--dry-run"])
    assert r.exit_code == 0, r.output
    # the older study's launches, as its trials ran them: the tuner's pin of the time, flashinfer
    assert "the tuner's pin when the study was created" in r.stdout
    assert "--attention-backend flashinfer" in r.stdout
    assert "dsa" not in r.stdout
    # the same commands as a dry run in the file's own storage would print, but for the storage line
    shutil.move(other.removeprefix("sqlite:///"), tmp_path / "d.db")
    here = CliRunner().invoke(cli, ["study", "run", str(path), "--dry-run"])
    assert here.exit_code == 0, here.output
    assert here.stdout.splitlines()[1:] == r.stdout.splitlines()[1:]


def test_a_new_study_in_that_storage_is_still_judged_by_this_node(tmp_path):
    path, other = _moved(tmp_path)
    text = path.read_text().replace("name: d", "name: d2")
    fresh = tmp_path / "d2.yaml"
    fresh.write_text(text)
    r = CliRunner().invoke(cli, ["study", "create", str(fresh), "--storage", other])
    assert r.exit_code == 2
    assert "seed_trials[0]: steps=2 topk=4 draft=8 is a tree" in r.output
    assert {s.study_name for s in optuna.get_all_study_summaries(other)} == {"d", "d.baseline"}
