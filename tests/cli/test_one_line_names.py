"""Names printed into one-line output hold no control character, and a device is no profile (qa80): each
bad input is one line naming the file and key (or the flag), exit 2, nothing written."""

from __future__ import annotations

import copy
import json

import pytest
from support.cli_inputs import SUITE, accepted, refused, study_with


@pytest.mark.parametrize("where, char", [("name", "\n"), ("name", "\x1b"), ("category", "\x1b"),
                                         ("suite name", "\n"), ("name", "\x9b"), ("category", "\u2028")],
                         ids=["prompt name newline", "prompt name ESC", "category ESC", "suite name newline",
                              "prompt name CSI", "category U+2028"])
def test_a_control_character_in_a_suites_names_is_refused(tmp_path, where, char):
    # QA: taken, then printed raw into status and report lines (a newline splits them, ESC drives
    # the terminal)
    suite = copy.deepcopy(SUITE)
    if where == "suite name":
        suite["name"], key = f"s{char}x", "name"
    else:
        suite["prompts"][0][where], key = f"a{char}x", f"prompts[0].{where}"
    line = refused(tmp_path, ["study", "create", str(study_with(tmp_path, "bench.suite", "x", suite))])
    assert f"suite.yaml: {key}: " in line and f"holds the control character {char!r}" in line, line
    suite = copy.deepcopy(SUITE)
    suite["prompts"][0]["category"] = "código é 中文"  # printable Unicode is a name
    accepted(["study", "create", str(study_with(tmp_path, "bench.suite", "x", suite))])


@pytest.mark.parametrize("key", ["name", "category", "id"])
def test_a_control_character_in_a_dataset_label_is_refused(tmp_path, key):
    rows = [{"prompt": f"request number {i}", "max_tokens": 8, key: f"label{i}"} for i in range(3)]
    rows[1][key] = "line one\x1b[2Jline two"
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = {**{k: v for k, v in SUITE.items() if k != "prompts"}, "dataset": {"path": "d.jsonl"}}
    line = refused(tmp_path, ["study", "create", str(study_with(tmp_path, "bench.suite", "x", suite))])
    assert f"d.jsonl: line 2: {key}: 'line one\\x1b[2Jline two' holds the control character '\\x1b'" in line, line
    rows[1][key] = "line one"
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    accepted(["study", "create", str(study_with(tmp_path, "bench.suite", "x", suite))])


def test_a_special_file_as_profile_is_said_so(tmp_path, monkeypatch):
    # QA: `--profile /dev/null` said "file not found" (it exists; it is no regular file)
    monkeypatch.chdir(tmp_path)
    line = refused(tmp_path, ["sim", "landscape", "--profile", "/dev/null", "--table", "t.json"])
    assert line == "error: /dev/null: not a regular file (a device, pipe or socket); give a file", line
    line = refused(tmp_path, ["study", "create", str(study_with(tmp_path, "server.sim.profile", "/dev/null"))])
    assert line.endswith("study.yaml: server.sim.profile: /dev/null: not a regular file (a device, pipe or "
                         "socket); give a file"), line


@pytest.mark.parametrize("key, char", [("model_path", "\x9b"), ("draft_model_path", "\u2028"), ("python", "\x85")],
                         ids=["model_path CSI", "draft_model_path U+2028", "python NEL"])
def test_a_c1_control_or_line_separator_in_a_server_path_is_refused(tmp_path, key, char):
    # held out (qa80): C0 controls were refused, but '\x9b' (a terminal's CSI) and U+2028 were taken,
    # then printed raw in the launch command and every status line naming the model
    line = refused(tmp_path, ["study", "create", str(study_with(tmp_path, f"server.{key}", f"models/k{char}2J"))])
    assert f"server.{key}: holds the control character {char!r}; a path is one line of printable text" in line, line
    if key != "python":
        accepted(["study", "create", str(study_with(tmp_path, f"server.{key}", "models/キミ-K2.6 café"))])
