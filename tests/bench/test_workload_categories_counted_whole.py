"""The workload line lists the eight largest categories of the requests sent and says how many more there
are, and how many requests they hold. (QA qa188: a dataset of 12 categories listed 8, counting 22 of the
30 requests sent, with no word of the other 4.) Eight or fewer are listed whole, as before."""

import json

import pytest

from tuner.bench.workload import workload_line, workload_stats
from tuner.config.suite import load_suite


@pytest.mark.parametrize("kinds, tail", [
    (12, ", 4 more categories of 8 requests"),
    (9, ", 1 more category of 3 requests"),
    (8, ""),
])
def test_the_categories_left_out_of_the_line_are_counted(tmp_path, kinds, tail):
    rows = [{"prompt": f"request {i}: write a short poem", "category": f"c{i % kinds:02d}", "max_tokens": 8}
            for i in range(30)]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = load_suite({"name": "t", "dataset": {"path": "d.jsonl"}, "single": {"prompts": 2},
                        "sweep": {"concurrencies": [1, 30]}}, tmp_path)
    line = workload_line(workload_stats(suite))
    listed = line.split("; categories: ", 1)[1]
    assert listed.endswith(tail) if tail else "more categor" not in listed, line
    shown = [part.rsplit(" ", 1) for part in (listed[:-len(tail)] if tail else listed).split(", ")]
    assert len(shown) == min(8, kinds)
    # what is listed and what is counted after it add up to every request sent
    more = int(tail.split(" of ")[1].split()[0]) if tail else 0
    assert sum(int(n) for _, n in shown) + more == 30
