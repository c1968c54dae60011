"""An option given an empty value (`--storage "$URL"` with the variable unset) is refused in one line
naming the option, exit 2, nothing written; never taken as the option left out, nor a traceback.

QA: `tuner study status --study s --storage ''` (and pareto, export, report, confirm --show, delete,
run) ended in AttributeError; with a study file, `--storage ''` silently used the file's storage,
`copy --to-storage ''` copied into the source's storage and `compare --storage-b ''` read B from A's."""

import shutil

import pytest
from click.testing import CliRunner
from support.model_study import make_model_study

from tuner.cli import cli


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """A study measured twice through the performance model, made once; each test gets a copy."""
    folder = tmp_path_factory.mktemp("study")
    make_model_study(folder, "s", n_trials=2)
    return folder


def study_copy(measured, tmp_path):
    shutil.copytree(measured, tmp_path, dirs_exist_ok=True)
    return tmp_path / "s.yaml"


def snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def one_error_line(result, flag: str) -> str:
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith(f"error: {flag}: "), result.output
    return lines[0]


def refused_line(argv, flag: str, measured, tmp_path, monkeypatch) -> str:
    """Run ``argv`` ({file}: a copy of the measured study's file, {tmp}: the test's folder) in a
    copy of the measured study; its one error line, after checking that nothing was written."""
    path = study_copy(measured, tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    before = snapshot(tmp_path)
    args = [a.replace("{file}", str(path)).replace("{tmp}", str(tmp_path)) for a in argv]
    line = one_error_line(CliRunner().invoke(cli, args, catch_exceptions=False), flag)
    assert snapshot(tmp_path) == before, "something was written"
    return line


STORAGE_COMMANDS = [
    ["study", "status", "--study", "s", "--storage", ""],
    ["study", "status", "{file}", "--storage", ""],
    ["study", "pareto", "--study", "s", "--storage", ""],
    ["study", "export", "--study", "s", "--storage", "", "--pick", "knee", "-o", "{tmp}/best.yaml"],
    ["study", "report", "{file}", "--storage", "", "-o", "{tmp}/r.html"],
    ["study", "confirm", "--study", "s", "--storage", "", "--show"],
    ["study", "delete", "--study", "s", "--storage", "", "--yes"],
    ["study", "create", "{file}", "--storage", ""],
    ["study", "run", "--study", "s", "--storage", ""],
    ["study", "run", "{file}", "--storage", ""],
    ["study", "copy", "{file}", "s2", "--to-storage", ""],
    ["study", "compare", "{file}", "s", "--storage-b", ""],
]


@pytest.mark.parametrize("argv", STORAGE_COMMANDS, ids=lambda a: " ".join(a[1:2] + [x for x in a if x.startswith("--")]))
def test_an_empty_storage_url_is_refused_naming_the_flag(argv, measured, tmp_path, monkeypatch):
    flag = next(a for a in argv if a.startswith("--") and "storage" in a)
    assert "'' is not a storage URL" in refused_line(argv, flag, measured, tmp_path, monkeypatch)


EMPTY_VALUES = [
    (["study", "run", "{file}", "--timeout", ""], "--timeout"),
    (["study", "run", "{file}", "--workdir", ""], "--workdir"),
    (["study", "confirm", "{file}", "--workdir", ""], "--workdir"),
    (["study", "report", "{file}", "-o", ""], "-o"),
    (["study", "report", "{file}", "-o", "{tmp}/r.html", "--png", ""], "--png"),
    (["study", "compare", "{file}", "{file}", "-o", ""], "-o"),
    (["study", "export", "{file}", "--pick", "knee", "-o", "{tmp}/best.yaml", "--adaptive-out", ""], "--adaptive-out"),
    # blank is empty too: a file or folder named " " is no one's intent
    (["study", "report", "{file}", "-o", " "], "-o"),
    (["study", "confirm", "{file}", "--workdir", "  "], "--workdir"),
    # QA: `error: no server answering at  (InvalidUrlClientError: /server_info)`, naming no flag
    (["bench", "--url", "", "--suite", "seed"], "--url"),
]


@pytest.mark.parametrize("argv,flag", EMPTY_VALUES, ids=lambda a: a if isinstance(a, str) else a[1])
def test_an_empty_value_is_not_the_option_left_out(argv, flag, measured, tmp_path, monkeypatch):
    """QA: `run --timeout ''` ran with no time bound, `--workdir ''` in the study's workdir,
    `report -o ''` wrote s-report.html, `--png ''` the charts into the working folder, `compare
    -o ''` printed and wrote no page, `export --adaptive-out ''` wrote no policy; each exit 0."""
    line = refused_line(argv, flag, measured, tmp_path, monkeypatch)
    assert "is empty" in line or "got ''" in line, line
