"""`FORCE_COLOR=1 tuner bench --url URL > bench.log`: the progress bar is drawn only on a terminal;
a file gets the tables (coloured, as FORCE_COLOR asks) and never the bar's redraws (tuner/cli/bench.py,
``_draws_a_bar``). A real simulator on 127.0.0.1, a real `tuner bench` process, stdout a real file.

QA (qa172): rich takes FORCE_COLOR as a terminal, so the log held the bar: the cursor hidden
(ESC [?25l), a carriage return and an erased line per refresh, all through a long suite.
"""

import os
import subprocess
import sys

import pytest
import yaml
from support.simproc import running_sim


@pytest.fixture(scope="module")
def server():
    with running_sim(speedup=50) as sim:
        yield sim.url


def test_a_log_file_gets_no_progress_bar(server, tmp_path):
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({
        "name": "s", "prompts": [{"name": "a", "text": "hello there"}],
        "single": {"lengths": [8], "repeats": 2},
        "sweep": {"concurrencies": [1, 2], "max_tokens": 8}, "warmup": {"requests": 1}, "timeout_s": 30}))
    log = tmp_path / "bench.log"
    env = {**os.environ, "FORCE_COLOR": "1", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    with open(log, "wb") as out:
        done = subprocess.run([sys.executable, "-m", "tuner", "bench", "--url", server,
                               "--suite", "suite.yaml"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                              stdout=out, stderr=subprocess.PIPE, timeout=300)
    assert done.returncode == 0, done.stderr
    text = log.read_text()
    assert "sweep" in text  # the tables are there
    assert "\x1b[?25l" not in text and "\r" not in text and "\x1b[2K" not in text, text[:400]
