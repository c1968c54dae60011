"""A dataset given where a suite goes (`tuner bench --suite data.jsonl`, as SGLang's `bench_serving
--dataset-path` takes it) says so, with the suite that draws from it (QA: a JSONL file read as YAML was
"name: required key is missing" or "line 4: not valid YAML (expected '<document start>' ...)", a
ShareGPT list "expected a mapping at the top level, got list")."""

import json

import pytest

from support.cli_in_process import tuner_here
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROW = {"prompt": "Name a colour.", "max_tokens": 8}
SHAREGPT = [{"id": "a", "conversations": [{"from": "human", "value": "Name a colour, please."},
                                          {"from": "gpt", "value": "Red is a colour."}]}]


def _fix(shown, name: str, layout: str) -> str:
    return (f"{shown}: a {layout} dataset, not a suite file: give a suite YAML file that draws its requests "
            f"from it (name: my-traffic, dataset: {{path: {name}}}; see the README's \"Workloads from data\")")


@pytest.mark.parametrize("lines", [[ROW], [ROW, ROW, ROW, {"name": "x", **ROW}]])
def test_a_jsonl_dataset_as_the_suite_names_the_fix(tmp_path, lines):
    path = tmp_path / "traffic.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in lines))
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    assert str(err.value) == _fix(path, "traffic.jsonl", "JSON-lines")


def test_tuner_bench_refuses_a_sharegpt_file_as_the_suite_before_any_request(tmp_path):
    (tmp_path / "sg.json").write_text(json.dumps(SHAREGPT))
    res = tuner_here("bench", "--url", "http://127.0.0.1:9", "--suite", "sg.json", "--json", "out.json",
                     cwd=tmp_path)
    assert res.exit_code == 2
    assert res.stderr.strip().splitlines() == ["error: " + _fix("sg.json", "sg.json", "ShareGPT")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sg.json"]


def test_a_suite_written_as_json_still_loads(tmp_path):
    # JSON is YAML: a suite mapping saved as .json is a suite
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"name": "j", "prompts": [{"name": "a", "text": "Name a colour."}],
                                "single": {"lengths": [8]}}))
    assert [p.text for p in load_suite(path).prompts] == ["Name a colour."]
