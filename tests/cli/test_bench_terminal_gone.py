"""`tuner bench --url URL --json r.json` on a terminal that goes away mid-suite (started in it and
detached, the window closed: every write to it fails, EIO): the progress bar stops drawing, the suite
goes on and its result is saved to --json; the tables' own write is then the one error line, exit 1
(tuner/cli/bench_bar.py). A real simulator on 127.0.0.1, a real `tuner bench` process
on a real pseudo-terminal whose other end is closed once the bar has drawn.

QA (qa172): the bar's last redraw, as it stopped, raised the terminal's EIO and the suite's result
went with it: --json (help: "saved even if the server dies") was never written.
"""

import json
import os
import select
import subprocess
import sys
import time

import pytest
import yaml
from support.simproc import running_sim


@pytest.fixture(scope="module")
def server():
    with running_sim(speedup=10) as sim:  # slow enough that the suite outlasts the terminal
        yield sim.url


def test_the_result_is_saved_when_the_terminal_goes_away(server, tmp_path):
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({
        "name": "s", "prompts": [{"name": "a", "text": "hello there"}],
        "single": {"lengths": [128], "repeats": 3}, "sweep": {"concurrencies": [1, 2], "max_tokens": 256},
        "warmup": {"requests": 1}, "timeout_s": 60}))
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "xterm-256color"}
    try:
        proc = subprocess.Popen([sys.executable, "-m", "tuner", "bench", "--url", server,
                                 "--suite", "suite.yaml", "--json", "r.json"], cwd=tmp_path, env=env,
                                stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE,
                                start_new_session=True)
    finally:
        os.close(slave)
    try:
        drawn, deadline = b"", time.monotonic() + 120
        while b"single" not in drawn and time.monotonic() < deadline:  # the bar, on a measured request
            if select.select([master], [], [], 0.5)[0]:
                drawn += os.read(master, 65536)
        assert b"single" in drawn, drawn[-300:]
    finally:
        os.close(master)  # the terminal is gone, the suite still under way
    _, err = proc.communicate(timeout=300)
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["records"] and all(r["ok"] for r in saved["records"]), saved.get("error")
    assert err.decode().splitlines() == [
        "error: cannot write standard output: Input/output error (its terminal is gone?); to detach a "
        "command, send its output to a file: > FILE 2>&1"], err
    assert proc.returncode == 1
