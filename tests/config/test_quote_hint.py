"""A number or boolean YAML reads where a study file wants text (``server.extra_args`` items, model
paths, ``server.env`` values) is refused with the way out: quote it, as written
(tuner/config/yamlfile.py, ``validation_error``).

QA: ``extra_args: [--random-seed, 1]`` said only "input should be a valid string, got 1", and
``0x10`` said "got 16", a number the user never wrote.
"""

from pathlib import Path

import pytest

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("items, key, hint", [
    ("[--random-seed, 1]", "server.extra_args[1]", "YAML reads the unquoted 1 as a number: quote it ('1')"),
    ("[--served-model-name, 0x10]", "server.extra_args[1]",
     "the unquoted 0x10 as a number: quote it ('0x10')"),
    ("[--enable-torch-compile, true]", "server.extra_args[1]",
     "the unquoted true as a boolean: quote it ('true')"),
])
def test_a_number_in_extra_args_says_to_quote_it(tmp_path, items, key, hint):
    text = (ROOT / "studies" / "sim-demo.yaml").read_text()
    path = tmp_path / "q.yaml"
    path.write_text(text.replace("  tp_size: 8\n", f"  tp_size: 8\n  extra_args: {items}\n", 1))
    with pytest.raises(ConfigError) as err:
        load_study(path)
    line = str(err.value)
    assert f"{key}: input should be a valid string" in line and hint in line and "\n" not in line
