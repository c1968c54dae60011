"""`tuner launch` (and `study run --dry-run`) from the file of a study an older tuner made, which
stored no attention decision (before 2026-12-01): the command is the one its trials ran, the
launcher's pin flashinfer, not the backend this tuner would choose for a new study (QA: `--print`
said fa3, every trial ran flashinfer)."""

import optuna
from click.testing import CliRunner
from support.older_study import OLDER_STUDY

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.facts import ATTENTION_ATTR
from tuner.engine.study import create_study

STUDY = OLDER_STUDY


def _launch_print(path) -> str:
    r = CliRunner().invoke(cli, ["launch", str(path), "--print", "--port", "31234", "--num-steps", "3",
                                 "--topk", "1", "--draft-tokens", "4"])
    assert r.exit_code == 0, r.output
    return r.stdout


def test_launch_of_an_older_study_runs_the_backend_its_trials_ran(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(STUDY)
    config = load_study(path)
    study = create_study(config, config.storage)
    assert "--attention-backend fa3" in _launch_print(path)  # this tuner's study: its stored decision
    optuna.load_study(study_name="old", storage=config.storage).set_user_attr(ATTENTION_ATTR, None)
    assert study.study_name == "old"
    out = _launch_print(path)
    assert "--attention-backend flashinfer" in out and "fa3" not in out


def _older_dry_run(tmp_path):
    """``study run --dry-run`` on the file of a study created here, then stripped of its attention
    decision as an older tuner stored it."""
    path = tmp_path / "old.yaml"
    path.write_text(STUDY)
    config = load_study(path)
    create_study(config, config.storage)
    optuna.load_study(study_name="old", storage=config.storage).set_user_attr(ATTENTION_ATTR, None)
    r = CliRunner().invoke(cli, ["study", "run", str(path), "--dry-run"])
    assert r.exit_code == 0, r.output
    return r


def test_a_dry_run_of_an_older_study_shows_the_backend_its_trials_ran(tmp_path):
    r = _older_dry_run(tmp_path)
    assert "# attention backend flashinfer (pinned" in r.stdout and "fa3" not in r.stdout


def test_a_dry_run_shows_no_command_for_a_seed_the_rules_refuse(tmp_path):
    """An older MLA study keeps its trees in the space (its trials were asked with them), and its
    backend, flashinfer, runs chains only: a run stores the tree seeds invalid and never launches
    them. The dry run, 'what a run would launch', printed their server commands beneath its own line
    'chains only (topk 1)'; it now says each is refused, with no command."""
    r = _older_dry_run(tmp_path)
    lines = r.stdout.splitlines()
    refused = "# seed trial steps=2 topk=4 draft=8: not launched, the rules refuse it (mla-tree-backend)"
    assert refused in lines
    commands = [line for line in lines if not line.startswith("#")]
    assert len(commands) == 2 and not any("--speculative-eagle-topk 4" in c for c in commands), commands


def test_doctor_of_an_older_study_judges_the_backend_its_trials_ran(tmp_path):
    """`tuner doctor` judged the study with this node's decision for a new study (QA: `model and GPU:
    ... attention backend fa3 (pinned; runs trees)` for an older study whose every launch ran
    flashinfer, chains only); it now says the backend `launch` and `run` use, and samples
    SGLang's argument check with it."""
    path = tmp_path / "old.yaml"
    path.write_text(STUDY)
    config = load_study(path)
    create_study(config, config.storage)

    def facts_line() -> str:
        r = CliRunner().invoke(cli, ["doctor", str(path)])
        assert r.exit_code == 0, r.output
        return next(line for line in r.stdout.splitlines() if "model and GPU:" in line)

    assert "attention backend fa3 (pinned; runs trees)" in facts_line()  # this tuner's study: its decision
    optuna.load_study(study_name="old", storage=config.storage).set_user_attr(ATTENTION_ATTR, None)
    line = facts_line()
    assert "attention backend flashinfer (pinned; chains only (topk 1))" in line and "fa3" not in line, line


def test_doctor_fails_a_node_that_would_run_another_backend_than_the_study(tmp_path):
    """What `study run` refuses on this node (every worker launches the study's one backend) is a
    failing doctor line, with run's words, before the night (doctor compared nothing with the
    stored study, and passed)."""
    path = tmp_path / "old.yaml"
    path.write_text(STUDY)
    config = load_study(path)
    create_study(config, config.storage)
    study = optuna.load_study(study_name="old", storage=config.storage)
    study.set_user_attr(ATTENTION_ATTR, {**study.user_attrs[ATTENTION_ATTR], "backend": "triton"})
    r = CliRunner().invoke(cli, ["doctor", str(path)])
    assert r.exit_code == 1, r.output
    line = next(line for line in r.stdout.splitlines() if "stored study:" in line)
    assert line.startswith("fail") and "this node would run attention backend fa3" in line, line
    assert "but the study runs triton" in line, line
