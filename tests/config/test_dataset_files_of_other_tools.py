"""Files of other tools' layouts in a dataset's place are refused naming the layout, with a command that
really converts them (QA qa161): each jq line is run with the real ``jq`` where it is installed, its
output written to the file the line names after ``>``, and that file loaded; without jq the line's
words are checked. A file that holds no text at all is told so at once, with no conversion to try."""

import ast
import json
import re
import shlex
import shutil
import subprocess

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

JQ = shutil.which("jq")


def _refusal(tmp_path, name: str, data: str) -> str:
    (tmp_path / name).write_text(data)
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name}}, tmp_path)
    return str(err.value)


def _converted(tmp_path, said: str, name: str, stem: str):
    """The requests the refusal's jq line makes of the file (its argv run, its output written to the file
    after '>', beside the source and named STEM.lines.jsonl, that file loaded); None without jq."""
    found = re.search(r"\((jq .*?) writes them so; give that file as dataset\.path\)$", said)
    assert found, said
    words = shlex.split(found.group(1))
    out = str(tmp_path / f"{stem}.lines.jsonl")
    assert words[-3:] == [str(tmp_path / name), ">", out], words
    if JQ is None:
        return None
    with open(out, "w") as f:
        subprocess.run([JQ, *words[1:-2]], stdout=f, check=True, timeout=30)
    return load_suite({"name": "t", "dataset": {"path": out}}, tmp_path).prompts


def test_an_alpaca_row_names_its_file_in_full_and_writes_another_file(tmp_path):
    # QA (qa161): the line ended "... join("\n\n"))}' my data.jsonl": the base name, unquoted, no "> out"
    rows = [{"instruction": "Translate to French", "input": "good morning", "output": "bonjour"},
            {"instruction": "Give three tips", "input": "", "output": "1. Eat"},
            {"instruction": "Name a colour", "output": "Blue"}]
    said = _refusal(tmp_path, "my data.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    assert said.startswith(f"{tmp_path / 'my data.jsonl'}: line 1: input: an instruction-tuning row "), said
    prompts = _converted(tmp_path, said, "my data.jsonl", "my data")
    if prompts is not None:
        assert [p.text for p in prompts] == ["Translate to French\n\ngood morning", "Give three tips", "Name a colour"]


def test_a_logged_openai_request_writes_the_lines_file_every_other_fix_names(tmp_path):
    # QA (qa161): this line alone wrote "X.tuner.jsonl", and named the file by its base name
    row = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi there"}], "max_tokens": 32,
           "temperature": 0}
    said = _refusal(tmp_path, "my log.jsonl", json.dumps(row) + "\n")
    assert said.startswith(f"{tmp_path / 'my log.jsonl'}: line 1: model: a field of a logged OpenAI request"), said
    prompts = _converted(tmp_path, said, "my log.jsonl", "my log")
    if prompts is not None:
        assert [(m.role, m.content) for m in prompts[0].messages] == [("user", "Hi there")]
        assert prompts[0].max_tokens == 32


