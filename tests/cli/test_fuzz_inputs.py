"""A property-based fuzz (hypothesis) of every file and flag a user hands the tuner, against one
contract: bad input is ONE line on stderr (``error: ...``, no traceback, no "Error:" twice) naming
the file or the flag, a non-zero exit, and nothing written (no storage, workdir, journal, table or
partial output, in the input folder or the working one); good input -- the shipped examples these
mutations start from -- is accepted.

Each example starts from a shipped valid file (the demo studies, ``search_spaces/eagle3.yaml``, the
shipped suites and datasets, a table written by ``tuner sim landscape --table``) and changes one
thing: a key dropped, an unknown key added, a value of another type or out of range (NaN, infinity,
-0, huge, negative, empty, control and non-ASCII text, a lone surrogate, very long text), or the
file's bytes (empty, a BOM, not UTF-8, tabs, a key twice, YAML anchors and a billion laughs, a NUL,
CRLF, a folder where the file goes). The commands are driven in process (click's CliRunner);
``test_worst_finds_through_the_real_command`` runs the finds of this fuzz as real subprocesses.

Deterministic in CI: ``derandomize=True`` (the examples are a function of the test), no example
database, few examples. What it found is pinned in ``tests/cli/test_fuzz_finds.py``."""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "tuner" / "config"


def fuzz(examples: int) -> settings:
    """Deterministic (the same examples every run), no example database, no deadline (a loaded CI
    machine), few examples."""
    return settings(derandomize=True, max_examples=examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


#: Values of every kind a hand-edited or generated file may hold where another is expected.
ODD = [None, True, False, 0, 1, -1, -0.0, 0.5, 10 ** 9, 2 ** 64, 10 ** 30, -(10 ** 30), 1e308, float("nan"),
       float("inf"), float("-inf"), "", " ", "x", "-1", "1e3", "1:30", "yes", "~", "/", ".", "..", "$HOME",
       "é✓\u202e中", "a\tb", "a\nb", "\x00", "\x1b[31m", "\ud800", "x" * 5000, [], [1], ["a", None], {}, {"a": 1}]
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))
#: A folder in place of the file (None), or its bytes changed.
BYTES = ["empty", "bom", "not utf-8", "tabs", "key twice", "anchor", "billion laughs", "half", "crlf", "nul",
         "comment only", "a scalar", "a list", "folder"]


def shipped_yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def study(name: str) -> dict:
    """A shipped study, its search space and suite files beside it (``space.yaml``, ``suite.yaml``)."""
    data = shipped_yaml(ROOT / "studies" / f"{name}.yaml")
    data["search_space"] = "space.yaml"
    data["bench"] = {**data["bench"], "suite": "suite.yaml"}
    if name == "model-demo":
        data["server"] = {**data["server"], "model": {"landscape": "table.json", "noise": 0.02, "seed": 1}}
    return data


def suite(name: str) -> dict:
    data = shipped_yaml(CONFIG / "suites" / f"{name}.yaml")
    if "dataset" in data:
        data["dataset"] = {**data["dataset"], "path": Path(data["dataset"]["path"]).name}
    return data


@functools.cache
def landscape_table() -> str:
    """A table as ``tuner sim landscape --table`` writes it (the shipped space's settings, the seed suite)."""
    with tempfile.TemporaryDirectory() as tmp:
        r = CliRunner().invoke(cli, ["sim", "landscape", "--table", f"{tmp}/t.json"])
        assert r.exit_code == 0, r.output
        return Path(tmp, "t.json").read_text()


DATASETS = {name: (CONFIG / "datasets" / name).read_text() for name in ("mixed.jsonl", "sharegpt-mini.json")}


def files_for(study_name: str, suite_name: str) -> dict[str, object]:
    """Every file of one valid study, by name in its folder."""
    return {"study.yaml": study(study_name), "space.yaml": shipped_yaml(ROOT / "search_spaces" / "eagle3.yaml"),
            "suite.yaml": suite(suite_name), "table.json": landscape_table(), **DATASETS}


