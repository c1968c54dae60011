"""`tuner launch STUDY.yaml` stopped by a signal: Ctrl-C, SIGTERM and SIGHUP each stop the server and
end with the same line, `interrupted; server stopped`, exit 130, 143 or 129. Real processes, real
signals.

QA: SIGTERM and SIGHUP stopped the server but ended without that line (only Ctrl-C had it).
"""

import json
import os
import signal
import subprocess
import sys

import pytest

from support.faults import study_file, wait_for
from support.processes import signals_at_default
from tuner.server.procs import group_members, terminate_group


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["int", "term", "hup"])
def test_a_signal_stops_the_launched_server_and_says_so(sig, tmp_path):
    study = study_file(tmp_path, "ls", 1, storage="sqlite:///ls.db")
    out_path = tmp_path / "out.txt"
    with open(out_path, "w") as out:
        tuner = subprocess.Popen(signals_at_default([sys.executable, "-m", "tuner", "launch", str(study)]),
                                 stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True,
                                 env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        wait_for(lambda: "ready; Ctrl-C stops the server" in out_path.read_text(), 120, "the server", procs=[tuner])
        pgids = [json.loads(f.read_text())["pgid"] for f in (tmp_path / "ls" / "servers").glob("*.json")]
        assert pgids
        tuner.send_signal(sig)
        assert tuner.wait(timeout=60) == (130 if sig == signal.SIGINT else 128 + sig)
        text = out_path.read_text()
        assert "interrupted; server stopped" in text and "Traceback" not in text, text
        assert not any(group_members(g) for g in pgids), "the server was left running"
        assert not list((tmp_path / "ls" / "servers").glob("*.json")), "a server record is left"
    finally:
        if tuner.poll() is None:
            terminate_group(tuner.pid, 5, leader=tuner)
