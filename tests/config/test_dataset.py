"""Suites from data: the JSONL and ShareGPT layouts, deterministic draws, length filters, paths
relative to the suite file, the file pinned by its SHA-256, and every bad input named by file and
line (or suite key)."""

from __future__ import annotations

import hashlib
import json

import pytest

from tuner.bench.workload import workload_stats
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROWS = [
    {"id": "a", "category": "code", "prompt": "Write quicksort in Python.", "max_tokens": 64},
    {"id": "b", "name": "chat", "messages": [{"role": "system", "content": "Be kind."},
                                              {"role": "user", "content": "How are you today?"}]},
    {"id": "c", "category": "code", "prompt": "x" * 500, "max_tokens": 4000},
    {"id": "d", "prompt": "Translate 'good morning' into Italian.", "max_tokens": 3},
]


def write_jsonl(path, rows, extra=""):
    path.write_text("# a comment\n\n" + "\n".join(json.dumps(r) for r in rows) + "\n" + extra)
    return path


def suite_file(folder, dataset: str, **extra):
    lines = ["name: data", f"dataset: {dataset}", "sweep: {concurrencies: [1, 4]}"]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    (folder / "suite.yaml").write_text("\n".join(lines) + "\n")
    return folder / "suite.yaml"


def test_jsonl_rows_become_prompts_with_their_turns_lengths_and_categories(tmp_path):
    (tmp_path / "data").mkdir()
    write_jsonl(tmp_path / "data" / "w.jsonl", ROWS)
    suite = load_suite(suite_file(tmp_path, "{path: data/w.jsonl, default_max_tokens: 40, max_output_tokens: 512}"))
    by = {p.name: p for p in suite.prompts}
    assert list(by) == ["a", "b", "c", "d"]  # no n: every row, in file order
    assert by["a"].max_tokens == 64 and by["a"].category == "code" and by["a"].messages is None
    assert by["b"].max_tokens == 40 and by["b"].category == "chat"  # name stands for the category
    assert by["b"].chat_messages()[0] == {"role": "system", "content": "Be kind."}
    assert by["b"].text == "Be kind.\n\nHow are you today?"  # raw-text APIs get the contents, no template
    assert by["c"].max_tokens == 512  # capped
    assert by["a"].chat_messages() == [{"role": "user", "content": "Write quicksort in Python."}]
    # each request at its own length, in both phases, unless the suite says otherwise
    assert suite.single_lengths(by["a"]) == [64] and suite.sweep_tokens(by["d"]) == 3
    assert len(suite.dataset.sha256) == 64


def test_draws_are_deterministic_and_filters_apply(tmp_path):
    rows = [{"prompt": f"request number {i} " + "y" * (i % 7) * 10, "max_tokens": 8 + i} for i in range(40)]
    write_jsonl(tmp_path / "w.jsonl", rows)
    def pick(**kw):
        return [p.text for p in load_suite(suite_file(tmp_path, "{" + ", ".join(
            f"{k}: {v}" for k, v in {"path": "w.jsonl", **kw}.items()) + "}")).prompts]
    a, b, c = pick(n=10, seed=1), pick(n=10, seed=1), pick(n=10, seed=2)
    assert a == b and len(a) == 10 and set(a) != set(c)
    assert set(pick(n=5, seed=1)) <= set(a)  # a smaller draw is a prefix of the same order
    short = pick(max_prompt_chars=30)
    assert short and all(len(t) <= 30 for t in short)
    assert all(int(t.split()[2]) + 8 >= 30 for t in pick(min_output_tokens=30))
    with pytest.raises(ConfigError, match=r"suite.yaml: dataset.n: 50 requests asked for, but only 40"):
        pick(n=50)
    with pytest.raises(ConfigError, match="passes the length filters"):
        pick(min_prompt_chars=10_000)


