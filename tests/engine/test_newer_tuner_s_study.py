"""A study a newer tuner stored, met by this one (tuner/engine/stored_forms.py, study.py): one line
that names the version problem and the fix, exit 2, nothing stored.

Every tuner reads what the earlier ones stored (a key added since counts as its default), so a key
of the stored config, space or suite this tuner does not know was stored by a newer one. QA (qa173),
as the tuner of 2026-12-01 met a study this tuner made: `tuner study run` on the study's own file
said 'the study exists with a different config (server.X differs); use a new study name or the
original file' (the file was the original), `--study NAME` said '<stored study config>: server.X:
unknown key; expected one of: ...', and `tuner study confirm` 'the file changed since the study was
created ...; restore the file'. The key is stored here through Optuna, as a newer tuner would."""

import optuna
import pytest
from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.study import CONFIG_ATTR, SPACE_ATTR, create_study

STUDY = """
name: nw
search_space: {space}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 1}}
bench: {{suite: quick}}
budget: {{n_trials: 2}}
"""


@pytest.mark.parametrize("attr, where, shown", [
    (CONFIG_ATTR, ("server",), "config server.gpu_memory_watch"),
    (SPACE_ATTR, (), "search space gpu_memory_watch"),
])
def test_a_study_a_newer_tuner_stored_is_refused_in_one_line_naming_the_upgrade(tmp_path, attr, where, shown):
    from support.faults import ROOT

    path = tmp_path / "nw.yaml"
    path.write_text(STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml"))
    config = load_study(path)
    create_study(config, config.storage)
    study = optuna.load_study(study_name="nw", storage=config.storage)
    stored = study.user_attrs[attr]
    inner = stored
    for key in where:
        inner = inner[key]
    inner["gpu_memory_watch"] = {"enabled": True}  # a key of a newer tuner's schema
    study.set_user_attr(attr, stored)
    before = dict(study.user_attrs), [(t.number, t.state) for t in study.trials]  # the queued seeds

    for args in (["run", str(path)], ["run", "--study", "nw", "--storage", config.storage],
                 ["run", str(path), "--add-trials", "1"], ["confirm", str(path), "--repeats", "2"],
                 ["run", str(path), "--dry-run"]):
        r = CliRunner().invoke(cli, ["study", *args])
        assert r.exit_code == 2, (args, r.output)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, (args, r.stderr)
        assert (f"stored by a newer tuner: its {shown} is unknown to this one; upgrade this tuner"
                in lines[0]), (args, lines)
    again = optuna.load_study(study_name="nw", storage=config.storage)
    # nothing stored, nothing run
    assert (dict(again.user_attrs), [(t.number, t.state) for t in again.trials]) == before
