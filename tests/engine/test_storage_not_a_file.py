"""A storage URL naming something that is there but is no database file (a device, a named pipe) is
said as what it is, not as missing (QA, qa167: ``sqlite:////dev/null`` was "/dev/null does not
exist"; qa169: a FIFO likewise), in one line, exit 2, nothing written to it or beside it."""

import os
import subprocess
import sys


def _list(url: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tuner", "study", "list", "--storage", url],
                          capture_output=True, text=True, timeout=120, cwd=cwd, stdin=subprocess.DEVNULL)


def test_a_named_pipe_is_named_as_one(tmp_path):
    fifo = tmp_path / "study.db"
    os.mkfifo(fifo)
    done = _list(f"sqlite:///{fifo}", tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is a named pipe (FIFO), not an SQLite database file" in lines[0], done.stderr
    assert "does not exist" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.db"]  # nothing made beside it


def test_a_device_is_named_as_one(tmp_path):
    done = _list("sqlite:////dev/null", tmp_path)
    assert done.returncode == 2, done.stderr
    assert "/dev/null is a device, not an SQLite database file" in done.stderr, done.stderr
    assert "does not exist" not in done.stderr
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")


def test_a_missing_file_is_still_missing(tmp_path):
    done = _list(f"sqlite:///{tmp_path / 'gone.db'}", tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"{tmp_path / 'gone.db'} does not exist (nothing was created)" in done.stderr
    assert not (tmp_path / "gone.db").exists()