def test_sharegpt_pairs_the_first_two_turns_as_sglang_does(tmp_path):
    """SGLang 0.5.23's sample_sharegpt_requests: turns[0] is the prompt and turns[1] the reply,
    whatever their roles; fewer than two turns, or a prompt or reply under 2 tokens, is dropped."""
    convs = [
        {"id": "x1", "conversations": [{"from": "human", "value": "Hi there?"}, {"from": "gpt", "value": "a" * 400}]},
        {"id": "x2", "conversations": [{"from": "human", "value": "Long answer please"},
                                       {"from": "gpt", "value": "b" * 40_000}]},
        {"id": "x3", "conversations": [{"from": "human", "value": "no reply"}]},
        # QA: the follow-up question is the reply (SGLang's pairing), 2 tokens: kept at 2
        {"id": "x4", "conversations": [{"from": "human", "value": "first question"},
                                       {"from": "human", "value": "q2 follow"}, {"from": "gpt", "value": "answer"}]},
        # QA: a 1-token prompt ("sys") is dropped, as SGLang prunes prompt_len < 2 ...
        {"id": "x5", "conversations": [{"from": "system", "value": "sys"}, {"from": "human", "value": "hi there"},
                                       {"from": "gpt", "value": ""}]},
        # ... and a 1-token reply (an empty one too) is dropped, as output_len < 2
        {"id": "x6", "conversations": [{"from": "human", "value": "hi there"}, {"from": "gpt", "value": ""}]},
        {"id": "x7", "conversations": [{"from": "human", "value": "hi there"}, {"from": "gpt", "value": "ok"}]},
        # roles are not read: a conversation opened by the assistant is its greeting as the prompt
        {"id": "x8", "conversations": [{"from": "gpt", "value": "How can I help?"},
                                       {"from": "human", "value": "Tell me a joke"}]},
    ]
    (tmp_path / "c.json").write_text(json.dumps(convs))
    suite = load_suite(suite_file(tmp_path, "{path: c.json, max_output_tokens: 300}"))
    assert [(p.name, p.text, p.max_tokens) for p in suite.prompts] == [
        ("x1", "Hi there?", 100), ("x2", "Long answer please", 300), ("x4", "first question", 2),
        ("x8", "How can I help?", 4)]


@pytest.mark.parametrize("line, where", [
    ('{"prompt": "a", "messages": [{"role": "user", "content": "b"}]}', "line 7: give prompt"),
    ('{"prompt": ""}', "line 7: prompt: must be non-empty"),
    ('{"prompt": "a", "max_tokens": 0}', "line 7: max_tokens: must be a positive integer"),
    ('{"messages": [{"role": "robot", "content": "b"}]}', r"line 7: messages\[0\].role"),
    ('{"prompt": "a", "temprature": 1}', "line 7: temprature: unknown key"),
    ('{"prompt": "a"', "line 7: not valid JSON"),
    ('["a"]', "line 7: expected a JSON object"),
    # QA: the last of a repeated key silently won
    ('{"prompt": "first", "prompt": "second"}', "line 7: prompt: given twice in one object .*keep one"),
    ('{"messages": [{"role": "user", "role": "system", "content": "b"}]}', "line 7: role: given twice in one object"),
])
def test_bad_jsonl_lines_name_file_and_line(tmp_path, line, where):
    path = write_jsonl(tmp_path / "w.jsonl", ROWS, extra=line + "\n")
    with pytest.raises(ConfigError, match=f"{path}: {where}"):
        load_suite(suite_file(tmp_path, "{path: w.jsonl}"))


def test_bad_dataset_keys_and_files(tmp_path):
    with pytest.raises(ConfigError, match=r"suite.yaml: dataset.path: .*missing.jsonl not found"):
        load_suite(suite_file(tmp_path, "{path: missing.jsonl}"))
    write_jsonl(tmp_path / "w.jsonl", ROWS)
    with pytest.raises(ConfigError, match=r"dataset.formt: unknown key"):
        load_suite(suite_file(tmp_path, "{path: w.jsonl, formt: jsonl}"))
    with pytest.raises(ConfigError, match=r"give prompts or dataset, not both"):
        load_suite(suite_file(tmp_path, "{path: w.jsonl}", prompts="[{name: a, text: b}]"))
    with pytest.raises(ConfigError, match=r"dataset.sha256: .*the file changed"):
        load_suite(suite_file(tmp_path, "{path: w.jsonl, sha256: '" + "0" * 64 + "'}"))
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"bad.json: expected a JSON list of conversations"):
        load_suite(suite_file(tmp_path, "{path: bad.json, format: sharegpt}"))
    # a key given twice, as in JSONL (QA: the last "value" was silently the prompt)
    (tmp_path / "twice.json").write_text('[{"id": "1", "conversations": [{"from": "human", "value": "hi", '
                                         '"value": "ho"}, {"from": "gpt", "value": "ok"}]}]')
    with pytest.raises(ConfigError, match=r"twice.json: value: given twice in one object"):
        load_suite(suite_file(tmp_path, "{path: twice.json, format: sharegpt}"))


