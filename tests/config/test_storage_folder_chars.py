"""A study file in a folder whose name holds a character a URL reads otherwise (``%``, ``?``, ``#``,
``$``): its SQLite storage beside it -- the default one, or a relative ``storage: sqlite:///s.db`` --
is that folder's file, whatever folder the command is run from.

QA: the tuner wrote the folder into the URL as it is, so SQLAlchemy decoded ``a%20b`` to ``a b``
(with a folder ``a b`` there the study went into another folder's database; without, every command
said "no such storage"), and a folder ``h#sh``, ``q?m`` or ``do$llar`` was refused as an option
after ``#``/``?`` or a ``$VARIABLE`` the user never wrote.
"""

import pytest
from click.testing import CliRunner

from support.small_space import small_space
from tuner.cli import cli

# the space is beside the folders under test, not in one: what is tested is where the storage goes
STUDY = """
name: fc
search_space: {space}
{storage}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 1}}
bench: {{suite: quick}}
budget: {{n_trials: 1}}
"""


@pytest.mark.parametrize("folder", ["a%20b", "per%cent", "h#sh", "q?m", "do$llar"])
@pytest.mark.parametrize("storage", ["", "storage: sqlite:///s.db"], ids=["default", "relative"])
def test_the_storage_is_beside_the_study_file(folder, storage, tmp_path, monkeypatch):
    home = tmp_path / folder
    home.mkdir()
    decoded = tmp_path / "a b"  # what SQLAlchemy made of a%20b
    decoded.mkdir()
    study = home / "fc.yaml"
    study.write_text(STUDY.format(space=small_space(tmp_path), storage=storage))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    runner = CliRunner()
    done = runner.invoke(cli, ["study", "run", str(study)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    db = home / ("s.db" if storage else "fc.db")
    assert db.is_file(), sorted(p.name for p in home.iterdir())
    assert not list(decoded.iterdir()) and not list(elsewhere.iterdir())
    status = runner.invoke(cli, ["study", "status", str(study), "-f", "json"], catch_exceptions=False)
    assert status.exit_code == 0 and '"measured": 1' in status.output, status.output