def test_an_ultrachat_row_names_its_layout_and_sends_its_prompt(tmp_path):
    # QA (qa161): "prompt_id: unknown key; expected prompt or messages, ..." with no fix
    rows = [{"prompt": f"Write a poem about {w}.", "prompt_id": f"{i:064x}",
             "messages": [{"role": "user", "content": f"Write a poem about {w}."},
                          {"role": "assistant", "content": "Roses are red..."}]}
            for i, w in enumerate(["rain", "snow"])]
    said = _refusal(tmp_path, "train_sft.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    assert said.startswith(f"{tmp_path / 'train_sft.jsonl'}: line 1: prompt_id: an UltraChat row "), said
    prompts = _converted(tmp_path, said, "train_sft.jsonl", "train_sft")
    if prompts is not None:
        assert [(p.name, p.text, p.messages) for p in prompts] == [
            (r["prompt_id"], r["prompt"], None) for r in rows]


def test_a_plain_text_file_is_named_so_and_each_line_becomes_a_prompt(tmp_path):
    # QA (qa161): vLLM's sonnet.txt was "line 1: not valid JSON (Expecting value)", no word of text
    lines = ["FROM fairest creatures we desire increase,", "That thereby beauty's rose might never die,",
             "  ", "But as the riper should by time decease,"]
    said = _refusal(tmp_path, "my sonnet.txt", "\n".join(lines) + "\n\n")
    assert said.startswith(f"{tmp_path / 'my sonnet.txt'}: a plain text file, not JSON lines"), said
    prompts = _converted(tmp_path, said, "my sonnet.txt", "my sonnet")
    if prompts is not None:
        assert [p.text for p in prompts] == [t for t in lines if t.strip()]


def test_json_lines_in_a_txt_file_are_read_as_json_lines(tmp_path):
    (tmp_path / "d.txt").write_text(json.dumps({"prompt": "Hello there"}) + "\n")
    assert [p.text for p in load_suite({"name": "t", "dataset": {"path": "d.txt"}}, tmp_path).prompts] == ["Hello there"]


@pytest.mark.parametrize("name, header, row", [
    ("BurstGPT_1.csv", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type",
     "5,ChatGPT,472,18,490,Conversation log"),
    ("AzureLLMInferenceTrace_conv.csv", "TIMESTAMP,ContextTokens,GeneratedTokens", "2023-11-16 18:15:46.68,374,44"),
], ids=["burstgpt", "azure-trace"])
def test_a_trace_of_token_counts_is_said_at_once_to_hold_no_text(tmp_path, name, header, row):
    # QA (qa161): BurstGPT's CSV was given the pandas line, whose rows have no prompt: a second refusal
    said = _refusal(tmp_path, name, f"{header}\n{row}\n")
    columns = ", ".join(header.split(","))
    assert said == (f"{tmp_path / name}: a CSV file of token counts ({columns}), no text: a request trace such as "
                    "BurstGPT's holds no prompt to send; give a file of prompts (JSON lines, a prompt or messages "
                    "object per line) and the lengths as each row's max_tokens"), said


def test_a_csv_of_prompts_still_gets_the_pandas_line(tmp_path):
    said = _refusal(tmp_path, "d.csv", 'prompt,max_tokens\n"Write a haiku.",16\n')
    assert "convert it (python -c \"import pandas as p; p.read_csv(" in said, said


@pytest.mark.parametrize("name", ["d.csv", "it's a \"table\".tsv"])
def test_the_pandas_line_for_a_table_names_the_file_as_the_error_does(tmp_path, name):
    # QA (qa166): the line named the base name, read_csv('d.csv'): from any folder but the file's own,
    # FileNotFoundError, and the JSON lines written where the user stood
    sep = "\t" if name.endswith(".tsv") else ","
    (tmp_path / "data").mkdir()
    said = _refusal(tmp_path, f"data/{name}", f"prompt{sep}max_tokens\nWrite a haiku.{sep}16\n")
    found = re.search(r"convert it \((python -c .*), its columns named prompt and max_tokens\)$", said)
    assert found, said
    words = shlex.split(found.group(1))  # as the shell reads it
    assert words[:2] == ["python", "-c"] and len(words) == 3, words
    calls = {c.func.attr: c for c in ast.walk(ast.parse(words[2])) if isinstance(c, ast.Call)
             and isinstance(c.func, ast.Attribute)}
    source = tmp_path / "data" / name
    assert ast.literal_eval(calls["read_csv"].args[0]) == str(source), words[2]
    assert ast.literal_eval(calls["to_json"].args[0]) == str(source.with_suffix(".jsonl")), words[2]
    assert [ast.unparse(k.value) for k in calls["read_csv"].keywords if k.arg == "sep"] == \
        ([] if sep == "," else ["chr(9)"]), words[2]


@pytest.mark.parametrize("row", [
    {"timestamp": 0, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48]},
    {"Timestamp": 5, "Model": "ChatGPT", "Request tokens": 472, "Response tokens": 18, "Total tokens": 490,
     "Log Type": "Conversation log"},
], ids=["mooncake", "burstgpt-as-json"])
def test_a_json_lines_trace_of_token_counts_is_said_to_hold_no_text(tmp_path, row):
    # QA (qa166): Mooncake's trace was "hash_ids: unknown key; expected prompt or messages ..."
    said = _refusal(tmp_path, "trace.jsonl", json.dumps(row) + "\n")
    assert said.startswith(f"{tmp_path / 'trace.jsonl'}: line 1: ") and said.endswith(
        f": a request trace of token counts ({', '.join(row)}), no text: it holds no prompt to send; give a file "
        "of prompts (a prompt or messages object per line) and the lengths as each row's max_tokens"), said


