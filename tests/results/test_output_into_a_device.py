"""An output that is no regular file -- a named pipe, a device such as ``/dev/null`` -- is written into,
as a shell's ``>`` writes, never renamed over (QA: as root, ``tuner study report -o /dev/null``
renamed a regular file over the device; every later ``> /dev/null`` on the machine wrote to that
file, and PostgreSQL's initdb then failed: "cannot create /dev/null: Permission denied")."""

from __future__ import annotations

import os
import stat
import threading

from support.cli_in_process import tuner_here
from support.model_study import make_model_study


def test_a_report_into_a_named_pipe_is_read_from_it_and_the_pipe_stays(tmp_path):
    study = make_model_study(tmp_path, "piped", n_trials=2)
    pipe = tmp_path / "page.html"
    os.mkfifo(pipe)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(pipe.read_bytes()), daemon=True)
    reader.start()  # the writer's open of a pipe waits for a reader
    r = tuner_here("study", "report", str(study), "-o", str(pipe), cwd=tmp_path)
    reader.join(timeout=60)
    assert r.exit_code == 0, r.output
    assert stat.S_ISFIFO(os.stat(pipe).st_mode), "the pipe was replaced by a file"
    assert read and read[0].lower().startswith(b"<!doctype html>") and b"piped" in read[0]
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


def test_a_device_that_refuses_the_write_is_one_line_naming_it(tmp_path):
    study = make_model_study(tmp_path, "full", n_trials=2)
    (tmp_path / "page.html").symlink_to("/dev/full")  # every write: ENOSPC
    r = tuner_here("study", "report", str(study), "-o", "page.html", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    # named as given: the device is written into through the link (as /dev/stdout is, qa172)
    assert r.output.strip().splitlines() == ["error: cannot write page.html: No space left on device"], r.output
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
