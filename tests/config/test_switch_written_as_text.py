"""A switch in ``server.args`` or a space's ``fixed`` given text that reads as a boolean elsewhere says
the fix: quoted ``"true"`` to remove the quotes, YAML 1.1's ``yes``/``on``/``off`` to write ``true`` or
``false`` (tuner/config/server_arg_checks.py ``_switch_hint``).

QA (qa228): ``disable_cuda_graph: "true"`` and ``enable_dp_attention: yes`` said only ``expected true
or false (a switch), got 'true'``: quoted, the line shows the value as the user wrote it and reads as
if it were right; unquoted ``yes`` is a boolean to SGLang's own loader (PyYAML, YAML 1.1) and text to
the tuner (YAML 1.2)."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.demo_study import ROOT, demo_study

from tuner.cli import cli


@pytest.mark.parametrize("written, said", [
    ('"true"', "got 'true' (quoted, it is text): remove the quotes, true"),
    ("'false'", "got 'false' (quoted, it is text): remove the quotes, false"),
    ("yes", "got 'yes' (these files are read as YAML 1.2, where yes is text, not a boolean): write true"),
    ("off", "got 'off' (these files are read as YAML 1.2, where off is text, not a boolean): write false"),
])
def test_in_server_args(tmp_path, written, said):
    study = demo_study(tmp_path, "sw", **{"server.args": {"trust_remote_code": "PLACEHOLDER"}})
    study.write_text(study.read_text().replace("PLACEHOLDER", written))
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert f"sw.yaml: server.args: trust_remote_code: expected true or false (a switch), {said}" in lines[0]
    assert not (tmp_path / "sw.db").exists()


def test_in_fixed(tmp_path):
    space = yaml.safe_load((ROOT / "search_spaces" / "eagle3.yaml").read_text())
    space["fixed"] = {"enable_mixed_chunk": "on"}
    (tmp_path / "sp.yaml").write_text(yaml.safe_dump(space))
    study = demo_study(tmp_path, "sw", search_space=str(tmp_path / "sp.yaml"))
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert "sp.yaml: fixed: enable_mixed_chunk: expected true or false (a switch), got 'on' (these files are " \
           "read as YAML 1.2, where on is text, not a boolean): write true" in r.output, r.output


def test_other_text_is_said_as_before(tmp_path):
    study = demo_study(tmp_path, "sw", **{"server.args": {"trust_remote_code": "maybe"}})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert r.output.strip().endswith("trust_remote_code: expected true or false (a switch), got 'maybe'"), r.output