def paths(tree, prefix=()) -> list[tuple]:
    out = [prefix]
    if isinstance(tree, dict):
        for k, v in tree.items():
            out += paths(v, (*prefix, k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            out += paths(v, (*prefix, i))
    return out


@st.composite
def changed_tree(draw, tree):
    """``tree`` with one key dropped, one value replaced or one unknown key (or item) added."""
    tree = copy.deepcopy(tree)
    where = draw(st.sampled_from(paths(tree)))
    op = draw(st.sampled_from(["drop", "set", "add"] if where else ["set", "add"]))
    value = draw(st.sampled_from(ODD))
    if not where:
        return value if op == "set" else ({**tree, "zz_unknown": value} if isinstance(tree, dict) else tree)
    parent = tree
    for step in where[:-1]:
        parent = parent[step]
    target = parent[where[-1]]
    if op == "drop":
        del parent[where[-1]]
    elif op == "add" and isinstance(target, dict):
        target["zz_unknown"] = value
    elif op == "add" and isinstance(target, list):
        target.append(value)
    else:
        parent[where[-1]] = value
    return tree


def changed_bytes(text: str, how: str) -> str | bytes | None:
    first_key = next((ln for ln in text.splitlines(keepends=True) if ln[:1].isalpha()), "x: 1\n")
    return {"empty": "", "bom": "\ufeff" + text, "not utf-8": text.encode()[:40] + b"\xff\xfe" + text.encode()[40:],
            "tabs": text.replace("  ", "\t"), "key twice": text + first_key, "anchor": "x-a: &a 1\n" + text + "zz: *a\n",
            "billion laughs": ALIAS_BOMB, "half": text[: len(text) // 2], "crlf": text.replace("\n", "\r\n"),
            "nul": text[:20] + "\x00" + text[20:], "comment only": "# nothing\n", "a scalar": "42\n",
            "a list": "- a\n- b\n", "folder": None}[how]


def text_of(name: str, content) -> str:
    if isinstance(content, str):
        return content
    if name.endswith(".yaml"):
        return yaml.safe_dump(content, sort_keys=False, width=1 << 20)
    if name.endswith(".jsonl"):
        return "".join(json.dumps(row) + "\n" for row in content)
    return json.dumps(content)


def tree_of(name: str, text: str):
    if name.endswith(".yaml"):
        return yaml.safe_load(text)
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    return json.loads(text)


def snapshot(folder: Path) -> list:
    return sorted((str(p.relative_to(folder)), p.is_dir() or p.stat().st_size) for p in folder.rglob("*"))


def write_folder(folder: Path, files: dict) -> None:
    for name, content in files.items():
        path = folder / name
        if content is None:
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(text_of(name, content), encoding="utf-8", errors="surrogatepass")


def holds_the_contract(args: list[str], files: dict, names: list[str]) -> tuple[int, str]:
    """Run ``tuner ARGS`` (``{dir}`` in them is the input folder) from another folder; assert the
    contract on a refusal; return (exit code, stderr)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder, cwd = Path(tmp, "in"), Path(tmp, "cwd")
        folder.mkdir()
        cwd.mkdir()
        write_folder(folder, files)
        before = snapshot(folder)
        old = os.getcwd()
        os.chdir(cwd)
        try:
            r = CliRunner().invoke(cli, [a.replace("{dir}", str(folder)) for a in args])
        finally:
            os.chdir(old)
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            raise r.exception  # its traceback is the finding
        if r.exit_code != 0:
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1, r.stderr
            line = lines[0]
            assert line.startswith("error: ") and "error:" not in line[7:].lower().replace("clienterror", ""), line
            assert "Traceback" not in r.output and r.stdout == "", r.output
            assert any(name in line for name in names), line  # the file (or the flag) is named
            assert snapshot(folder) == before and not any(cwd.iterdir()), line  # nothing written
        return r.exit_code, r.stderr


STUDIES = ["sim-demo", "sim-traffic", "kimi-k2.6-tp8", "model-demo"]
SUITES = ["seed", "quick", "mixed", "sharegpt-mini"]
FILES = ["study.yaml", "space.yaml", "suite.yaml", "table.json", "mixed.jsonl", "sharegpt-mini.json"]


@pytest.mark.parametrize("study_name", STUDIES)
def test_the_shipped_examples_the_fuzz_starts_from_are_accepted(study_name):
    """The other half of the contract: each unchanged starting point passes, through `create`
    (which writes the storage) and a dry run; every shipped suite and dataset among them."""
    for suite_name in ("quick", "sharegpt-mini") if study_name == "sim-demo" else ("mixed",):
        files = files_for(study_name, suite_name)
        assert holds_the_contract(["study", "run", "--dry-run", "{dir}/study.yaml"], files, FILES)[0] == 0
    code, err = holds_the_contract(["study", "create", "{dir}/study.yaml"], files_for(study_name, "mixed"), FILES)
    assert code == 0, err


@fuzz(20)
@given(data=st.data(), study_name=st.sampled_from(STUDIES), suite_name=st.sampled_from(SUITES),
       target=st.sampled_from(FILES))
def test_a_changed_value_or_key_in_any_file(data, study_name, suite_name, target):
    files = files_for(study_name, suite_name)
    tree = files[target] if isinstance(files[target], (dict, list)) else tree_of(target, files[target])
    files[target] = data.draw(changed_tree(tree))
    holds_the_contract(["study", "run", "--dry-run", "{dir}/study.yaml"], files, FILES)


@fuzz(12)
@given(study_name=st.sampled_from(STUDIES), suite_name=st.sampled_from(SUITES), target=st.sampled_from(FILES),
       how=st.sampled_from(BYTES))
def test_changed_bytes_in_any_file(study_name, suite_name, target, how):
    files = files_for(study_name, suite_name)
    files[target] = changed_bytes(text_of(target, files[target]), how)
    holds_the_contract(["study", "run", "--dry-run", "{dir}/study.yaml"], files, FILES)


@fuzz(6)
@given(data=st.data(), how=st.sampled_from(["tree", "bytes"]))
def test_study_create_writes_nothing_for_a_refused_study(data, how):
    """`create` is the command that writes the storage: the same property through it."""
    files = files_for("sim-demo", "quick")
    if how == "tree":
        files["study.yaml"] = data.draw(changed_tree(files["study.yaml"]))
    else:
        files["study.yaml"] = changed_bytes(text_of("study.yaml", files["study.yaml"]), data.draw(st.sampled_from(BYTES)))
    holds_the_contract(["study", "create", "{dir}/study.yaml"], files, FILES)


@fuzz(10)
@given(data=st.data(), how=st.sampled_from(["tree", "bytes"]))
def test_a_changed_search_space_through_space_list(data, how):
    space = shipped_yaml(ROOT / "search_spaces" / "eagle3.yaml")
    changed = data.draw(changed_tree(space)) if how == "tree" else changed_bytes(
        text_of("space.yaml", space), data.draw(st.sampled_from(BYTES)))
    holds_the_contract(["space", "list", "{dir}/space.yaml"], {"space.yaml": changed}, ["space.yaml"])


#: a flag's odd value: text of every kind, numbers out of range, the empty string
FLAG_VALUES = st.one_of(st.sampled_from(["", " ", "0", "-1", "nan", "inf", "1e400", str(10 ** 23), "1,,2", "x",
                                         "\x1b", "é", "a" * 300, "/", ".", "/dev/null", "-"]),
                        st.text(max_size=12))


@fuzz(16)
@given(command=st.sampled_from([
    ["sim", "landscape", "--concurrency", "{v}", "--table", "{dir}/t.json"],
    ["sim", "landscape", "--profile", "{v}", "--table", "{dir}/t.json"],
    ["sim", "landscape", "--suite", "{v}", "--table", "{dir}/t.json"],
    ["sim", "landscape", "--space", "{v}", "--table", "{dir}/t.json"],
    ["study", "run", "--dry-run", "{dir}/study.yaml", "--n-trials", "{v}"],
    ["study", "run", "--dry-run", "{dir}/study.yaml", "--timeout", "{v}"],
    ["study", "run", "--dry-run", "{dir}/study.yaml", "--workdir", "{v}"],
    ["study", "create", "{dir}/study.yaml", "--storage", "{v}"],
    ["space", "check", "{dir}/space.yaml", "--num-steps", "{v}", "--topk", "1", "--draft-tokens", "2"],
]), value=FLAG_VALUES)
def test_an_odd_flag_value(command, value):
    """A flag's value: taken, or one line naming the flag (or the file it names), nothing written."""
    flag = next(a for a in command if a.startswith("--") and a not in ("--dry-run", "--table"))
    args = [a.replace("{v}", value) for a in command]
    files = {"study.yaml": study("sim-demo"), "space.yaml": shipped_yaml(ROOT / "search_spaces" / "eagle3.yaml"),
             "suite.yaml": suite("quick")}
    names = [flag, "study.yaml", "space.yaml", *([value] if value.strip() else [])]
    if "--table" in command:
        code, _ = holds_the_contract(args, files, names)
        # the table is the command's output: written only when it is accepted (checked above when not)
        return
    holds_the_contract(args, files, names)


WORST = [
    # (what, the files changed, the file the line names): the finds of this fuzz, each refused by
    # the real command (before the fixes: two lines; a create that ran for minutes; a study stored
    # that `status` and `report` could not print)
    ("a NUL in the study file", {"study.yaml": "name: x\x00\n"}, "study.yaml"),
    ("a concurrency of 10^23", {"suite.yaml": {**suite("quick"), "sweep": {"concurrencies": [1, 32, 10 ** 23]}}},
     "suite.yaml"),
    ("a lone surrogate in a dataset category", {
        "suite.yaml": suite("mixed"),
        "mixed.jsonl": DATASETS["mixed.jsonl"].replace('"category": "code"', '"category": "c\\ud800"')},
     "mixed.jsonl"),
]


@pytest.mark.parametrize("what, changed, named", WORST, ids=[w[0] for w in WORST])
def test_worst_finds_through_the_real_command(tmp_path, what, changed, named):
    write_folder(tmp_path, {**files_for("sim-demo", "quick"), **changed})
    before = snapshot(tmp_path)
    r = subprocess.run([sys.executable, "-c", "from tuner.cli import main; main()", "study", "create",
                        str(tmp_path / "study.yaml")], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith(f"error: {tmp_path / named}: "), r.stderr
    assert snapshot(tmp_path) == before
