"""``single.prompts`` over a suite's prompts: the way on for a study created before the check
(``tuner study run --study NAME``) is said where a study file named the suite, and not where no
study is involved: ``tuner bench --suite FILE`` (tuner/config/suite.py, ``TooManySinglePrompts``).

QA: `tuner bench --suite FILE` refused such a suite telling the user to `tuner study run`.
"""

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SUITE = {"name": "s", "prompts": [{"name": "a", "text": "hello"}], "single": {"prompts": 2, "lengths": [8]},
         "sweep": {"concurrencies": [1], "max_tokens": 8}}


def test_the_study_hint_only_where_a_study_named_the_suite(tmp_path):
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE))
    suite = str(tmp_path / "suite.yaml")
    r = CliRunner().invoke(cli, ["bench", "--url", "http://127.0.0.1:9", "--suite", suite])
    assert r.exit_code == 2 and "2 prompts asked for, but the suite has 1 prompt" in r.output, r.output
    assert "tuner study run" not in r.output
    data = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    data["bench"] = {"suite": "suite.yaml"}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"suite has 1 prompt; .*; a study created with it .* --study NAME"):
        load_study(tmp_path / "study.yaml")
