"""``dataset.n`` written as other tools say "every row" (``all``, ``-1``, ``0``) is refused with the way to every
row, leaving n out (QA qa207: "input should be a valid integer, got 'all'" and "input should be greater than or
equal to 1", the fix left to guess); left out, every row is drawn in the file's order."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROWS = [{"prompt": f"plain prompt number {i}", "max_tokens": 8} for i in range(3)]


def _suite(folder, n: str) -> None:
    (folder / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (folder / "s.yaml").write_text(f"name: s\ndataset: {{path: d.jsonl{n}}}\n")


@pytest.mark.parametrize("written, said", [("all", "'all'"), ("ALL", "'ALL'"), ("-1", "-1"), ("0", "0")])
def test_every_row_written_as_a_count_is_refused_with_the_way_to_every_row(tmp_path, written, said):
    _suite(tmp_path, f", n: {written}")
    with pytest.raises(ConfigError) as err:
        load_suite(tmp_path / "s.yaml")
    assert str(err.value) == (f"{tmp_path / 's.yaml'}: dataset.n: {said} is no count of requests; leave n out to draw "
                              "every row (in the file's order), or give how many to draw (1 or more)")


@pytest.mark.parametrize("n, drawn", [("", 3), (", n: null", 3), (", n: 2", 2)])
def test_n_left_out_or_a_count_is_taken(tmp_path, n, drawn):
    _suite(tmp_path, n)
    suite = load_suite(tmp_path / "s.yaml")
    assert len(suite.prompts) == drawn
    if drawn == len(ROWS):  # every row, in the file's order
        assert [p.text for p in suite.prompts] == [r["prompt"] for r in ROWS]