def test_a_loaded_suite_is_self_contained_and_pins_its_file(tmp_path):
    write_jsonl(tmp_path / "w.jsonl", ROWS)
    suite = load_suite(suite_file(tmp_path, "{path: w.jsonl, n: 3, seed: 4}"))
    (tmp_path / "w.jsonl").unlink()
    again = load_suite(suite.to_dict())  # as a stored study reloads it: no file read
    assert again == suite
    write_jsonl(tmp_path / "w.jsonl", ROWS[:3])
    with pytest.raises(ConfigError, match="sha256"):
        load_suite(suite_file(tmp_path, f"{{path: w.jsonl, n: 3, seed: 4, sha256: '{suite.dataset.sha256}'}}"))


def test_shipped_dataset_suites_and_their_workload():
    mixed = load_suite("mixed")
    stats = workload_stats(mixed)
    assert stats["requests"] == 16 and stats["source"]["kind"] == "dataset"
    assert sum(stats["categories"].values()) == 16 and len(stats["categories"]) >= 5
    assert stats["chat_turns"] >= 1 and stats["single_requests"] == 6
    assert stats["output_tokens"]["p50"] <= stats["output_tokens"]["p99"] <= 384
    share = load_suite("sharegpt-mini")
    assert len(share.prompts) == 12 and max(p.max_tokens for p in share.prompts) <= 256


def test_files_as_editors_and_exporters_write_them(tmp_path):
    # a raw U+2028 / U+0085 inside a JSON string (valid JSON; str.splitlines() would split there),
    # CRLF line ends and a UTF-8 byte-order mark
    rows = [{"prompt": "first paragraph\u2028second paragraph", "max_tokens": 8},
            {"prompt": "next\u0085line", "max_tokens": 8}]
    text = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\r\n"
    (tmp_path / "w.jsonl").write_bytes(b"\xef\xbb\xbf" + text.encode())
    suite = load_suite(suite_file(tmp_path, "{path: w.jsonl}"))
    assert [p.text for p in suite.prompts] == [r["prompt"] for r in rows]


def refusal(tmp_path, name: str, content: str) -> str:
    """The ConfigError a suite naming dataset file ``name`` (holding ``content``) loads with."""
    (tmp_path / name).write_text(content)
    with pytest.raises(ConfigError) as info:
        load_suite(suite_file(tmp_path, f"{{path: {name}}}"))
    return str(info.value)


@pytest.mark.parametrize("name, content, says", [
    ("empty.jsonl", "", "empty.jsonl holds no request (no row); give a file with some"),
    ("blank.jsonl", "\n\n  \n", "holds no request (no row)"),
    ("none.json", json.dumps([{"conversations": [{"from": "human", "value": "hi"}]}]),
     "holds no request (no conversation with a prompt and a reply of 2 tokens or more"),
    # the layout guessed from the suffix, and the error says how to set it
    ("lines.json", json.dumps({"prompt": "a"}) + "\n" + json.dumps({"prompt": "b"}) + "\n",
     "not valid JSON (Extra data); read as sharegpt from the file's suffix: set format: jsonl"),
    ("list.jsonl", json.dumps([{"conversations": []}], indent=1),
     "read as jsonl from the file's suffix: set format: sharegpt if it is one JSON list of conversations"),
    ("cat.json", json.dumps([{"id": "a", "category": 5, "conversations": [
        {"from": "human", "value": "hi there"}, {"from": "gpt", "value": "hello friend"}]}]),
     "cat.json: [0].category: must be text"),
])
def test_files_that_hold_no_request_say_what_is_wrong(tmp_path, name, content, says):
    message = refusal(tmp_path, name, content)
    assert says in message, message
    assert "\n" not in message


