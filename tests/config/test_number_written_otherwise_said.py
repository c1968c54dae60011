"""A number key given quoted digits (``tp_size: '8'``), or an integer key given a float YAML reads
(``n_trials: 1e1``, ``8.0``), says the fix: remove the quotes, or the integer to write, in the study,
search-space and suite files alike (tuner/config/yamlfile.py ``_number_hint``).

QA (qa228): ``server.tp_size: input should be a valid integer, got '8'`` and ``budget.n_trials: input
should be a valid integer, got 10.0`` named the key but not the fix; the reverse (a number where text
goes) already said to quote it."""

from __future__ import annotations

import pytest
import yaml
from support.cli_inputs import refused
from support.demo_study import ROOT, demo_study



def _create(study):
    """The one error line of ``tuner study create STUDY`` (exit 2, nothing written: support/cli_inputs.py)."""
    return refused(study.parent, ["study", "create", str(study)])


@pytest.mark.parametrize("key, value, said", [
    ("server.tp_size", "8", "got '8'; YAML reads the quoted '8' as text: remove the quotes (8) to give the number"),
    ("budget.n_trials", 1e1, "got 10.0; write it as an integer, 10, without a decimal point or exponent"),
    ("server.sim.speedup", "20.5", "got '20.5'; YAML reads the quoted '20.5' as text: remove the quotes (20.5)"),
])
def test_in_the_study_file(tmp_path, key, value, said):
    line = _create(demo_study(tmp_path, "nb", **{key: value}))
    assert f"nb.yaml: {key}: input should be a valid" in line and said in line, line
    assert not (tmp_path / "nb.db").exists()


def test_in_a_search_space_and_a_suite(tmp_path):
    space = yaml.safe_load((ROOT / "search_spaces" / "eagle3.yaml").read_text())
    space["params"]["speculative_num_steps"]["high"] = 8.0
    (tmp_path / "sp.yaml").write_text(yaml.safe_dump(space))
    line = _create(demo_study(tmp_path, "nb", search_space=str(tmp_path / "sp.yaml")))
    assert "sp.yaml: params.speculative_num_steps.high: input should be a valid integer, got 8.0; write it " \
           "as an integer, 8," in line, line
    suite = yaml.safe_load((ROOT / "tuner" / "config" / "suites" / "quick.yaml").read_text())
    suite["temperature"] = "0"
    (tmp_path / "su.yaml").write_text(yaml.safe_dump(suite))
    line = _create(demo_study(tmp_path, "nb", **{"bench.suite": str(tmp_path / "su.yaml")}))
    assert "su.yaml: temperature: input should be a valid number, got '0'; YAML reads the quoted '0' as " \
           "text: remove the quotes (0)" in line, line


@pytest.mark.parametrize("value", ["８", "8k", "3.5"])
def test_no_hint_where_removing_the_quotes_would_not_give_the_number(tmp_path, value):
    # other scripts' digits, a unit, a fraction for an integer: the plain line, no wrong advice
    line = _create(demo_study(tmp_path, "nb", **{"server.tp_size": value}))
    assert f"server.tp_size: input should be a valid integer, got {value!r}" in line, line
    assert "remove the quotes" not in line, line
