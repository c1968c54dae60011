"""The keys that take a YAML number of seconds (``server.startup_timeout_s``, ``stop_grace_s``,
``server.sim.load_seconds``, ``server.model.load_s``), given a duration with a unit as the budget
and trial timeouts take it (``20m``), say the number to write. QA: ``startup_timeout_s: 20m`` said
only "input should be a valid number, got '20m'", naming no fix."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError


def _study(tmp_path, backend: str, **server) -> str:
    data = model_study_data("s")
    if backend == "sim":
        data["server"] = {k: v for k, v in data["server"].items() if k != "model"}
        data["server"].update(backend="sim", sim={"profile": "k2.6-tp8-pcie"})
    for key, value in server.items():
        target = data["server"]
        *parents, last = key.split(".")
        for parent in parents:
            target = target[parent]
        target[last] = value
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    return str(tmp_path / "s.yaml")


@pytest.mark.parametrize("backend, key, written, seconds", [
    ("sim", "startup_timeout_s", "20m", "1200"),
    ("sim", "startup_timeout_s", "1h30m", "5400"),
    ("sim", "stop_grace_s", "10s", "10"),
    ("sim", "sim.load_seconds", "2s", "2"),
    ("model", "model.load_s", "10m", "600"),
])
def test_a_duration_with_a_unit_says_the_seconds_to_write(tmp_path, backend, key, written, seconds):
    with pytest.raises(ConfigError) as err:
        load_study(_study(tmp_path, backend, **{key: written}))
    assert err.value.key == f"server.{key}"
    assert err.value.message == (f"takes a YAML number of seconds, not a duration with a unit: write {seconds} "
                                 f"for {written!r}")


def test_create_says_it_in_one_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    _study(tmp_path, "sim", startup_timeout_s="20m")
    r = CliRunner().invoke(cli, ["study", "create", "s.yaml"], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines() == [f"error: {tmp_path / 's.yaml'}: server.startup_timeout_s: takes a "
                                             "YAML number of seconds, not a duration with a unit: write 1200 "
                                             "for '20m'"], r.output
    assert os.listdir(tmp_path) == ["s.yaml"]


@pytest.mark.parametrize("written", ["abc", "1d", "-5m"])
def test_other_text_keeps_the_type_s_words(tmp_path, written):
    with pytest.raises(ConfigError) as err:
        load_study(_study(tmp_path, "sim", startup_timeout_s=written))
    assert err.value.key == "server.startup_timeout_s" and "valid number" in err.value.message
