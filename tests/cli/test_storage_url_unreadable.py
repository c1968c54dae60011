"""A storage URL SQLAlchemy cannot read -- a port that is not digits (``host:5432x``, an IPv6 ``[::1``
left open), a text its parser refuses -- or a port outside 1-65535 is one line naming where the URL
came from (``--storage``, the study file's ``storage``, ``$TUNER_STORAGE``) and what is expected,
exit 2, nothing written, the password never shown (not even a ``?password=`` of a URL that does not
parse). QA: the non-digit port was a Python traceback from every command, exit 1 (SQLAlchemy's
``int()`` of the port, inside ``make_url``); an unreadable URL and a port past 65535 said "run it
again once the storage answers", the advice for an outage, the first one showing its
``?password=``; ``tuner doctor`` too was a traceback."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data, model_study_here

from tuner.cli import cli

#: url -> words the line says of it
BAD = {"postgresql://u:s3cret@127.0.0.1:5432x/db": "its port is not digits",
       "postgresql://u:s3cret@[::1/db": "its port is not digits",
       "postgres ql://127.0.0.1/db?password=s3cret": "SQLAlchemy cannot read it",
       "postgresql://u:s3cret@127.0.0.1:70000/db": "port 70000 is no TCP port",
       "postgresql://u:s3cret@127.0.0.1:0/db": "port 0 is no TCP port"}
COMMANDS = [["study", "create", "{s}"], ["study", "run", "{s}"], ["study", "run", "--study", "s"],
            ["study", "status", "s"], ["study", "list"], ["study", "pareto", "s"],
            ["study", "export", "s", "--pick", "knee", "-o", "best.yaml"], ["study", "delete", "s", "--yes"],
            ["study", "copy", "s", "t"], ["study", "compare", "s", "t"]]


@pytest.fixture
def study(tmp_path, monkeypatch):
    return model_study_here(tmp_path, monkeypatch)


def _check(r, study, where, says):
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith(f"error: {where}") and says in lines[0], lines[0]
    assert "expected sqlite:///PATH or postgresql://USER@HOST/DB" in lines[0] or "1 to 65535" in lines[0], lines[0]
    assert "s3cret" not in r.output
    assert sorted(os.listdir(study.parent)) == ["s.yaml"]


@pytest.mark.parametrize("url", BAD)
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_storage_flag(study, url, args):
    r = CliRunner().invoke(cli, [a.format(s=study) for a in args] + ["--storage", url], catch_exceptions=False)
    _check(r, study, "--storage: ", BAD[url])


@pytest.mark.parametrize("url", BAD)
def test_tuner_storage_variable(study, monkeypatch, url):
    monkeypatch.setenv("TUNER_STORAGE", url)
    r = CliRunner().invoke(cli, ["study", "status", "s"], catch_exceptions=False)
    _check(r, study, "$TUNER_STORAGE: ", BAD[url])


@pytest.mark.parametrize("url", BAD)
@pytest.mark.parametrize("command", ["create", "run"])
def test_study_file_key(study, url, command):
    study.write_text(yaml.safe_dump({**model_study_data("s"), "storage": url}))
    r = CliRunner().invoke(cli, ["study", command, str(study)], catch_exceptions=False)
    _check(r, study, f"{study}: storage: ", BAD[url])


@pytest.mark.parametrize("url", BAD)
def test_doctor_fails_in_one_line(study, url):
    study.write_text(yaml.safe_dump({**model_study_data("s"), "storage": url}))
    r = CliRunner().invoke(cli, ["doctor", str(study)], catch_exceptions=False)
    assert r.exit_code == 1, r.output
    assert r.output.strip().splitlines() == [r.output.strip()] and r.output.startswith("fail  storage: "), r.output
    assert BAD[url] in r.output and "s3cret" not in r.output
    assert sorted(os.listdir(study.parent)) == ["s.yaml"]


@pytest.mark.parametrize("url", ["", "nothing-here"])
def test_a_flag_that_is_no_url_names_the_flag_once(study, url):
    # QA: "error: --storage: storage: '' is not a storage URL" named the flag, then a key it has not
    r = CliRunner().invoke(cli, ["study", "status", "s", "--storage", url], catch_exceptions=False)
    assert r.exit_code == 2 and r.output.startswith(f"error: --storage: {url!r} is not a storage URL"), r.output
