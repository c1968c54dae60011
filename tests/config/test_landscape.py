"""The landscape table format (tuner/config/landscape.py): what it accepts, and one clear line naming
the file and the key for everything it refuses."""

from __future__ import annotations

import copy

import pytest
from support.landscapes import table_from_profile, write_table

from tuner.config.landscape import load_landscape, parse_landscape
from tuner.config.yamlfile import ConfigError
from tuner.sglang.rules import SpecConfig

SMALL = {"name": "my-node", "concurrency": 32,
         "baseline": {"single_tok_per_s": 26.2, "tok_per_s@32": 808.7},
         "configs": [{"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 2, "accept_length": 1.8,
                      "single_tok_per_s": 43.6, "tok_per_s@32": 833.3},
                     {"num_steps": 3, "eagle_topk": 4, "num_draft_tokens": 16,
                      "single_tok_per_s": 70.0, "tok_per_s@32": 500.0}]}


def test_the_issue_example_loads(tmp_path):
    table = load_landscape(write_table(tmp_path / "t.json", SMALL))
    assert table.name == "my-node" and table.concurrencies == (32,)
    assert table.baseline.tok_per_s == {32: 808.7}
    row = table.configs[SpecConfig(1, 1, 2)]
    assert row.accept_length == 1.8 and row.single_tok_per_s == 43.6
    assert table.configs[SpecConfig(3, 4, 16)].accept_length is None
    assert table.speedups(SpecConfig(1, 1, 2))["speedup@32"] == pytest.approx(833.3 / 808.7)
    again = load_landscape(write_table(tmp_path / "again.json", table.to_dict()))  # to_dict is the file format
    assert (again.configs, again.baseline, again.concurrencies) == (table.configs, table.baseline, (32,))


def test_a_table_of_the_model_loads_every_row(tmp_path):
    data = table_from_profile("dense-27b-tp1", concurrency=8)
    table = load_landscape(write_table(tmp_path / "d.json", data))
    assert len(table.configs) == 949 and table.concurrencies == (8,)


def _edit(change):
    data = copy.deepcopy(SMALL)
    change(data)
    return data


@pytest.mark.parametrize("change, key, words", [
    (lambda d: d.pop("baseline"), "baseline", "required"),
    (lambda d: d.update(concurrency=[8, 8]), "concurrency", "distinct"),
    (lambda d: d.update(concurrency=0), "concurrency", "positive"),
    (lambda d: d.update(colour="red"), "colour", "unknown key"),
    (lambda d: d["baseline"].pop("tok_per_s@32"), "baseline.tok_per_s@32", "required"),
    (lambda d: d["configs"][1].update({"tok_per_s@8": 1.0}), "configs[1].tok_per_s@8", "not in the table's concurrency"),
    (lambda d: d["configs"][0].update(single_tok_per_s=-3), "configs[0].single_tok_per_s", "above 0"),
    (lambda d: d["configs"][0].update(single_tok_per_s="fast"), "configs[0].single_tok_per_s", "number"),
    (lambda d: d["configs"][0].update(accept_length=0.5), "configs[0].accept_length", "at least 1"),
    # QA: accepted silently before
    (lambda d: d["configs"][0].update(accept_length=50), "configs[0].accept_length", "more than steps=1"),
    (lambda d: d["configs"][0].update({"tok_per_s@032": 1.0}), "configs[0].tok_per_s@032", "unknown key"),
    (lambda d: d["configs"][0].update(num_steps=0), "configs[0].num_steps", "positive integer"),
    (lambda d: d["configs"][0].update(num_draft_tokens=3), "configs[0]", "it runs steps=1 topk=1 draft=2"),
    (lambda d: d["configs"][1].update(num_draft_tokens=60), "configs[1]", "tree-too-large"),
    (lambda d: d["configs"].append(dict(d["configs"][0])), "configs[2]", "listed twice"),
    (lambda d: d["configs"][0].update(speed=1), "configs[0].speed", "unknown key"),
    (lambda d: d.update(configs=[]), "configs", "non-empty"),
    # QA (qa66): a name holding a newline split the benchmark's heading and progress lines in two
    (lambda d: d.update(name="line1\n## fake"), "name", "control character '\\n'"),
    (lambda d: d.update(name="tab\there"), "name", "control character '\\t'"),
    # QA: a row at 1e308 tok/s loaded, then its noisy reading overflowed and `tuner study run`
    # crashed (ZeroDivisionError in model_suite); the baseline at 1e-320 loaded, then the baseline
    # "measured no single_tok_per_s" (its modelled duration was infinite)
    (lambda d: d["configs"][0].update({"tok_per_s@32": 1e308}), "configs[0].tok_per_s@32", "at most 1e+09"),
    (lambda d: d["baseline"].update(single_tok_per_s=1e-320), "baseline.single_tok_per_s", "at least 0.001"),
])
def test_bad_tables_are_one_line_naming_file_and_key(tmp_path, change, key, words):
    path = write_table(tmp_path / "bad.json", _edit(change))
    with pytest.raises(ConfigError) as err:
        load_landscape(path)
    text = str(err.value)
    assert text.startswith(f"{path}: {key}: ") and words in text and "\n" not in text


