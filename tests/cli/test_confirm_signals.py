"""SIGTERM to `tuner study confirm` (Slurm's scancel, a pod stopped): as for `tuner study run`, the
notice comes at once, the server is stopped, one line says so and the exit is 143; the round's
repeats measured so far stay stored. Real processes, real signals.

QA: confirm handled Ctrl-C only; SIGTERM stopped its server but exited 143 with nothing said, and a
SIGTERM between two measurements ended it at once, mid storage write.
"""

import json
import os
import signal
import subprocess
import sys

from support.faults import study_file, wait_for
from tuner.server.procs import group_members, terminate_group


def _confirm_server(workdir):
    for f in (workdir / "servers").glob("*.json"):
        try:
            rec = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        if "/confirm/" in rec.get("log_path", ""):
            return rec
    return None


def test_sigterm_during_confirm_says_so_and_stops_the_server(tmp_path):
    study = study_file(tmp_path, "conf", 1, storage="sqlite:///conf.db")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(study)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    out_path = tmp_path / "out.txt"
    with open(out_path, "w") as out:
        tuner = subprocess.Popen([sys.executable, "-m", "tuner", "study", "confirm", str(study), "--picks", "0",
                                  "--repeats", "2"], stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path,
                                 start_new_session=True, env=env)
    rec = None
    try:
        rec = wait_for(lambda: _confirm_server(tmp_path / "conf"), 180, "a confirmation server", procs=[tuner])
        tuner.send_signal(signal.SIGTERM)
        assert tuner.wait(timeout=120) == 143
        text = out_path.read_text()
        assert "SIGTERM: stopping the server" in text, text
        assert "interrupted: server stopped; the rounds measured so far are stored" in text, text
        assert "Traceback" not in text, text
        assert not group_members(rec["pgid"]), "the server was left running"
    finally:
        if tuner.poll() is None:
            terminate_group(tuner.pid, 5, leader=tuner)
        if rec is not None and group_members(rec["pgid"]):
            os.killpg(rec["pgid"], signal.SIGKILL)
