"""A study's ``server.facts`` stating a fact otherwise than the node reads it (here the simulator
profile, which is what the simulated server runs) is said on stderr at create and run: the read
fact is used, as the README's attention-backend section says (tuner/cli/study_target.py,
``say_fact_conflicts``).

QA: ``server.facts.gpu_compute_capability: "10.0"`` on a study of the 9.0 profile ``k2.6-tp8-pcie``
was dropped without a word by create and run; only ``tuner doctor`` said so.
"""

from pathlib import Path

import yaml
from click.testing import CliRunner

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def test_create_says_a_stated_gpu_the_profile_contradicts(tmp_path):
    data = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    data["server"]["facts"] = {"gpu_compute_capability": "10.0"}
    data["storage"] = "sqlite:///facts.db"
    path = tmp_path / "facts.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    r = CliRunner().invoke(cli, ["study", "create", str(path)])
    assert r.exit_code == 0, r.output
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, r.stderr
    assert "server.facts.gpu_compute_capability says 10.0" in warnings[0]
    assert "k2.6-tp8-pcie says 9.0" in warnings[0] and "remove the key" in warnings[0]
