"""The rights check that opens a file and closes it (:func:`tuner.config.files.open_refused`) on a
named pipe (FIFO): opened to read, a FIFO waits for a writer, forever. ``tuner study create`` of a
study whose SQLite storage path was a FIFO (``mkfifo``; a path typed where a pipe lives) hung in the
storage's read check, printing nothing (QA, qa174). Now opened non-blocking: the check answers at
once, and the command ends in one line, exit 2, the FIFO left as it was.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading

import pytest

from support.model_study import model_study_yaml
from tuner.config.files import open_refused


@pytest.mark.parametrize("flags", [os.O_RDONLY, os.O_WRONLY, os.O_RDWR])
def test_a_fifo_is_checked_without_waiting_for_its_other_end(tmp_path, flags):
    fifo = tmp_path / "s.db"
    os.mkfifo(fifo)
    answer: list = []
    check = threading.Thread(target=lambda: answer.append(open_refused(fifo, flags)), daemon=True)
    check.start()
    check.join(5)
    waited = check.is_alive()
    if waited:  # the other end, so the check (blocked in open(2)) returns and the test ends
        other_end = os.O_WRONLY if flags == os.O_RDONLY else os.O_RDONLY
        os.close(os.open(fifo, other_end | os.O_NONBLOCK))
        check.join(5)
    assert not waited, "open_refused waited for the FIFO's other end"
    assert answer == [None]  # opened or not, no matter of this user's rights


def test_study_create_of_a_storage_that_is_a_fifo_ends_in_one_line(tmp_path):
    os.mkfifo(tmp_path / "s.db")
    (tmp_path / "s.yaml").write_text(model_study_yaml("s", "sqlite:///s.db", 2, noise=0.02, seed=1))
    said = f"{tmp_path / 's.db'} is a named pipe (FIFO), not an SQLite database file; name a file for the study"
    for command in (["study", "create"], ["study", "run"], ["doctor"]):
        done = subprocess.run([sys.executable, "-m", "tuner", *command, "s.yaml"], cwd=tmp_path,
                              timeout=60, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        assert done.returncode != 0, (command, done.stdout, done.stderr)
        if command == ["doctor"]:  # its storage line says it (qa174: "disk I/O error: check the URL")
            line = next(ln for ln in done.stdout.splitlines() if "storage:" in ln)
            assert line.startswith("fail") and said in line, done.stdout
            continue
        assert done.returncode == 2, done.stderr
        err = done.stderr
        assert err.startswith("error: s.yaml: storage: sqlite:///") and len(err.splitlines()) == 1, err
        # the path as it is (qa174: create said "disk I/O error; run it again once the storage answers")
        assert said in err, err
    assert stat.S_ISFIFO(os.stat(tmp_path / "s.db").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db", "s.yaml"]
