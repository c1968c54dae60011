"""``COLUMNS=0`` on a terminal (a script's ``COLUMNS=$(tput cols)`` where tput found no terminal
size): rich takes a width of 0 as given and prints no table at all.

QA (qa157): ``COLUMNS=0 tuner space list eagle3`` on a terminal printed the line ``949 valid
effective configs`` alone, exit 0: the table was lost. Now the terminal's own size is used.
"""

import errno
import fcntl
import os
import struct
import subprocess
import sys
import termios


def _on_a_terminal(argv, env, columns=100):
    """Run ``argv`` with stdout on a pseudo-terminal ``columns`` wide; (exit code, its output)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen(argv, stdout=slave, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError as exc:  # EIO: every writer of the terminal has closed it
            if exc.errno != errno.EIO:
                raise
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    with proc.stderr:
        err = proc.stderr.read().decode()
    return proc.wait(timeout=60), out.decode("utf-8", "replace"), err


def test_a_zero_columns_terminal_still_shows_the_table():
    env = {**os.environ, "COLUMNS": "0", "TERM": "xterm"}
    code, out, err = _on_a_terminal([sys.executable, "-m", "tuner", "space", "list", "eagle3"], env)
    assert code == 0, err
    assert "valid effective configs" in out
    assert "num_steps" in out and "num_draft_tokens" in out  # the table's header
    assert len(out.splitlines()) > 900  # and its 949 rows
