"""`tuner study confirm` and `export` on a study an older tuner made: a measured setting that this
tuner's rules refuse on the study's servers is not launched again by confirm, and export warns (QA:
an MLA study of the tuner at ceeb9a4, made on its simulator, which ran trees on flashinfer, held
steps=4 topk=4 draft=16 as a pick; confirm launched it every round, and every round failed:
`Currently Flashinfer MLA only supports topk=1`). Said in one line per setting; the others are
confirmed."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner
from support.older_study import measured_model_study
from support.prepared_once import prepared_once

from tuner.cli import cli
from tuner.engine.facts import ATTENTION_ATTR


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """Study ``c`` measured once per session (whichever xdist worker asks first); the tests copy it."""
    return prepared_once(tmp_path_factory, "older", measured_model_study)


def _older_study(measured, tmp_path):
    """Each test's own copy of study ``c``, made as an older tuner made it (no attention decision)."""
    import optuna

    shutil.copytree(measured, tmp_path, dirs_exist_ok=True)
    path, study = tmp_path / "c.yaml", optuna.load_study(study_name="c", storage=f"sqlite:///{tmp_path / 'c.db'}")
    measured = {t.number: t.params for t in study.trials if t.user_attrs.get("status") == "measured"}
    chain = next(n for n, p in measured.items() if p["speculative_eagle_topk"] == 1)
    tree = next(n for n, p in measured.items() if p["speculative_eagle_topk"] > 1)
    study.set_user_attr(ATTENTION_ATTR, None)  # as made before the decision was stored: flashinfer
    return path, chain, tree


def test_export_of_a_pick_the_rules_now_refuse_warns(measured, tmp_path):
    path, chain, tree = _older_study(measured, tmp_path)
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", str(tree)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    said = [line for line in r.stderr.splitlines() if "rules refuse" in line]
    assert len(said) == 1 and said[0].startswith(f"warning: trial {tree} ") and "mla-tree-backend" in said[0]
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", str(chain)], catch_exceptions=False)
    assert r.exit_code == 0 and "rules refuse" not in r.stderr, r.output


def test_confirm_skips_a_pick_the_rules_now_refuse(measured, tmp_path):
    path, chain, tree = _older_study(measured, tmp_path)
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--picks", f"{chain},{tree}", "--repeats", "2"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    said = [line for line in r.stderr.splitlines() if f"trial {tree} " in line]
    assert len(said) == 1 and said[0].startswith("warning: ") and "mla-tree-backend" in said[0], r.stderr
    assert f"confirming 1 setting (trial {chain})" in r.stderr  # one, in the singular
    assert "failed" not in r.stderr
