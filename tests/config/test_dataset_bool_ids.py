"""A JSON true or false as a row's id is no id: the requests are named by their lines (QA: two rows
with ids true and false were requests named "True" and "False", Python's bool being an int)."""

import json

from tuner.config.suite import load_suite


def test_boolean_ids_name_no_request(tmp_path):
    rows = [{"prompt": "the first request", "id": True}, {"prompt": "the second request", "id": False}]
    (tmp_path / "d.jsonl").write_text("\n".join(map(json.dumps, rows)))
    suite = load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path)
    assert [p.name for p in suite.prompts] == ["line1", "line2"]
    # distinct ids of text and numbers still name them
    rows = [{"prompt": "the first request", "id": "q1"}, {"prompt": "the second request", "id": 2}]
    (tmp_path / "d.jsonl").write_text("\n".join(map(json.dumps, rows)))
    assert [p.name for p in load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path).prompts] == ["q1", "2"]
