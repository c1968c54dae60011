"""Which interpreter an exported command names (tuner/results/export.py, server_mapping): a study run on
SGLang exports its own ``server.python``; a simulated one exports plain ``python``, since the
interpreter that ran the simulator need not have SGLang."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.results.export import server_mapping
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]
SUITE = {"sweep": {"concurrencies": [32]}}


@pytest.mark.parametrize("backend, expected", [("sim", "python"), ("sglang", "/opt/sglang-env/bin/python")])
def test_the_exported_command_s_interpreter(tmp_path, backend, expected):
    data = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    data["server"].update(backend=backend, python="/opt/sglang-env/bin/python")
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    config = load_study(path)
    _, argv, _ = server_mapping(config, SearchSpace.load(config.search_space), SUITE, SpecConfig(3, 1, 4))
    assert argv[:3] == [expected, "-m", "sglang.launch_server"]
