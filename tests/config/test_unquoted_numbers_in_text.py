"""A text option of SGLang's (a model name, a path, a revision) given an unquoted ``0x10``, ``007``
or ``1.50`` in ``server.args`` or a space's ``fixed``: YAML reads a number, whose ``str()`` SGLang
would be given (``'16'``, ``'7'``, ``'1.5'``), as its own ``--config`` loader does with the same YAML.
Refused with one line that says to quote it (tuner/config/server_arg_checks.py,
tuner/config/yamlfile.py ``written_numbers``); quoted, the text is kept as written.

QA: ``served_model_name: 0x10`` launched and exported as ``16``.
"""

from pathlib import Path

import pytest
import yaml

from tuner.config.space import load_space
from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _study(tmp_path, value: str) -> Path:
    text = (ROOT / "studies" / "sim-demo.yaml").read_text()
    path = tmp_path / "t.yaml"
    args = f"  args: {{served_model_name: {value}}}\n"
    path.write_text(text.replace("  tp_size: 8\n", "  tp_size: 8\n" + args, 1))
    return path


@pytest.mark.parametrize("written, number", [("0x10", "16"), ("007", "7"), ("1.50", "1.5")])
def test_an_unquoted_number_for_a_text_option_is_refused(tmp_path, written, number):
    with pytest.raises(ConfigError) as err:
        load_study(_study(tmp_path, written))
    line = str(err.value)
    assert f"served_model_name: YAML reads the unquoted {written} as the number" in line
    assert f"SGLang would be given '{number}'; quote it (served_model_name: '{written}')" in line


def test_a_quoted_one_or_a_number_written_as_it_reads_is_kept(tmp_path):
    assert load_study(_study(tmp_path, "'0x10'")).server.args["served_model_name"] == "0x10"
    assert load_study(_study(tmp_path, "42")).server.args["served_model_name"] == 42  # '42' either way


def test_a_space_s_fixed_text_option_too(tmp_path):
    data = yaml.safe_load((ROOT / "search_spaces" / "eagle3.yaml").read_text())
    data.pop("fixed", None)
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(data) + "fixed: {revision: 0123456}\n")
    with pytest.raises(ConfigError, match=r"fixed: revision: YAML reads the unquoted 0123456 as the number"):
        load_space(path)
