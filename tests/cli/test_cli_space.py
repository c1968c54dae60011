"""`tuner space check|list` as a user runs them: the installed console script, real exit codes."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EAGLE3 = str(ROOT / "search_spaces" / "eagle3.yaml")


def tuner(*args):
    return subprocess.run([sys.executable, "-m", "tuner", *args], capture_output=True, text=True, timeout=60)


def test_list_counts_949():
    r = tuner("space", "list", EAGLE3, "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["count"] == 949 == len(data["configs"])
    r = tuner("space", "list", EAGLE3)
    assert "949 valid effective configs" in r.stdout


def test_check_reports_the_articles_rewrite():
    r = tuner("space", "check", EAGLE3, "--num-steps", "1", "--topk", "1", "--draft-tokens", "3")
    assert r.returncode == 0
    assert "runs as steps=1 topk=1 draft=2" in r.stdout
    data = json.loads(tuner("space", "check", EAGLE3, "--num-steps", "1", "--topk", "1",
                            "--draft-tokens", "3", "--json").stdout)
    assert data["effective"] == {"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 2}
    assert data["rewritten"] is True


def test_check_invalid_exits_1_and_names_the_rule():
    r = tuner("space", "check", EAGLE3, "--topk", "4")
    assert r.returncode == 1
    assert "all-or-none" in r.stdout and "AssertionError" in r.stdout
    r = tuner("space", "check", EAGLE3, "--num-steps", "1", "--topk", "4", "--draft-tokens", "8", "--json")
    assert r.returncode == 1
    data = json.loads(r.stdout)
    assert data["violation"]["rule"] == "tree-too-large"
    assert "after the full model load" in data["violation"]["fails"] and data["violation"]["stage"] == "startup"


def test_bad_space_file_exits_2_with_one_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("params:\n  speculative_num_steps: {low: 3, high: 1}\n")
    r = tuner("space", "list", str(p))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(p) in lines[0] and "speculative_num_steps" in lines[0]
    assert r.stdout == ""
