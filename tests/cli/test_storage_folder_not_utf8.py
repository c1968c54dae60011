"""A study file in a folder whose name is not text in the file-system encoding (Latin-1 bytes on a
UTF-8 machine; any non-ASCII name under ``LC_ALL=C PYTHONUTF8=0``): its SQLite storage beside it
cannot be written as a URL SQLAlchemy renders (UTF-8, which refuses PEP 383's lone surrogates).

QA (qa157): every command said ``'sqlite:////.../\\udce9tudes/demo.db' is no storage URL: its port is
not digits (HOST:5432)``, a port nobody wrote. Now the line names the folder's encoding and the fixes;
a storage elsewhere (``--storage``) runs the study from that folder.
"""

import os
import sys

import pytest
from click.testing import CliRunner

from support.model_study import one_launch_study
from tuner.cli import cli
from tuner.engine.urls import scheme_problem

STUDY = one_launch_study("fc")


@pytest.fixture
def latin1_folder(tmp_path, monkeypatch):
    folder = os.path.join(os.fsencode(tmp_path), b"\xe9tudes")  # Latin-1's é: not UTF-8
    os.mkdir(folder)
    folder = os.fsdecode(folder)  # '...\udce9tudes'
    with open(os.path.join(folder, "fc.yaml"), "w", encoding="utf-8") as f:
        f.write(STUDY)
    monkeypatch.chdir(folder)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    return folder


@pytest.mark.parametrize("command", [["run"], ["create"], ["status"]])
def test_the_storage_beside_it_is_one_line_naming_the_cause(latin1_folder, command):
    done = CliRunner().invoke(cli, ["study", *command, "fc.yaml"], catch_exceptions=False)
    assert done.exit_code == 2, done.output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "port" not in lines[0]
    assert "not utf-8 text" in lines[0] and "rename that folder" in lines[0] and "--storage" in lines[0]
    assert sorted(os.listdir(latin1_folder)) == ["fc.yaml"]  # nothing written


def test_a_storage_elsewhere_runs_it(latin1_folder, tmp_path):
    db = tmp_path / "elsewhere.db"
    done = CliRunner().invoke(cli, ["study", "run", "fc.yaml", "--storage", f"sqlite:///{db}"],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert db.is_file()


def test_under_an_ascii_locale_the_fix_is_a_utf8_locale(monkeypatch):
    monkeypatch.setattr(sys, "getfilesystemencoding", lambda: "ascii")
    problem = scheme_problem("sqlite:////data/\udcc3\udca9tudes/fc.db")
    assert "not ascii text" in problem and "LC_ALL=C.UTF-8" in problem, problem