def test_bad_json_and_missing_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x",\n "concurrency": }')
    with pytest.raises(ConfigError, match=r"broken.json: line 2: not valid JSON"):
        load_landscape(path)
    with pytest.raises(ConfigError, match="file not found"):
        load_landscape(tmp_path / "nope.json")
    with pytest.raises(ConfigError, match="top level"):
        parse_landscape([1, 2], "list.json")


def test_several_concurrencies(tmp_path):
    data = _edit(lambda d: d.update(concurrency=[8, 32]))
    data["baseline"]["tok_per_s@8"] = 200.0
    with pytest.raises(ConfigError, match=r"configs\[0\].tok_per_s@8: required key is missing"):
        load_landscape(write_table(tmp_path / "t.json", data))
    for row in [data["baseline"], *data["configs"]]:
        row["tok_per_s@8"] = 100.0
    assert load_landscape(write_table(tmp_path / "t.json", data)).concurrencies == (8, 32)


@pytest.mark.parametrize("text, says", [
    ('{"name": "x", "name": "y"}', "bad.json: name: given twice in one object"),
    ("[" * 100_000 + "]" * 100_000, "bad.json: nested too deeply to read"),
    ('{"name": "node \\ud800"}', "bad.json: name: holds a lone UTF-16 surrogate"),
])
def test_json_that_is_no_table_is_one_line(tmp_path, text, says):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_landscape(path)
    assert str(err.value).startswith(f"{tmp_path}/{says}") and "\n" not in str(err.value)


def test_an_integer_no_float_holds_is_refused(tmp_path):
    data = _edit(lambda d: d["configs"][0].update(single_tok_per_s=10 ** 400))
    with pytest.raises(ConfigError, match=r"configs\[0\].single_tok_per_s: expected a number, got an integer of 401 digits"):
        load_landscape(write_table(tmp_path / "big.json", data))


FAILED_ROW = {"num_steps": 4, "eagle_topk": 8, "num_draft_tokens": 64, "failure": "oom"}


def test_a_row_may_say_how_its_launch_failed_and_it_stays_in_the_grid(tmp_path):
    data = table_from_profile(keep=lambda spec: spec.num_draft_tokens <= 8)
    data["configs"].append(dict(FAILED_ROW))
    table = load_landscape(write_table(tmp_path / "t.json", data))
    failed = SpecConfig(4, 8, 64)
    assert table.failures == {failed: "oom"} and failed not in table.configs
    assert table.listed == frozenset(table.configs) | {failed}
    again = parse_landscape(table.to_dict(), "round trip")  # written back as a failed row, not dropped
    assert again.failures == table.failures and again.configs == table.configs


@pytest.mark.parametrize("row, key, words", [
    ({**FAILED_ROW, "failure": "OOM"}, "configs[1].failure", "'OOM' is no failure class; give one of oom, "),
    ({**FAILED_ROW, "failure": 1}, "configs[1].failure", "1 is no failure class"),
    ({**FAILED_ROW, "single_tok_per_s": 50.0}, "configs[1].single_tok_per_s", "a failed setting has no figures"),
], ids=["unknown class", "not text", "figures beside it"])
def test_a_bad_failed_row_is_one_line_naming_its_key(row, key, words):
    data = table_from_profile(keep=lambda spec: spec == SpecConfig(3, 1, 4))
    data["configs"].append(row)
    with pytest.raises(ConfigError) as exc:
        parse_landscape(data, "t.json")
    assert exc.value.key == key and words in exc.value.message and "steps=4 topk=8 draft=64" in exc.value.message


def test_a_table_of_failures_only_is_refused():
    data = table_from_profile(keep=lambda spec: False)
    data["configs"] = [dict(FAILED_ROW)]
    with pytest.raises(ConfigError, match="all 1 rows are failures: a table needs at least one measured setting"):
        parse_landscape(data, "t.json")
