"""Datasets as users bring them, through `tuner study create`: each input the loader was not written
around is either served, or refused at the edge with one line naming the file (and the line, key or
record where it helps) with the fix, exit 2, and nothing written (no storage, no workdir)."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli

SUITE = {"name": "s", "dataset": {"path": "d.jsonl"}, "single": {"prompts": 1, "repeats": 1},
         "sweep": {"concurrencies": [2]}, "warmup": {"requests": 0}, "timeout_s": 30}
STUDY = {"name": "ds", "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d",
                                  "sim": {"speedup": 50}},
         "bench": {"suite": "suite.yaml"}, "objectives": ["single_speedup", "speedup@2"]}
LATIN_ROW_START = b'{"prompt": "caf'  # the bytes before the row's Latin-1 \xe9
ROWS = [{"prompt": f"plain prompt number {i}", "max_tokens": 8} for i in range(3)]


def jsonl(rows, encoding="utf-8") -> bytes:
    return ("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n").encode(encoding)


def create(folder: Path, data: bytes | None, name: str = "d.jsonl", **dataset) -> tuple[int, list[str], list[str]]:
    """`tuner study create` on a study whose suite reads ``name`` (holding ``data``; None: left as
    the test made it): exit code, stderr lines, and the folder's files after, minus those before."""
    if data is not None:
        (folder / name).write_bytes(data)
    (folder / "suite.yaml").write_text(yaml.safe_dump({**SUITE, "dataset": {"path": name, **dataset}}))
    (folder / "study.yaml").write_text(yaml.safe_dump(STUDY))
    before = set(p.name for p in folder.iterdir())
    r = CliRunner().invoke(cli, ["study", "create", str(folder / "study.yaml")])
    return r.exit_code, r.stderr.strip().splitlines(), sorted(set(p.name for p in folder.iterdir()) - before)


def refused(folder: Path, data: bytes | None, name: str = "d.jsonl", **dataset) -> str:
    code, lines, written = create(folder, data, name, **dataset)
    assert code == 2, (code, lines)
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert written == [], written
    return lines[0]


@pytest.mark.parametrize("name, data, says", [
    # QA: each was "not UTF-8 text (byte 1); save the file as UTF-8": true, and no help
    ("d.jsonl.gz", gzip.compress(jsonl(ROWS)),
     "d.jsonl.gz: gzip-compressed, not UTF-8 text; decompress it first (gunzip -k {path}) and give the file "
     "it holds as dataset.path"),
    ("d.jsonl", jsonl(ROWS, "utf-16"),
     "d.jsonl: UTF-16 text, not UTF-8 text; save it as UTF-8 (iconv -f UTF-16 -t UTF-8 {path} > {folder}/d.utf8.jsonl "
     "writes it so; give that file as dataset.path)"),
    # UTF-16 without its mark is UTF-8 (every NUL is), and no JSON
    ("d.jsonl", jsonl(ROWS, "utf-16-le"), "d.jsonl: line 1: not valid JSON (Expecting property name enclosed in "
                                          "double quotes); it holds NUL bytes: UTF-16 text? save the file as UTF-8"),
    # one Latin-1 row among UTF-8 ones: named by its line (QA: by its byte offset alone)
    ("d.jsonl", jsonl(ROWS[:2]) + json.dumps({"prompt": "caf\u00e9"}, ensure_ascii=False).encode("latin-1") + b"\n",
     f"d.jsonl: line 3: not UTF-8 text (byte {len(jsonl(ROWS[:2])) + len(LATIN_ROW_START)}); save the file as UTF-8"),
], ids=["gzip", "utf-16", "utf-16-no-mark", "latin-1-row"])
def test_a_file_that_is_not_utf8_says_what_it_is_and_how_to_read_it(tmp_path, name, data, says):
    line = refused(tmp_path, data, name)
    # a command names the file as the line does, to run from where the user is (QA: its bare name)
    assert line.endswith(says.replace("{path}", str(tmp_path / name)).replace("{folder}", str(tmp_path))), line


def test_an_image_part_is_refused_naming_the_part(tmp_path):
    row = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "What is in this image?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}]}]}
    line = refused(tmp_path, jsonl(ROWS + [row]))
    assert line.endswith("d.jsonl: line 4: messages[0].content[1].type: 'image_url' parts are not supported: "
                         "the tuner sends text requests; drop the part (or the row)"), line


def test_text_parts_are_served(tmp_path):
    row = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Describe the sea."}]}]}
    code, lines, written = create(tmp_path, jsonl([row]))
    assert code == 0, lines
    assert "ds.db" in written