@pytest.mark.parametrize("name, content, says", [
    # QA: one bad line in the middle of a JSONL file was told to "set format: sharegpt if it is one
    # JSON list of conversations": its first lines were JSON objects, read as requests
    ("mid.jsonl", json.dumps({"prompt": "a"}) + "\n" + json.dumps({"prompt": "b"}) + "\n{\"prompt\": \"c\"\n",
     "mid.jsonl: line 3: not valid JSON (Expecting ',' delimiter)"),
    ("mid2.jsonl", json.dumps({"prompt": "a"}) + "\n[1, 2]\n", "mid2.jsonl: line 2: expected a JSON object"),
    # and a ShareGPT list broken inside was told to "set format: jsonl"
    ("broken.json", '[\n{"conversations": [{"from": "human", "value": "hi there"}\n]}, {\n]',
     "broken.json: line 4: not valid JSON"),
])
def test_a_bad_line_inside_a_file_of_its_layout_gets_no_layout_hint(tmp_path, name, content, says):
    message = refusal(tmp_path, name, content)
    assert says in message, message
    assert "set format" not in message and "suffix" not in message, message


def test_a_suite_file_with_prompts_and_a_dataset_is_refused(tmp_path):
    write_jsonl(tmp_path / "w.jsonl", ROWS)
    # a pinned sha256 does not make the inline prompts the dataset's (only a loaded suite is both)
    digest = load_suite(suite_file(tmp_path, "{path: w.jsonl}")).dataset.sha256
    path = suite_file(tmp_path, f"{{path: w.jsonl, sha256: {digest}}}", prompts="[{name: x, text: not in the file}]")
    with pytest.raises(ConfigError) as info:
        load_suite(path)
    assert str(info.value) == f"{path}: prompts: give prompts or dataset, not both"


def test_a_row_of_many_keys_is_one_error_without_a_long_wait(tmp_path):
    """A row (or a landscape object) of 300,000 keys, a few MB, is checked for repeated keys in one
    pass. In a child with a timeout a hundred times what it needs: the check counted each key over
    the whole object (34,000 keys took 11 s; these would take hours)."""
    import subprocess
    import sys
    keys = ", ".join(f'"k{i}": 0' for i in range(300_000))
    (tmp_path / "wide.jsonl").write_text('{"prompt": "a"}\n{' + keys + "}\n")
    (tmp_path / "twice.jsonl").write_text('{"prompt": "a", ' + keys + ', "k7": 1}\n')
    code = ("import sys\nfrom tuner.config.suite import load_suite\nfrom tuner.config.yamlfile import ConfigError\n"
            "for name in sys.argv[1:]:\n"
            "    try:\n        load_suite(name)\n    except ConfigError as e:\n        print(e)\n")
    for name in ("wide", "twice"):
        suite_file(tmp_path, f"{{path: {name}.jsonl}}").rename(tmp_path / f"{name}.yaml")
    rows = subprocess.run([sys.executable, "-c", code, str(tmp_path / "wide.yaml"), str(tmp_path / "twice.yaml")],
                          capture_output=True, text=True, timeout=120, check=True).stdout.splitlines()
    assert len(rows) == 2, rows
    assert rows[0].startswith(f"{tmp_path / 'wide.jsonl'}: line 2: k0: unknown key"), rows[0]
    assert rows[1].startswith(f"{tmp_path / 'twice.jsonl'}: line 1: k7: given twice in one object"), rows[1]


def test_equal_bounds_are_one_length_not_an_error():
    """``max_prompt_chars`` equal to ``min_prompt_chars`` keeps prompts of exactly that length, and
    ``min_output_tokens`` equal to ``max_output_tokens`` one output length: neither is "below"/"above"
    the other; one past is refused."""
    from pydantic import ValidationError

    from tuner.config.dataset import DatasetSpec

    spec = DatasetSpec(path="d.jsonl", min_prompt_chars=40, max_prompt_chars=40,
                       min_output_tokens=64, max_output_tokens=64)
    assert (spec.max_prompt_chars, spec.min_output_tokens) == (40, 64)
    with pytest.raises(ValidationError, match="max_prompt_chars must not be below min_prompt_chars"):
        DatasetSpec(path="d.jsonl", min_prompt_chars=40, max_prompt_chars=39)
    with pytest.raises(ValidationError, match="min_output_tokens must not be above max_output_tokens"):
        DatasetSpec(path="d.jsonl", min_output_tokens=65, max_output_tokens=64)


