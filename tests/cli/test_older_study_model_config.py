"""A study an older tuner made on real servers (``server.backend: sglang``), read on a node where its
model folder's ``config.json`` is there but not readable JSON (a download cut short, a file being
copied in). Its readers judge the backend its launches ran with this node's facts
(:func:`tuner.engine.facts.older_study_record`), and the file broke them (QA: `tuner study export`
and `tuner study confirm` both ended `error: study: server.model_path: .../config.json: not a
readable JSON config`, "study" naming no study). Export, which launches nothing, now warns and
judges with the study's stored ``server.facts``, as for a folder it cannot look into (e068044);
confirm, whose servers read that very file at launch, refuses before any launch, naming the study."""

from __future__ import annotations

import json

import optuna
from click.testing import CliRunner
from support.older_study import measured_model_study

from tuner.cli import cli
from tuner.engine.facts import ATTENTION_ATTR
from tuner.engine.study import CONFIG_ATTR


def _older_real_study(tmp_path):
    """A measured study, then stored as an older tuner's real-backend study: no attention decision,
    ``server.backend: sglang`` on a model folder whose config.json is broken, an MLA model stated
    in ``server.facts``. Returns the file, a tree trial's number and the broken file."""
    path, study = measured_model_study(tmp_path)
    broken = tmp_path / "model" / "config.json"
    broken.parent.mkdir()
    broken.write_text('{"architectures": ["DeepseekV3ForCausalLM"], ')  # cut short
    stored = study.user_attrs[CONFIG_ATTR]
    server = {**stored["server"], "backend": "sglang", "model_path": str(broken.parent), "model": None,
              "facts": {"model_attention": "mla"}}
    study.set_user_attr(CONFIG_ATTR, {**stored, "server": server})
    study.set_user_attr(ATTENTION_ATTR, None)
    tree = next(t.number for t in study.trials
                if t.user_attrs.get("status") == "measured" and t.params["speculative_eagle_topk"] > 1)
    return path, tree, broken


def test_export_of_an_older_study_with_a_broken_config_json_warns_and_uses_its_stated_facts(tmp_path):
    path, tree, broken = _older_real_study(tmp_path)
    r = CliRunner().invoke(cli, ["study", "export", "--study", "c", "--storage", f"sqlite:///{tmp_path / 'c.db'}",
                                 "--pick", str(tree), "--format", "json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    said = [line for line in r.stderr.splitlines() if str(broken) in line]
    assert len(said) == 1, r.stderr
    assert said[0].startswith(f"warning: study c: server.model_path: {broken}: not a readable JSON config"), said
    assert "server.facts.model_attention (mla)" in said[0], said
    # the stated MLA model judges the tree: flashinfer (the pin its launches ran) runs chains only
    assert any("mla-tree-backend" in line for line in r.stderr.splitlines()), r.stderr
    assert any(str(broken) in w for w in json.loads(r.stdout)["warnings"])
    r = CliRunner().invoke(cli, ["study", "export", "--study", "c", "--storage", f"sqlite:///{tmp_path / 'c.db'}",
                                 "--adaptive"], catch_exceptions=False)
    assert r.exit_code == 0 and json.loads(r.stdout), r.output
    assert [line for line in r.stderr.splitlines() if str(broken) in line] == said


def test_confirm_of_an_older_study_with_a_broken_config_json_is_refused_naming_the_study(tmp_path):
    path, tree, broken = _older_real_study(tmp_path)
    url = f"sqlite:///{tmp_path / 'c.db'}"
    before = sorted(s.study_name for s in optuna.get_all_study_summaries(url))
    r = CliRunner().invoke(cli, ["study", "confirm", "--study", "c", "--storage", url, "--repeats", "2",
                                 "--workdir", str(tmp_path / "wd")], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: study c: server.model_path: {broken}: "), r.stderr
    assert "repair" in lines[0]
    assert sorted(s.study_name for s in optuna.get_all_study_summaries(url)) == before  # nothing written
    assert not (tmp_path / "wd").exists()
