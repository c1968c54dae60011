"""``dataset.default_max_tokens`` given above ``max_output_tokens`` (1024 unless given), which caps every
request's output length, is refused naming both and the fix (QA qa207: ``default_max_tokens: 4096`` drew
requests of 1024 tokens, silently). At or below the cap, or with the cap raised, the length written is
the one drawn; a study with such an inline suite is refused before anything is written."""


import pytest
from support.inline_suite_study import refused_create

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def _suite(folder, dataset: str) -> None:
    (folder / "d.jsonl").write_text('{"prompt": "Name three rivers of Europe."}\n')
    (folder / "s.yaml").write_text(f"name: s\ndataset: {{path: d.jsonl, {dataset}}}\n")


@pytest.mark.parametrize("dataset, cap", [("default_max_tokens: 4096", "1024 (its default)"),
                                          ("default_max_tokens: 600, max_output_tokens: 512", "512")])
def test_a_default_above_the_cap_is_refused(tmp_path, dataset, cap):
    _suite(tmp_path, dataset)
    with pytest.raises(ConfigError) as err:
        load_suite(tmp_path / "s.yaml")
    default = dataset.split(",")[0].split(": ")[1]
    said = cap.split(" ")[0]
    assert str(err.value) == (
        f"{tmp_path / 's.yaml'}: dataset.default_max_tokens: {default} is above max_output_tokens {cap}, which caps "
        f"every request's output length, so the rows without max_tokens would be sent at {said}; raise "
        f"max_output_tokens to {default} or more, or lower default_max_tokens")


@pytest.mark.parametrize("dataset, drawn", [("default_max_tokens: 1024", 1024),
                                            ("default_max_tokens: 4096, max_output_tokens: 4096", 4096),
                                            ("max_output_tokens: 128", 128)])  # the default 256, capped: not given
def test_a_default_within_the_cap_is_drawn_as_written(tmp_path, dataset, drawn):
    _suite(tmp_path, dataset)
    assert [p.max_tokens for p in load_suite(tmp_path / "s.yaml").prompts] == [drawn]


def test_a_study_with_such_an_inline_suite_is_refused_and_nothing_written(tmp_path):
    (tmp_path / "d.jsonl").write_text('{"prompt": "Name three rivers of Europe."}\n')
    line = refused_create(tmp_path, "cap", "{name: cap, dataset: {path: d.jsonl, default_max_tokens: 2048}}")
    assert line.startswith(
        f"error: {tmp_path / 'study.yaml'}: bench.suite.dataset.default_max_tokens: 2048 is above max_output_tokens "
        "1024 (its default)"), line