def test_a_text_row_with_a_token_count_still_gets_its_jq_line(tmp_path):
    said = _refusal(tmp_path, "d.jsonl", json.dumps({"text": "Hello there", "prompt_tokens": 3}) + "\n")
    assert "text: a text column, as Hugging Face text datasets have it" in said, said


def test_a_json_list_of_ultrachat_rows_gets_one_line_that_makes_its_requests(tmp_path):
    # QA (qa166): the list was sent to jq -c '.[]', whose lines were refused next ("prompt_id: unknown key")
    rows = [{"prompt": f"Write a poem about {w}.", "prompt_id": f"{i:064x}",
             "messages": [{"role": "user", "content": f"Write a poem about {w}."},
                          {"role": "assistant", "content": "Roses are red..."}]}
            for i, w in enumerate(["rain", "snow"])]
    said = _refusal(tmp_path, "ultra chat.json", json.dumps(rows))
    assert said.startswith(f"{tmp_path / 'ultra chat.json'}: [0]: expected {{id, conversations"), said
    assert "a JSON list of UltraChat rows" in said, said
    prompts = _converted(tmp_path, said, "ultra chat.json", "ultra chat")
    if prompts is not None:
        assert [(p.name, p.text) for p in prompts] == [(r["prompt_id"], r["prompt"]) for r in rows]


@pytest.mark.parametrize("data, want", [
    (b"\xef\xbb\xbfFROM fairest creatures we desire increase,\r\nThat thereby beauty's rose might never die,\r\n\r\n",
     ["FROM fairest creatures we desire increase,", "That thereby beauty's rose might never die,"]),
    (b"2024\nWhat happened in this year?\n", ["2024", "What happened in this year?"]),
], ids=["windows-file-with-bom", "a-number-first"])
def test_a_plain_text_file_of_another_shape_still_becomes_its_lines(tmp_path, data, want):
    # QA (qa166): a Windows file's prompts were sent with a "\r" each, its first with a U+FEFF; a first
    # line that JSON reads as a number was "line 1: expected a JSON object", no word of text
    (tmp_path / "d.txt").write_bytes(data)
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.txt"}}, tmp_path)
    said = str(err.value)
    assert said.startswith(f"{tmp_path / 'd.txt'}: a plain text file, not JSON lines"), said
    prompts = _converted(tmp_path, said, "d.txt", "d")
    if prompts is not None:
        assert [p.text for p in prompts] == want


def test_a_json_list_of_alpaca_rows_without_input_gets_its_instruction_alone(tmp_path):
    # QA (qa166): the list's jq line joined a missing input (null) as "": "Name a colour\n\n" was sent
    rows = [{"instruction": "Name a colour", "output": "Blue"},
            {"instruction": "Translate to French", "input": "good morning", "output": "bonjour"}]
    said = _refusal(tmp_path, "alpaca data.json", json.dumps(rows))
    assert "a JSON list of instruction-tuning rows" in said, said
    found = re.search(r"\((jq -c .*?)\) and give that file as dataset\.path$", said)
    assert found, said
    words = shlex.split(found.group(1))
    out = str(tmp_path / "alpaca data.lines.jsonl")
    assert words[-3:] == [str(tmp_path / "alpaca data.json"), ">", out], words
    if JQ is None:
        return
    with open(out, "w") as f:
        subprocess.run([JQ, *words[1:-2]], stdout=f, check=True, timeout=30)
    prompts = load_suite({"name": "t", "dataset": {"path": out}}, tmp_path).prompts
    assert [p.text for p in prompts] == ["Name a colour", "Translate to French\n\ngood morning"]


def test_a_json_list_of_logged_openai_requests_gets_one_line_that_keeps_each_request(tmp_path):
    # QA (qa166): the list was sent to jq -c '.[]', whose lines were refused next ("model: ...")
    rows = [{"model": "gpt-4o", "messages": [{"role": "user", "content": f"What is {i}+{i}?"}],
             "max_completion_tokens": 20 + i, "temperature": 0} for i in range(2)]
    said = _refusal(tmp_path, "my log.json", json.dumps(rows))
    assert "a JSON list of logged OpenAI requests" in said, said
    prompts = _converted(tmp_path, said, "my log.json", "my log")
    if prompts is not None:
        assert [([(m.role, m.content) for m in p.messages], p.max_tokens) for p in prompts] == [
            ([("user", r["messages"][0]["content"])], r["max_completion_tokens"]) for r in rows]