def _big_jsonl(path, mb: float) -> int:
    """A JSONL file of about ``mb`` MB (prompts of 2,000 characters); its row count."""
    rows, size = [], 0
    while size < mb * 1e6:
        line = json.dumps({"id": f"q{len(rows)}", "prompt": f"request {len(rows)} " + "w" * 2000, "max_tokens": 8})
        rows.append(line)
        size += len(line) + 1
    path.write_text("\n".join(rows) + "\n")
    return len(rows)


@pytest.mark.parametrize("n, at_most", [(4, 0.5), (None, 2.0)], ids=["n-drawn", "every-row"])
def test_a_large_jsonl_is_read_without_holding_the_file_several_times(tmp_path, n, at_most):
    # QA (benchmarks/dataset_memory.py): a 300 MB JSONL loaded at 1.3 GB peak RSS (4.2x its size),
    # n: 64 or not: the file's bytes, its text, its lines and every row's prompt were all held at
    # once. The JSONL file is now read line by line, and with n only the n drawn rows are kept.
    # Python's own allocations (tracemalloc), not RSS: the same figure on any machine. (The read
    # used to ask for a buffer of the 1 GiB cap at once, which tracemalloc counts: 67x here.)
    import tracemalloc

    total = _big_jsonl(tmp_path / "big.jsonl", 16)  # a few MB of buffers are not the file's size
    size = (tmp_path / "big.jsonl").stat().st_size
    # (every row drawn: the single phase measures a few of them, as a suite of that many must say)
    path = suite_file(tmp_path, "{path: big.jsonl" + (f", n: {n}" if n else "") + "}", single="{prompts: 4}")
    tracemalloc.start()
    try:
        suite = load_suite(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(suite.prompts) == (n or total)
    assert peak < at_most * size, f"peak {peak / size:.2f}x the file's {size} bytes"
    # the draw itself is unchanged: the same requests as the rule in the README names
    if n:
        order = sorted(range(total), key=lambda i: hashlib.sha256(f"0:{i}".encode()).digest())[:n]
        assert [p.name for p in suite.prompts] == [f"q{i}" for i in order]


def test_a_large_file_read_in_pieces_keeps_its_characters_and_names_its_first_bad_byte(tmp_path, monkeypatch):
    # The file is read a piece at a time (tuner.config.dataset._scan): a character cut between two
    # pieces is still one character, and the first byte that is not UTF-8 is named by its offset in
    # the file, as when the file was decoded whole.
    import tuner.config.dataset as dataset

    monkeypatch.setattr(dataset, "_CHUNK", 7)  # every multi-byte character is cut somewhere
    rows = [{"prompt": "caf\u00e9 \u4e2d\u6587 \U0001f600 na\u00efve", "max_tokens": 8}, {"prompt": "second"}]
    data = ("\ufeff" + "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n").encode()
    (tmp_path / "u.jsonl").write_bytes(data)
    suite = load_suite(suite_file(tmp_path, "{path: u.jsonl}"))
    assert [p.text for p in suite.prompts] == [r["prompt"] for r in rows]
    bad = data.index("\U0001f600".encode()) + 1  # a 4-byte character's second byte, alone
    (tmp_path / "u.jsonl").write_bytes(data[:bad] + data[bad + 1:] )
    with pytest.raises(ConfigError) as info:
        load_suite(suite_file(tmp_path, "{path: u.jsonl}"))
    assert str(info.value).endswith(f"u.jsonl: line 1: not UTF-8 text (byte {bad - 1}); save the file as UTF-8")
    assert data[:bad - 1].decode("utf-8")  # every byte before it is UTF-8


@pytest.mark.parametrize("name", ["d.jsonl", "d.json"])
def test_a_file_that_changes_between_its_two_reads_is_refused(tmp_path, monkeypatch, name):
    # The SHA-256 recorded is the first read's; requests from other bytes would be stored under it.
    import tuner.config.dataset as dataset

    write_jsonl(tmp_path / "d.jsonl", ROWS)
    (tmp_path / "d.json").write_text(json.dumps([{"conversations": [
        {"from": "human", "value": "hello there"}, {"from": "gpt", "value": "general kenobi"}]}]))
    scan = dataset._scan
    monkeypatch.setattr(dataset, "_scan", lambda path: ("0" * 64, *scan(path)[1:]))
    with pytest.raises(ConfigError) as info:
        load_suite(suite_file(tmp_path, f"{{path: {name}}}"))
    assert str(info.value) == f"{tmp_path / name}: changed while being read; load it again when nothing is writing it"
