"""`tuner study run STUDY.yaml 2>&1 | head -1`: stdout and stderr are one pipe, closed by its reader
after the first line. The run goes on to the end (README, Live progress), measures every trial and
exits 0; nothing is left running. Real processes, a real pipe.

QA: the notice "progress: stdout was closed; ..." went to the same closed pipe, its BrokenPipeError
escaped the handler, and the run ended at once, exit 1, the baseline not measured.
"""

import json
import subprocess
import sys

from support.cli_in_process import tuner_here
from support.faults import study_file


def test_a_run_whose_stdout_and_stderr_pipe_closes_goes_on(tmp_path):
    # one trial: the pipe closes at the first line, before the baseline, so the baseline and the
    # trial (each launched, measured and said, into the closed pipe) are the run going on after
    # the notice; a second trial went through the same loop again
    study = study_file(tmp_path, "pc", 1, storage="sqlite:///pc.db")
    run = subprocess.Popen([sys.executable, "-m", "tuner", "study", "run", str(study)], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        assert run.stdout.readline()  # `head -1`
        run.stdout.close()
        assert run.wait(timeout=300) == 0
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    # status only reads the storage: in this process (a Python start-up saved)
    done = tuner_here("study", "status", str(study), "-f", "json", cwd=tmp_path)
    assert done.exit_code == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["baseline"] and data["counts"].get("measured") == 1, data["counts"]
    assert not list((tmp_path / "pc" / "servers").glob("*.json"))
    for log in (tmp_path / "pc").rglob("server.log"):
        assert "# tuner: stopped" in log.read_text(errors="replace"), log
