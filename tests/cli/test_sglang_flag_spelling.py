"""`tuner space check` and `tuner launch` take the three speculative flags under SGLang's own names
too, so a setting copied from a server's launch line works as it is (QA: it was "No such option")."""

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SGLANG_SPELLING = ["--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
                   "--speculative-num-draft-tokens", "3"]


def test_space_check_reads_the_setting_under_sglangs_names():
    r = subprocess.run([sys.executable, "-m", "tuner", "space", "check", "eagle3", *SGLANG_SPELLING, "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["requested"] == {"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 3}
    assert data["effective"] == {"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 2}


def test_launch_puts_the_setting_given_under_sglangs_names_on_the_command():
    study = str(ROOT / "studies" / "sim-demo.yaml")
    r = CliRunner().invoke(cli, ["launch", study, "--print", "--port", "31234", *SGLANG_SPELLING])
    assert r.exit_code == 0, r.output
    short = CliRunner().invoke(cli, ["launch", study, "--print", "--port", "31234",
                                     "--num-steps", "1", "--topk", "1", "--draft-tokens", "3"])
    assert short.exit_code == 0, short.output
    assert r.output == short.output
    assert "--speculative-num-steps 1 --speculative-eagle-topk 1" in r.output
