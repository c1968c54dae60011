"""``-o`` naming something that is there but no file -- a named pipe, ``/dev/stdout`` when stdout is a
pipe, a device -- is refused in one line naming the flag and what it is, nothing written: the output is
written beside it and renamed over it, which a pipe or a device cannot take (QA, qa172: `tuner study
report S.yaml -o /dev/stdout | cat` said "-o: /proc/PID/fd/pipe:[N]: cannot write in /proc/PID/fd: No
such file or directory", a path the user never gave)."""

import os
import subprocess
import sys

import pytest

from tuner.config.files import check_output, not_a_file
from tuner.config.yamlfile import ConfigError


def test_a_named_pipe_is_refused_as_one(tmp_path):
    fifo = tmp_path / "best.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError) as exc:
        check_output(fifo, "-o")
    assert str(exc.value) == f"-o: {fifo}: is a named pipe (FIFO), not a file; give a file name (commands " \
                             "that print leave the flag out)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best.yaml"]


def test_dev_stdout_on_a_pipe_is_named_as_given():
    code = ("from tuner.config.files import check_output\n"
            "try:\n    check_output('/dev/stdout', '-o')\nexcept Exception as e:\n    import sys; print(e, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=60)
    assert done.stderr.strip() == "-o: /dev/stdout: is a named pipe (FIFO), not a file; give a file name " \
                                  "(commands that print leave the flag out)", done.stderr
    assert "/proc/" not in done.stderr


def test_kinds():
    assert not_a_file("/dev/null") == "a device"
    assert not_a_file("/") == "a folder"
    assert not_a_file(__file__) is None
    assert not_a_file("/no/such/file") is None