@pytest.mark.parametrize("turn, says", [
    # an agent's log: the assistant's call (content null), then the tool's answer
    ({"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "weather", "arguments": "{}"}}]}, "messages[1].tool_calls: tool calls are not supported"),
    ({"role": "tool", "tool_call_id": "c1", "content": "12 C"}, "messages[1].tool_call_id: tool calls are not "
                                                                 "supported"),
    ({"role": "user", "content": "hi", "weight": 1}, "messages[1].weight: unknown key; a turn is {role, content}"),
], ids=["tool_calls", "tool_call_id", "other-key"])
def test_a_turns_unsupported_key_is_named(tmp_path, turn, says):
    # QA: each was "messages[1]: expected {role, content}", naming no key and no fix
    row = {"messages": [{"role": "user", "content": "Weather in Paris?"}, turn]}
    line = refused(tmp_path, jsonl(ROWS + [row]))
    assert f"d.jsonl: line 4: {says}" in line, line


def test_a_sharegpt_export_as_json_lines_is_refused_with_the_format_that_reads_it(tmp_path):
    convs = [{"id": f"c{i}", "lang": "en", "conversations": [{"from": "human", "value": f"Tell me about topic {i}."},
                                                           {"from": "gpt", "value": "A long answer. " * 8}]}
             for i in range(3)]
    line = refused(tmp_path, jsonl(convs))
    assert line.endswith("d.jsonl: line 1: conversations: a conversation in a JSON-lines file, SGLang's "
                         "bench_serving --dataset-name custom layout: set format: custom in the dataset to "
                         "read it so"), line
    # the format it names serves the file, each conversation one request (SGLang's custom.py reads
    # a turn's "value" where it has no "content"); so does the ShareGPT layout, one JSON list
    code, lines, written = create(tmp_path, None, "d.jsonl", format="custom")
    assert code == 0 and "ds.db" in written, lines
    (tmp_path / "ds.db").unlink()  # the study again, from the other file
    (tmp_path / "d.json").write_text(json.dumps(convs))
    code, lines, written = create(tmp_path, None, "d.json")
    assert code == 0 and "ds.db" in written, lines


@pytest.mark.parametrize("extra, says", [
    ({"model": "gpt-4o", "temperature": 0.7}, "line 1: model: a field of a logged OpenAI request, which a row "
                                              "does not set (the suite sets the sampling, temperature:"),
    ({"max_completion_tokens": 50}, "line 1: max_completion_tokens: write the request's output length as max_tokens"),
], ids=["request-fields", "max_completion_tokens"])
def test_an_openai_request_log_is_refused_saying_what_to_keep(tmp_path, extra, says):
    rows = [{"messages": [{"role": "user", "content": "What is 2+2?"}], **extra}] * 2
    line = refused(tmp_path, jsonl(rows))
    assert f"d.jsonl: {says}" in line, line


def test_the_jq_line_for_an_openai_request_log_writes_another_file_that_is_then_served(tmp_path):
    # QA: the line said `jq ... requests.jsonl > requests.jsonl`, which on a file of that name (the
    # README's example's) empties it before jq reads it: the user's dataset was lost
    rows = [{"model": "gpt-4o", "messages": [{"role": "user", "content": f"What is {i}+{i}?"}], "max_tokens": 8}
            for i in range(2)]
    line = refused(tmp_path, jsonl(rows), "requests.jsonl")
    command = re.search(r"\(jq -c '\{messages, max_tokens\}' (\S+) > (\S+) writes them so; give that file as "
                        r"dataset.path\)$", line)
    assert command, line
    source, out = command.groups()
    assert (source, out) == (str(tmp_path / "requests.jsonl"), str(tmp_path / "requests.lines.jsonl")), line
    # what that jq filter writes, one object of the two keys per row; the file it names is served
    (tmp_path / out).write_bytes(jsonl([{"messages": r["messages"], "max_tokens": r["max_tokens"]} for r in rows]))
    code, lines, written = create(tmp_path, None, out)
    assert code == 0 and "ds.db" in written, lines


def test_a_link_to_nothing_and_a_loop_of_links_are_named_as_links(tmp_path):
    # QA: both were "d.jsonl not found", though d.jsonl is there (a data disk not mounted)
    (tmp_path / "d.jsonl").symlink_to("/mnt/not-mounted/requests.jsonl")
    line = refused(tmp_path, None)
    assert line.endswith("d.jsonl is a symbolic link to /mnt/not-mounted/requests.jsonl, which does not exist; "
                         "mend the link or give the file itself"), line
    (tmp_path / "d.jsonl").unlink()
    (tmp_path / "d.jsonl").symlink_to("e.jsonl")
    (tmp_path / "e.jsonl").symlink_to("d.jsonl")
    line = refused(tmp_path, None)
    assert line.endswith("d.jsonl is a loop of symbolic links; mend the link or give the file itself"), line
    # a link to a file is read as the file
    (tmp_path / "e.jsonl").unlink()
    (tmp_path / "e.jsonl").write_bytes(jsonl(ROWS))
    code, lines, written = create(tmp_path, None)
    assert code == 0 and "ds.db" in written, lines


def test_sharegpt_turns_past_the_two_read_are_not_checked(tmp_path):
    # SGLang 0.5.23's sample_sharegpt_requests reads turns[0] and turns[1] only, after dropping
    # conversations of fewer than two turns (QA: a null value in turn 3 refused the whole file)
    convs = [
        {"id": "a", "conversations": [{"from": "human", "value": "Tell me about the sea."},
                                      {"from": "gpt", "value": "It is large and salty, mostly."},
                                      {"from": "human", "value": None}, {"markdown": "<p>x</p>"}]},
        {"id": "b", "conversations": [{"from": "human"}]},  # one turn: dropped before it is read
        {"id": "c", "conversations": [{"from": "human", "value": "And the sky, what colour?"},
                                      {"from": "gpt", "value": "Blue, on a clear day."}]},
    ]
    code, lines, written = create(tmp_path, json.dumps(convs).encode(), "d.json")
    assert code == 0 and "ds.db" in written, lines
    convs[2]["conversations"][1]["value"] = None  # a turn that is read: refused, named
    (tmp_path / "ds.db").unlink()
    line = refused(tmp_path, json.dumps(convs).encode(), "d.json")
    assert line.endswith("d.json: [2].conversations[1]: expected {from, value} with a text value"), line


def test_files_joined_with_cat_each_with_its_byte_order_mark_are_read(tmp_path):
    # QA: line 2 (the second file's first) was "not valid JSON (Unexpected UTF-8 BOM (decode using utf-8-sig))"
    one, two = (("\ufeff" + json.dumps(r) + "\r\n").encode() for r in ROWS[:2])
    code, lines, written = create(tmp_path, one + two)
    assert code == 0 and "ds.db" in written, lines
    from tuner.config.suite import load_suite

    assert [p.text for p in load_suite(tmp_path / "suite.yaml").prompts] == [r["prompt"] for r in ROWS[:2]]


@pytest.mark.parametrize("data, says", [
    # QA: each was "unknown key; expected prompt or messages, ...", or a bare JSON error
    (jsonl([{"prompt": "Write a haiku about rain.", "completion": "Soft rain on the roof"}]),
     "line 1: completion: a recorded reply; a row gives the request alone (prompt or messages): drop completion, "
     "and give the reply's length in tokens as max_tokens"),
    (jsonl([{"instruction": "Translate to French", "input": "good morning", "output": "bonjour"}]),
     "line 1: input: an instruction-tuning row (instruction, input, output): give the request as prompt (jq -c "),
    ((json.dumps(ROWS[0]) + "\r" + json.dumps(ROWS[1]) + "\r").encode(),
     "line 1: not valid JSON (Extra data); its lines end in CR alone (a classic Mac file): save it with LF line ends"),
], ids=["prompt-completion", "instruction", "cr-line-ends"])
def test_rows_of_other_common_layouts_say_how_to_read_them(tmp_path, data, says):
    line = refused(tmp_path, data)
    assert f"d.jsonl: {says}" in line, line


@pytest.mark.parametrize("name, data, says", [
    # QA: "line 1: not valid JSON (Expecting value)", and "line 1: not UTF-8 text (byte 4)"
    ("d.csv", b'prompt,max_tokens\n"Write a haiku about rain.",16\n',
     "d.csv: a CSV file, not JSON: the tuner reads JSON lines (a prompt or messages object per line) or a ShareGPT "
     "JSON list; convert it (python -c \"import pandas as p; p.read_csv('"),
    ("d.parquet", b"PAR1\x15\x04\x15\x30\xff\xfe\x00\x00PAR1",
     "d.parquet: a Parquet file (as Hugging Face datasets ship), not UTF-8 text; convert it to JSON lines first "),
], ids=["csv", "parquet"])
def test_tables_are_named_with_a_conversion(tmp_path, name, data, says):
    line = refused(tmp_path, data, name)
    assert says in line, line
