"""`tuner study confirm` and `export` on a study an older tuner made: a measured setting that this
tuner's rules refuse on the study's servers is not launched again by confirm, and export warns (QA:
an MLA study of the tuner at ceeb9a4, made on its simulator, which ran trees on flashinfer, held
steps=4 topk=4 draft=16 as a pick; confirm launched it every round, and every round failed:
`Currently Flashinfer MLA only supports topk=1`). Said in one line per setting; the others are
confirmed."""

from __future__ import annotations

from click.testing import CliRunner
from support.older_study import measured_model_study

from tuner.cli import cli
from tuner.engine.facts import ATTENTION_ATTR


def _older_study(tmp_path):
    path, study = measured_model_study(tmp_path)
    measured = {t.number: t.params for t in study.trials if t.user_attrs.get("status") == "measured"}
    chain = next(n for n, p in measured.items() if p["speculative_eagle_topk"] == 1)
    tree = next(n for n, p in measured.items() if p["speculative_eagle_topk"] > 1)
    study.set_user_attr(ATTENTION_ATTR, None)  # as made before the decision was stored: flashinfer
    return path, chain, tree


def test_export_of_a_pick_the_rules_now_refuse_warns(tmp_path):
    path, chain, tree = _older_study(tmp_path)
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", str(tree)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    said = [line for line in r.stderr.splitlines() if "rules refuse" in line]
    assert len(said) == 1 and said[0].startswith(f"warning: trial {tree} ") and "mla-tree-backend" in said[0]
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", str(chain)], catch_exceptions=False)
    assert r.exit_code == 0 and "rules refuse" not in r.stderr, r.output


def test_confirm_skips_a_pick_the_rules_now_refuse(tmp_path):
    path, chain, tree = _older_study(tmp_path)
    r = CliRunner().invoke(cli, ["study", "confirm", str(path), "--picks", f"{chain},{tree}", "--repeats", "2"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    said = [line for line in r.stderr.splitlines() if f"trial {tree} " in line]
    assert len(said) == 1 and said[0].startswith("warning: ") and "mla-tree-backend" in said[0], r.stderr
    assert f"confirming 1 setting (trial {chain})" in r.stderr  # one, in the singular
    assert "failed" not in r.stderr
