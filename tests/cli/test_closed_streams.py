"""`tuner` started with stdin, stdout or stderr closed (`<&-`, `>&-`; cron jobs and daemons that
close them): a closed stream reads as /dev/null, so every command does what it does with
`</dev/null` or `>/dev/null`, and a file the tuner opens never takes a standard stream's number.
Real processes, the streams closed in the child before it runs; the steps around them (a study
created or run first, its status read after) run in this process (click's runner), as they need no
closed stream and no process of their own.

QA: with stdout closed every `tuner study` command ended in `AttributeError: 'NoneType' object has
no attribute 'isatty'` (tuner/cli/output.py, at import), `tuner study run` included; with stdin
closed `tuner study delete NAME` did the same instead of asking for --yes.
"""

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from support.model_study import model_study_yaml
from support.prepared_once import prepared_once
from tuner.cli import cli

STUDY = model_study_yaml("cs", "sqlite:///cs.db", 2, noise=0.02, seed=1)


def _tuner(cwd, *args, close=(), stderr=True):
    """Run tuner with the file descriptors in ``close`` closed; (exit code, stderr text)."""
    def closing():
        for fd in close:
            os.close(fd)

    done = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=cwd, preexec_fn=closing, timeout=300,
                          stdin=subprocess.DEVNULL if 0 not in close else None,
                          stdout=subprocess.PIPE if 1 not in close else None,
                          stderr=subprocess.PIPE if 2 not in close else None)
    return done.returncode, (done.stderr or b"").decode(errors="replace")


def _here(*args):
    """``tuner ARGS`` in this process (in the ``folder`` fixture's folder), its streams open:
    (exit code, stdout text, stderr text)."""
    r = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def folder(tmp_path, monkeypatch):
    (tmp_path / "cs.yaml").write_text(STUDY)
    monkeypatch.chdir(tmp_path)  # for _here; the subprocesses get it as cwd
    return tmp_path


def test_run_with_stdin_and_stdout_closed_measures_and_keeps_the_storage_whole(folder):
    code, err = _tuner(folder, "study", "run", "cs.yaml", close=(0, 1))
    assert code == 0 and "Traceback" not in err, err
    code, out, err = _here("study", "status", "cs.yaml", "-f", "json")
    assert code == 0, err
    code, out, err = _here("study", "status", "cs.yaml", "-f", "csv")
    assert code == 0 and out.count(",measured,") == 2, out + err


def _ran(folder):
    (folder / "cs.yaml").write_text(STUDY)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        assert _here("study", "run", "cs.yaml")[0] == 0


def test_status_with_stdout_closed_is_quiet(tmp_path_factory):
    # the study run once per session in this process (whichever xdist worker asks first), a copy each
    folder = prepared_once(tmp_path_factory, "cs-ran", _ran)
    for fmt in ("table", "json"):
        code, err = _tuner(folder, "study", "status", "cs.yaml", "-f", fmt, close=(1,))
        assert code == 0 and "Traceback" not in err, err


def test_delete_with_stdin_closed_asks_for_yes(folder):
    assert _here("study", "create", "cs.yaml")[0] == 0
    code, err = _tuner(folder, "study", "delete", "cs.yaml", close=(0,))
    assert code == 2 and "Traceback" not in err, err
    assert "confirm with --yes (stdin is not a terminal)" in err, err
    code, _, _ = _here("study", "status", "cs.yaml")
    assert code == 0  # still there
