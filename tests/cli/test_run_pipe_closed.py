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


def _stored(study, tmp_path) -> dict:
    done = tuner_here("study", "status", str(study), "-f", "json", cwd=tmp_path)
    assert done.exit_code == 0, done.stderr
    return json.loads(done.stdout)


def test_a_run_whose_stdout_is_a_full_disk_goes_on(tmp_path):
    """`tuner study run S.yaml > /dev/full`: a log disk full from the start (or filling mid-night). The
    run goes on without printing progress, says so once on stderr, and measures its trials (QA,
    qa172: only a closed pipe was ridden out; this ended the run at its first line, exit 1, nothing
    measured)."""
    study = study_file(tmp_path, "full", 1, storage="sqlite:///full.db")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(study)], cwd=tmp_path,
                              stdout=full, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("progress: stdout cannot be written (No space left on device); the run goes on") == 1
    data = _stored(study, tmp_path)
    assert data["baseline"] and data["counts"].get("measured") == 1, data["counts"]


def test_a_run_whose_pipe_closes_before_its_first_line_goes_on(tmp_path):
    """`tuner study run S.yaml | true`: the reader is gone before the run prints its first line (the
    study created). The run goes on, measures its trials and exits 0 (QA, qa172: it exited 1 before
    anything ran)."""
    study = study_file(tmp_path, "gone", 1, storage="sqlite:///gone.db")
    run = subprocess.Popen([sys.executable, "-m", "tuner", "study", "run", str(study)], cwd=tmp_path,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    run.stdout.close()  # `| true`: closed before the run writes anything
    try:
        _, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, err
    assert b"progress: stdout was closed; the run goes on" in err, err
    data = _stored(study, tmp_path)
    assert data["baseline"] and data["counts"].get("measured") == 1, data["counts"]
