"""A path on the command line that no file can have -- a name longer than the filesystem's NAME_MAX
(255 bytes), a path longer than PATH_MAX (4096) -- is one line naming the flag, exit 2, nothing
written, in every command that takes a path.

QA: pathlib's exists()/is_file() raise OSError (ENAMETOOLONG) instead of answering, and 13 commands
ended in that traceback: `study status NAME`, `-o` of export, report and compare, `report --png`,
`run --workdir`, `--storage sqlite:///LONG.db` of status and list, `bench --suite`, `sim landscape
--table` and `--space`, `pareto`, `confirm`, `delete`.
"""

import pytest
from click.testing import CliRunner

from support.model_study import SPACE, model_study_yaml
from tuner.cli import cli

LONG = "b" * 300  # one name past NAME_MAX
DEEP = "/".join(["c" * 250] * 20)  # a path past PATH_MAX, each name within NAME_MAX

STUDY = model_study_yaml("lp", "sqlite:///lp.db", 2, noise=0.02, seed=1)

S = ["--storage", "sqlite:///lp.db"]
CASES = {
    "status-name": ["study", "status", LONG],
    "pareto-name": ["study", "pareto", LONG],
    "delete-name": ["study", "delete", LONG, *S, "--yes"],
    "confirm-name": ["study", "confirm", LONG],
    "export-o": ["study", "export", "lp", *S, "-o", LONG + ".yaml"],
    "export-o-deep": ["study", "export", "lp", *S, "-o", DEEP + ".yaml"],
    "report-o": ["study", "report", "lp", *S, "-o", LONG + ".html"],
    "report-png": ["study", "report", "lp", *S, "--png", LONG],
    "compare-o": ["study", "compare", "lp", "lp", *S, "-o", LONG + ".html"],
    "status-storage": ["study", "status", "lp", "--storage", f"sqlite:///{LONG}.db"],
    "list-storage": ["study", "list", "--storage", f"sqlite:///{LONG}.db"],
    "run-workdir": ["study", "run", "lp.yaml", "--workdir", LONG],
    "run-workdir-deep": ["study", "run", "lp.yaml", "--workdir", DEEP],
    "bench-suite": ["bench", "--url", "http://127.0.0.1:1", "--suite", LONG + ".yaml"],
    "landscape-table": ["sim", "landscape", "--space", str(SPACE), "--table", LONG + ".json"],
    "landscape-space": ["sim", "landscape", "--space", LONG + ".yaml", "--table", "t.json"],
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    path = tmp_path_factory.mktemp("longpaths")
    (path / "lp.yaml").write_text(STUDY)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(path)
        done = CliRunner().invoke(cli, ["study", "run", "lp.yaml"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return path


@pytest.mark.parametrize("args", list(CASES.values()), ids=list(CASES))
def test_a_path_no_file_can_have_is_one_line(args, folder, monkeypatch):
    monkeypatch.chdir(folder)
    _refused_in_one_line(args, folder, "File name too long")


def _refused_in_one_line(args, folder, says: str) -> None:
    """``tuner ARGS`` run in ``folder`` exits 2 with one ``error:`` line holding ``says``, no traceback,
    and writes nothing."""
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert says in lines[0], lines[0]
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before


LOOP_CASES = {
    "run-workdir": ["study", "run", "lp.yaml", "--workdir", "loop1"],
    "run-workdir-below": ["study", "run", "lp.yaml", "--workdir", "loop1/sub"],
    "confirm-workdir": ["study", "confirm", "lp.yaml", "--picks", "0", "--workdir", "loop1"],
    "export-o-below": ["study", "export", "lp", *S, "--pick", "knee", "-o", "loop1/best.yaml"],
    "status-storage": ["study", "status", "lp", "--storage", "sqlite:///loop1"],
    "report-png": ["study", "report", "lp", *S, "--png", "loop1/png"],
}


@pytest.mark.parametrize("args", list(LOOP_CASES.values()), ids=list(LOOP_CASES))
def test_a_symlink_loop_is_one_line(args, folder, monkeypatch):
    """QA: `run --workdir LOOP` and `confirm --workdir LOOP` ended in `RuntimeError: Symlink loop`;
    `-o LOOP/x.yaml` said the folder does not exist, `--storage sqlite:///LOOP` that the file does not."""
    monkeypatch.chdir(folder)
    if not (folder / "loop1").is_symlink():
        (folder / "loop1").symlink_to("loop2")
        (folder / "loop2").symlink_to("loop1")
    _refused_in_one_line(args, folder, "(a symlink loop)")


def test_a_workdir_with_no_room_for_its_files_is_one_line(tmp_path, monkeypatch):
    """QA: a --workdir of 4085 bytes (a valid path) passed the checks; the run created the study, then
    stopped at the baseline's log (`cannot write .../baseline/server.log (File name too long); free
    space or fix its permissions`), exit 1."""
    from support.faults import study_file

    study = study_file(tmp_path, "deep", 1, storage="sqlite:///deep.db")
    monkeypatch.chdir(tmp_path)
    deep = str(tmp_path / "/".join(["d" * 200] * 19))
    deep = deep + "/" + "e" * (4085 - len(deep) - 1)
    result = CliRunner().invoke(cli, ["study", "run", str(study), "--workdir", deep])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert "\n" not in line and line.startswith("error: --workdir: ") and "choose a shorter path" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep.yaml"]
