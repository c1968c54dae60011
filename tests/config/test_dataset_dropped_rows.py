"""Rows of a dataset file left out of the draw are counted, stored with the suite and shown in the
workload line (QA: the shipped sharegpt-mini drew 12 of its 13 entries, a ShareGPT file with a
one-turn conversation or a `max_prompt_chars` filter drew fewer requests than the file held, and
neither `tuner study status` nor the report said so: a silent change of the workload)."""

import json

from tuner.bench.workload import workload_line, workload_stats
from tuner.config.suite import load_suite

REPLY = {"from": "gpt", "value": "a reply of a few words"}


def _conv(text, *turns):
    return {"conversations": [{"from": "human", "value": text}, *turns]}


def _suite(tmp_path, name, data: str, **dataset):
    (tmp_path / name).write_text(data)
    return load_suite({"name": "t", "dataset": {"path": name, **dataset}}, tmp_path)


def test_sharegpt_conversations_sglang_drops_are_counted_and_shown(tmp_path):
    convs = [_conv("the first prompt here", REPLY), _conv("a prompt with no reply"),  # one turn
             _conv("hi", REPLY),  # a prompt under 2 tokens
             _conv("the last prompt here", REPLY)]
    suite = _suite(tmp_path, "d.json", json.dumps(convs))
    assert [p.text for p in suite.prompts] == ["the first prompt here", "the last prompt here"]
    assert (suite.dataset.dropped_short, suite.dataset.dropped_by_filters) == (2, 0)
    line = workload_line(workload_stats(suite))
    assert "2 drawn; rows dropped: 2 by SGLang's sharegpt rule" in line, line
    # stored and loaded again (a study's suite), the count stays with it
    stored = load_suite(suite.model_dump(mode="json"))
    assert workload_line(workload_stats(stored)) == line


def test_rows_the_length_filters_leave_out_are_counted(tmp_path):
    rows = "\n".join(json.dumps({"prompt": "x" * n}) for n in (5, 50, 7, 60))
    suite = _suite(tmp_path, "d.jsonl", rows, max_prompt_chars=10)
    assert len(suite.prompts) == 2
    assert (suite.dataset.dropped_short, suite.dataset.dropped_by_filters) == (0, 2)
    assert "2 drawn; rows dropped: 2 by the length filters" in workload_line(workload_stats(suite))


def test_custom_lines_sglang_drops_are_counted(tmp_path):
    lines = [{"conversations": [{"role": "system", "content": "be brief, please"}]},  # a system turn only
             {"conversations": [{"role": "user", "content": "the one prompt"},
                                {"role": "assistant", "content": "its reply, in words"}]}]
    suite = _suite(tmp_path, "c.jsonl", "\n".join(map(json.dumps, lines)), format="custom")
    assert [p.name for p in suite.prompts] == ["line2"] and suite.dataset.dropped_short == 1


def test_a_file_that_drops_nothing_is_stored_as_before_and_the_draw_is_unchanged(tmp_path):
    kept = [_conv(f"prompt number {i} of the file", REPLY) for i in range(6)]
    plain = _suite(tmp_path, "plain.json", json.dumps(kept), n=3, seed=7)
    assert "dropped_short" not in plain.model_dump(mode="json")["dataset"]
    assert "rows dropped" not in workload_line(workload_stats(plain))
    # the dropped entries take no place in the draw's order: the same n requests as without them
    mixed = kept[:2] + [_conv("one turn only")] + kept[2:4] + [_conv("ok", REPLY)] + kept[4:]
    drawn = _suite(tmp_path, "mixed.json", json.dumps(mixed), n=3, seed=7)
    assert [p.text for p in drawn.prompts] == [p.text for p in plain.prompts]
    assert drawn.dataset.dropped_short == 2


def test_a_study_stored_before_the_counts_continues_from_the_same_file(tmp_path):
    """A study of the shipped sharegpt-mini (which drops one entry) stored its suite without the
    count: the same study file continues it, and a real change of the file is still refused."""
    import pytest
    from support.older_study import OLDER_STUDY

    from tuner.config.study import load_study
    from tuner.config.yamlfile import ConfigError
    from tuner.engine.study import SUITE_ATTR, create_study, open_study

    path = tmp_path / "old.yaml"
    path.write_text(OLDER_STUDY.replace("suite: quick", "suite: sharegpt-mini")
                    + f"storage: sqlite:///{tmp_path / 'old.db'}\nworkdir: {tmp_path / 'work'}\n")
    config = load_study(path)
    create_study(config, config.storage)
    study = open_study("old", config.storage)
    suite = study.user_attrs[SUITE_ATTR]
    assert suite["dataset"].pop("dropped_short") == 1
    study.set_user_attr(SUITE_ATTR, suite)  # as a tuner before the counts stored it
    create_study(load_study(path), config.storage)  # before: "different suite (dataset differs)"
    suite["dataset"]["sha256"] = "0" * 64  # another file
    study.set_user_attr(SUITE_ATTR, suite)
    with pytest.raises(ConfigError, match=r"different suite \(dataset"):
        create_study(load_study(path), config.storage)


def test_the_report_names_the_dropped_rows(tmp_path):
    from tuner.results.report_data import ReportData
    from tuner.results.report_traffic import traffic_html

    suite = _suite(tmp_path, "d.json", json.dumps([_conv("the one prompt here", REPLY), _conv("one turn")]))
    data = ReportData(study_name="s", objectives=[], backend="sim", time_note="", baseline=None, records=[],
                      measured=[], front=[], picks=[], picks_note="", failures=[],
                      workload=workload_stats(suite))
    tables = []
    traffic_html(data, lambda headers, rows, cls: tables.append(rows) or "")
    requests = dict(tables[0])["requests"]
    assert requests.startswith("1 from dataset d.json (sharegpt; every row, in the file's order"), requests
    assert requests.endswith("; rows dropped: 1 by SGLang's sharegpt rule (under two turns, or a prompt or "
                             "reply under 2 tokens)"), requests
