"""``-o`` naming a device or a pipe through a link -- ``/dev/stdout`` when stdout is a pipe, a link to a
named pipe -- is written into, as ``>`` writes and as ``-o /dev/null`` already was (README, "Written
files"), never renamed over. QA (qa172): `tuner study report S.yaml -o /dev/stdout | cat` said "-o:
/proc/PID/fd/pipe:[N]: cannot write in /proc/PID/fd: No such file or directory", a path the user
never gave: the link was followed to a pipe's name, which no open reaches."""

import os
import subprocess
import sys
import threading

from tuner.config.files import check_output, not_a_file, write_atomic, written_through

WRITE = ("import sys; from pathlib import Path; from tuner.config.files import check_output, write_atomic\n"
         "check_output('/dev/stdout', '-o'); write_atomic([(Path('/dev/stdout'), 'the page\\n')])")


def test_dev_stdout_into_a_pipe_is_written_into():
    done = subprocess.run([sys.executable, "-c", WRITE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the page\n" and "/proc/" not in done.stderr


def test_a_link_to_a_named_pipe_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "best.yaml"
    link.symlink_to(fifo)
    check_output(link, "-o")  # no refusal: its folder is none of its business
    assert written_through(link) == link
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_text()), daemon=True)
    reader.start()
    write_atomic([(link, "x: 1\n")])
    reader.join(10)
    assert read == ["x: 1\n"]
    assert link.is_symlink() and os.readlink(link) == str(fifo)  # neither cut nor replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.yaml", "pipe"]  # no temporary left


def test_kinds():
    assert not_a_file("/dev/null") == "a device"
    assert not_a_file("/") == "a folder"
    assert not_a_file(__file__) is None
    assert not_a_file("/no/such/file") is None
