"""A landscape table written from a data frame (pandas' ``to_json(orient="records")``): every row holds
every column, null where the row has no value -- ``"failure": null`` on each measured row, null figures
and a null accept length beside each failure. A key given as null is a key not given, so the table is
the grid it says, replayed by the model backend as the same table without the nulls (QA: it was
refused, the first measured row told "None is no failure class; give one of oom, ..."). A measured
row whose needed figure is null is still refused, one line naming the key and the null."""

from __future__ import annotations

import pytest
from support.landscapes import write_table

from tuner.config.landscape import load_landscape
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError
from tuner.engine.backends import ModelBackend
from tuner.sglang.rules import SpecConfig

COLUMNS = ("num_steps", "eagle_topk", "num_draft_tokens", "accept_length", "single_tok_per_s",
           "tok_per_s@32", "failure")
SPARSE = [{"num_steps": 2, "eagle_topk": 1, "num_draft_tokens": 3, "accept_length": 1.9,
           "single_tok_per_s": 51.3, "tok_per_s@32": 1112.7},
          {"num_steps": 2, "eagle_topk": 4, "num_draft_tokens": 3, "failure": "spec_runtime"},
          {"num_steps": 4, "eagle_topk": 4, "num_draft_tokens": 8, "single_tok_per_s": 60.2,
           "tok_per_s@32": 1050.0},
          {"num_steps": 6, "eagle_topk": 4, "num_draft_tokens": 16, "failure": "oom"}]


def _table(rows, name="node-b"):
    return {"name": name, "concurrency": 32, "baseline": {"single_tok_per_s": 30.0, "tok_per_s@32": 900.0},
            "configs": rows}


def _framed(rows):
    """The rows as a data frame writes them: every column in every row, null where absent."""
    return [{c: r.get(c) for c in COLUMNS} for r in rows]


def test_a_data_frame_table_is_the_table_without_its_nulls(tmp_path):
    framed = load_landscape(write_table(tmp_path / "framed.json", _table(_framed(SPARSE))))
    sparse = load_landscape(write_table(tmp_path / "sparse.json", _table(SPARSE)))
    assert framed.configs == sparse.configs and framed.failures == sparse.failures
    assert framed.failures == {SpecConfig(2, 4, 3): "spec_runtime", SpecConfig(6, 4, 16): "oom"}
    assert framed.configs[SpecConfig(4, 4, 8)].accept_length is None
    # replayed as such: a failed row fails at launch as it failed, a measured one is measured
    backend = ModelBackend(framed, load_suite("quick"), noise=0.0, seed=1)
    failed = backend.measure(SpecConfig(2, 4, 3), "trials/1", lambda m: None)
    assert failed.failure_class == "spec_runtime"
    measured = backend.measure(SpecConfig(2, 1, 3), "trials/0", lambda m: None)
    assert measured.failure_class is None
    assert measured.figures.tok_per_s_at(32) == pytest.approx(1112.7)


def test_a_null_figure_of_a_measured_row_is_refused_naming_it(tmp_path):
    rows = _framed(SPARSE)
    rows[2]["tok_per_s@32"] = None
    with pytest.raises(ConfigError) as err:
        load_landscape(write_table(tmp_path / "t.json", _table(rows)))
    line = str(err.value)
    assert "\n" not in line and "t.json: configs[2].tok_per_s@32: null" in line
    assert "the row of steps=4 topk=4 draft=8" in line and "failure" in line


def test_nulls_elsewhere_in_the_table_are_keys_not_given(tmp_path):
    data = _table(_framed(SPARSE))
    data.update(description=None, load_s=None)
    data["baseline"]["accept_length"] = None
    table = load_landscape(write_table(tmp_path / "t.json", data))
    assert (table.description, table.load_s, table.baseline.accept_length) == ("", None, None)
    data["baseline"]["tok_per_s@32"] = None  # a figure the baseline needs
    with pytest.raises(ConfigError) as err:
        load_landscape(write_table(tmp_path / "b.json", data))
    assert "b.json: baseline.tok_per_s@32: null: the baseline needs this figure" in str(err.value)


def test_a_null_flag_is_named_as_null(tmp_path):
    rows = _framed(SPARSE)
    rows[1]["num_draft_tokens"] = None
    with pytest.raises(ConfigError) as err:
        load_landscape(write_table(tmp_path / "t.json", _table(rows)))
    assert str(err.value).endswith("t.json: configs[1].num_draft_tokens: expected a positive integer, got null")
