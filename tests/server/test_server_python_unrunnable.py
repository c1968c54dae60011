"""A ``server.python`` that cannot run: one line naming the study file, ``server.python`` and the
fix, a non-zero exit, nothing written. QA (qa110): ``tuner launch`` never checked it (study run's
check is preflight's), so a folder, a broken venv symlink or a name not on ``PATH`` wrote the
launch's log folder and line, then said ``error: study: server.python: cannot run '...': Permission
denied`` (the file unnamed, no fix); and a script whose ``#!`` interpreter is missing passed both
commands' checks: ``tuner study run`` wrote the study, then failed the baseline with "No such file
or directory" for a file that exists. The launcher checks the program itself too, before the GPU lock
and the log (:mod:`tuner.server.interpreter`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.yamlfile import ConfigError
from tuner.server.launcher import ServerProcess

ROOT = Path(__file__).resolve().parents[2]


def _unrunnable(tmp: Path, kind: str) -> tuple[str, str]:
    """A ``server.python`` of ``kind``, and what the line must say of it."""
    if kind == "folder":
        (tmp / "venv").mkdir()
        return str(tmp / "venv"), "does not exist or is not a file"
    if kind == "broken_symlink":  # a venv whose base Python was removed
        (tmp / "python3").symlink_to(tmp / "gone" / "python3.11")
        return str(tmp / "python3"), f"is a broken symlink (to {tmp / 'gone' / 'python3.11'}"
    if kind == "not_on_path":
        return "python-not-on-this-path", "'python-not-on-this-path' is not on PATH"
    script = tmp / "python-wrapper"
    if kind == "env_missing_interpreter":  # a wrapper for a Python this node does not have
        script.write_text("#!/usr/bin/env python3-not-on-this-path\n")
        script.chmod(0o755)
        return str(script), "#! line runs 'python3-not-on-this-path' through env, which is not on PATH"
    script.write_text(f"#!{tmp / 'gone' / 'python'} -u\n")  # kind == "missing_interpreter"
    script.chmod(0o755)
    return str(script), f"is a script whose #! line names {tmp / 'gone' / 'python'}, which is not an"


KINDS = ["folder", "broken_symlink", "not_on_path", "missing_interpreter", "env_missing_interpreter"]


def _study(tmp_path: Path, python: str) -> Path:
    study = {"name": "t", "search_space": str(ROOT / "search_spaces" / "eagle3.yaml"),
             "server": {"backend": "sim", "python": python, "model_path": "org/model",
                        "draft_model_path": "org/draft"},
             "bench": {"suite": "quick"}, "storage": f"sqlite:///{tmp_path / 't.db'}",
             "workdir": str(tmp_path / "t")}
    path = tmp_path / "study.yaml"
    path.write_text(json.dumps(study))
    return path


@pytest.mark.parametrize("kind", KINDS)
def test_the_launcher_refuses_a_program_that_cannot_run_before_it_writes(tmp_path, monkeypatch, kind):
    monkeypatch.setenv("TUNER_GPU_LOCK_DIR", str(tmp_path / "locks"))
    python, said = _unrunnable(tmp_path, kind)
    srv = ServerProcess.from_argv([python, "-m", "sglang.launch_server", "--port", "30000"],
                                  host="127.0.0.1", port=30000, log_path=tmp_path / "launch" / "server.log",
                                  workdir=tmp_path / "w", backend="sglang")
    with pytest.raises(ConfigError) as err:
        srv.start()
    assert err.value.key == "server.python" and said in err.value.message, err.value
    assert srv.proc is None
    # nothing written: no log (nor its folder), no record, no GPU lock file
    assert not (tmp_path / "launch").exists() and not (tmp_path / "w").exists()
    assert not (tmp_path / "locks").exists() or not os.listdir(tmp_path / "locks")


@pytest.mark.parametrize("command", ["launch", "run"])
@pytest.mark.parametrize("kind", KINDS)
def test_launch_and_run_name_the_file_and_write_nothing(tmp_path, monkeypatch, kind, command):
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    monkeypatch.chdir(tmp_path)
    python, said = _unrunnable(tmp_path, kind)
    study = _study(tmp_path, python)
    args = ["launch", str(study), "--baseline"] if command == "launch" else ["study", "run", str(study)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    line, = r.stderr.splitlines()
    assert line.startswith(f"error: {study}: server.python: ") and said in line, line
    if command == "launch":  # --print still shows the command: it starts nothing
        shown = CliRunner().invoke(cli, ["launch", str(study), "--baseline", "--print"])
        assert shown.exit_code == 0 and shown.stdout.startswith(python), shown.output
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["study.yaml"] + [p for p in ("venv", "python3", "python-wrapper") if (tmp_path / p).is_symlink()
                          or (tmp_path / p).exists()])
