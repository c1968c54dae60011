"""Text from a user's file reaches the terminal with the characters that drive it, break the line or
reorder it (bidi overrides and isolates, ESC, NUL, CR) escaped, by one helper
(tuner.config.names.shown), and the error line still names the file, the key and the fix (QA: a
dataset key or a file name holding U+202E was printed raw: the rest of the line was shown reversed,
Trojan-Source style)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tuner.bench.workload import workload_line
from tuner.cli import cli
from tuner.cli.output import print_table
from tuner.config.names import shown

HIDDEN = ("\u202e", "\u2066", "\u2069", "\x1b", "\x00", "\r")


def _bench_error(tmp_path, suite: str | dict) -> str:
    """The one stderr line of `tuner bench` refusing a suite file (nothing is asked of the URL)."""
    suite_file = tmp_path / "s.yaml"
    suite_file.write_text(suite if isinstance(suite, str) else json.dumps(suite), encoding="utf-8")
    r = CliRunner().invoke(cli, ["bench", "--url", "http://127.0.0.1:9", "--suite", str(suite_file)])
    assert r.exit_code == 2, r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert not any(c in lines[0] for c in HIDDEN), repr(lines[0])
    return lines[0]


@pytest.mark.parametrize("char", HIDDEN[:4])
def test_a_dataset_key_with_a_hidden_character_is_named_escaped(tmp_path, char):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"prompt": "ok"}) + "\n" + json.dumps({f"pro{char}mpt": "x"}) + "\n", encoding="utf-8")
    line = _bench_error(tmp_path, {"name": "t", "dataset": {"path": "d.jsonl"}})
    assert line == (f"error: {data}: line 2: pro{shown(char)}mpt: unknown key; expected prompt or messages, and "
                    "optionally max_tokens, category (or name), id")


def test_a_dataset_file_name_with_a_bidi_override_is_named_escaped(tmp_path):
    data = tmp_path / "f\u202egnp.jsonl"
    data.write_text('{"prompt": "ok"}\n{bad\n', encoding="utf-8")
    line = _bench_error(tmp_path, {"name": "t", "dataset": {"path": data.name}})
    assert line.startswith(f"error: {tmp_path}/f\\u202egnp.jsonl: line 2: not valid JSON"), line


def test_a_yaml_key_and_a_path_with_hidden_characters_are_named_escaped(tmp_path):
    line = _bench_error(tmp_path, 'name: t\nprompts: [{name: a, text: hi}]\n"sw\u2066eep": {}\n')
    assert line == f"error: {tmp_path / 's.yaml'}: sw\\u2066eep: unknown key (did you mean 'sweep'?)"
    line = _bench_error(tmp_path, {"name": "t", "dataset": {"path": "x\x1b[2J\ry.jsonl"}})
    assert line.startswith(f"error: {tmp_path / 's.yaml'}: dataset.path: {tmp_path}/x\\x1b[2J\\x0dy.jsonl not found"), line


def test_tables_and_the_workload_line_show_user_text_escaped(capsys):
    print_table(["prompt", "tokens"], [["a\u202eb\x1b[31m", 8]], title="single \u2066")
    out = capsys.readouterr().out
    assert "a\\u202eb\\x1b[31m" in out and "single \\u2066" in out and not any(c in out for c in HIDDEN)
    stats = {"suite": "s", "source": {"kind": "dataset", "path": "d\u202e.jsonl", "format": "jsonl"}, "requests": 2,
             "prompt_chars": {"p50": 1, "p90": 1, "p99": 1}, "output_tokens": {"p50": 1, "p90": 1, "p99": 1},
             "temperature": 0.0, "categories": {"co\u2067de": 1, "chat": 1}}
    line = workload_line(stats)
    assert "dataset d\\u202e.jsonl (jsonl)" in line and "co\\u2067de 1" in line and not any(c in line for c in HIDDEN)


def test_shown_keeps_printable_text_and_is_idempotent():
    assert shown("漢字 é 🙂 [x]") == "漢字 é 🙂 [x]"
    once = shown("a\u202eb\x00c\ud800")
    assert once == "a\\u202eb\\x00c\\ud800" and shown(once) == once
