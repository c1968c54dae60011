"""The process named as holding a server's port after the stop (tuner/server/ports.py, ``port_holders``;
the launcher's "port N still busy after the server stopped: pid P (...) listens on it" warning) is named
by its command line as one line: shell-quoted, a storage password in it hidden as a GPU lock's holder
line hides it, and the characters that break or drive the line escaped. QA (qa152): a helper started as
``python -c "import socket\\n..."`` broke the warning over several lines, an ESC in an argument reached
the terminal raw, and a ``postgresql://user:password@...`` argument was printed as it is. A real
process (started in its own session, stopped by its group) holds the port."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from support.processes import wait_until

from tuner.server.ports import pick_free_port, port_holders


def test_the_holders_command_line_is_one_line_without_its_password():
    port = pick_free_port("127.0.0.1")
    code = (f"import socket, time\ns = socket.socket()\ns.bind(('127.0.0.1', {port}))\ns.listen()\n"
            "time.sleep(60)\n")
    # the program on stdin, so its arguments come first in its command line (shown up to 160 characters)
    argv = [sys.executable, "-", "postgresql://tuner:s3cret@db/optuna", "two\nlines", "\x1b[2J"]
    holder = subprocess.Popen(argv, stdin=subprocess.PIPE, start_new_session=True)
    try:
        holder.stdin.write(code.encode())
        holder.stdin.close()
        assert wait_until(lambda: port_holders(port), 30)
        said = port_holders(port)
    finally:
        os.killpg(holder.pid, signal.SIGTERM)
        holder.wait(30)
    assert said.startswith(f"pid {holder.pid} (")
    assert "\n" not in said and "\x1b" not in said, said
    assert "s3cret" not in said and "postgresql://tuner:***@db/optuna" in said, said
    assert "'two\\x0alines' '\\x1b[2J'" in said, said
