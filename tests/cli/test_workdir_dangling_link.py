"""A workdir that is a symlink to a folder that does not exist (a scratch disk not mounted on this
node, a link left from another machine) is one line naming `workdir` or `--workdir`, exit 2, and
nothing is made at the link's target.

QA: the tuner followed the link and made its target with every missing folder above it
(`/nonexist2/zz` at the root), writing the study's logs there.
"""

import pytest
from click.testing import CliRunner

from support.model_study import model_study_yaml
from tuner.cli import cli

STUDY = model_study_yaml("wl", "sqlite:///wl.db", 1)


CASES = {"create": (["study", "create"], "default"), "run": (["study", "run"], "default"),
         "dry-run": (["study", "run", "--dry-run"], "default"), "run-flag": (["study", "run"], "flag"),
         "dry-run-flag": (["study", "run", "--dry-run"], "flag"),
         "confirm": (["study", "confirm", "--picks", "0"], "default"),
         "confirm-flag": (["study", "confirm", "--picks", "0"], "flag")}


@pytest.mark.parametrize("command, how", list(CASES.values()), ids=list(CASES))
def test_a_dangling_workdir_link_is_refused(command, how, tmp_path, monkeypatch):
    target = tmp_path / "unmounted" / "scratch" / "wl"
    study = tmp_path / "wl.yaml"
    study.write_text(STUDY)
    link = tmp_path / ("wl" if how == "default" else "wd")
    link.symlink_to(target)
    monkeypatch.chdir(tmp_path)
    if "confirm" in command:  # a study to confirm, measured before the link is made
        link.unlink()
        assert CliRunner().invoke(cli, ["study", "run", str(study)]).exit_code == 0
        import shutil

        shutil.rmtree(tmp_path / "wl", ignore_errors=True)
        link.symlink_to(target)
    extra = ["--workdir", str(link)] if how == "flag" else []
    r = CliRunner().invoke(cli, [*command, str(study), *extra])
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert "\n" not in line and "does not exist" in line and str(target) in line, line
    assert ("--workdir: " if how == "flag" else "workdir: ") in line, line
    assert not (tmp_path / "unmounted").exists()
    assert "confirm" in command or not (tmp_path / "wl.db").exists()


def test_a_reader_does_not_mind_a_dangling_workdir_link(tmp_path, monkeypatch):
    study = tmp_path / "wl.yaml"
    study.write_text(STUDY)
    monkeypatch.chdir(tmp_path)
    assert CliRunner().invoke(cli, ["study", "run", str(study)]).exit_code == 0
    import shutil

    shutil.rmtree(tmp_path / "wl")
    (tmp_path / "wl").symlink_to(tmp_path / "unmounted" / "wl")
    r = CliRunner().invoke(cli, ["study", "status", str(study)])
    assert r.exit_code == 0 and not (tmp_path / "unmounted").exists(), r.output
