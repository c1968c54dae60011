"""`tuner study init FILE [--backend ...]`: a starter study for a tuner installed without a checkout.
The starters are the checkout's studies/*.yaml, shipped in the package byte for byte; the written
file is one with its name set, loads from any folder, and runs as written (sim, model). An existing
FILE, a name that is no study name or a missing folder is one line, exit 2, nothing written."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.files import write_new_file
from tuner.config.starters import STARTERS, STUDIES_DIR, starter_path
from tuner.config.study import load_study

ROOT = Path(__file__).resolve().parents[2]


def init(*args: str):
    return CliRunner().invoke(cli, ["study", "init", *args])


def test_every_starter_is_the_checkouts_study_byte_for_byte():
    # one text in two places: the README runs studies/sim-demo.yaml, `init` writes the shipped one
    assert sorted(p.name for p in STUDIES_DIR.glob("*.yaml")) == sorted(f"{s}.yaml" for s in STARTERS.values())
    for backend in STARTERS:
        shipped = starter_path(backend)
        assert shipped.read_bytes() == (ROOT / "studies" / shipped.name).read_bytes(), shipped.name
        data = yaml.safe_load(shipped.read_text())
        assert data["server"]["backend"] == backend and data["search_space"] == "eagle3"
        assert len(re.findall(r"^name: ", shipped.read_text(), re.M)) == 1


@pytest.mark.parametrize("backend", list(STARTERS))
def test_init_writes_the_starter_named_after_the_file_and_it_loads_anywhere(tmp_path, monkeypatch, backend):
    monkeypatch.chdir(tmp_path)
    r = init("my-study.yaml", "--backend", backend)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("wrote my-study.yaml: study my-study ") and "next: " in r.stdout
    written = (tmp_path / "my-study.yaml").read_text()
    shipped = starter_path(backend).read_text()
    assert written == re.sub(r"^name: .*$", "name: my-study", shipped, count=1, flags=re.M)  # comments kept
    assert [p.name for p in tmp_path.iterdir()] == ["my-study.yaml"]
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)
    config = load_study(tmp_path / "my-study.yaml")
    assert config.name == "my-study" and config.search_space == "eagle3"
    assert config.server.backend == backend


def test_init_defaults_to_the_sim_demo_and_takes_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert init("a.yaml").exit_code == 0
    assert yaml.safe_load((tmp_path / "a.yaml").read_text())["server"]["backend"] == "sim"
    r = init("b.yaml", "--name", "123")  # a name YAML would read as a number is quoted
    assert r.exit_code == 0, r.output
    assert load_study(tmp_path / "b.yaml").name == "123"
    assert init("noext", "--backend", "model", "--name", "other").exit_code == 0
    assert load_study(tmp_path / "noext").name == "other"


def _refused(tmp_path: Path, r, says: str, before: dict[str, bytes]) -> None:
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], r.stderr
    assert r.stdout == ""
    after = {p.name: (p.read_bytes() if p.is_file() else b"") for p in tmp_path.iterdir()}
    assert after == before  # nothing written, nothing changed


def test_an_existing_file_is_never_overwritten(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.yaml").write_text("name: mine\n# my notes\n")
    os.symlink(tmp_path / "nowhere.yaml", tmp_path / "link.yaml")  # a dangling link: not written through
    (tmp_path / "dir.yaml").mkdir()
    before = {"mine.yaml": b"name: mine\n# my notes\n", "link.yaml": b"", "dir.yaml": b""}
    for name in ("mine.yaml", "link.yaml", "dir.yaml"):
        r = init(name, "--backend", "model")
        _refused(tmp_path, r, f"error: {name}: exists; nothing was written (init never overwrites a file)", before)
    assert not (tmp_path / "nowhere.yaml").exists()


@pytest.mark.parametrize("args, says", [
    (["my demo.yaml"], "error: my demo.yaml: name: the study is named after the file: 'my demo' is not a "
                       "study name"),
    (["x.baseline.yaml"], "x.baseline.yaml: name: the study is named after the file: names may not end in "
                          "'.baseline'"),
    (["ok.yaml", "--name", "bad name"], "error: --name: bad name: 'bad name' is not a study name"),
    (["no/such/folder.yaml"], "error: FILE: no/such/folder.yaml: folder no/such does not exist; create it first"),
    (["ok.yaml", "--backend", "gpu"], "error: Invalid value for '--backend': 'gpu' is not one of 'sim', "
                                      "'model', 'sglang'"),
    # QA: written, then `tuner study run demo` (the next line it printed) refused the file as its own workdir
    (["demo"], "error: demo: study demo keeps its trials in the folder demo/ beside its file, which would be "
               "this file itself; name the file demo.yaml (or give --name NAME)"),
    (["demo.txt", "--backend", "model"], "error: demo.txt: study demo.txt keeps its trials in the folder "
                                         "demo.txt/ beside its file"),
    (["x.yml", "--name", "x.yml"], "error: x.yml: study x.yml keeps its trials in the folder x.yml/"),
])
def test_bad_input_is_one_line_exit_2_nothing_written(tmp_path, monkeypatch, args, says):
    monkeypatch.chdir(tmp_path)
    _refused(tmp_path, init(*args), says, {})


def test_the_write_never_replaces_a_file_made_after_the_check(tmp_path):
    # init checks first, then writes with write_new_file: a file made in between is kept, not replaced
    target = tmp_path / "late.yaml"
    target.write_text("theirs\n")
    with pytest.raises(FileExistsError):
        write_new_file(target, "ours\n")
    assert target.read_text() == "theirs\n" and [p.name for p in tmp_path.iterdir()] == ["late.yaml"]
    assert write_new_file(tmp_path / "new.yaml", "ours\n").read_text() == "ours\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["late.yaml", "new.yaml"]  # no temporary file left
