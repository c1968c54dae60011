"""A server whose SIGTERM handler forks a helper into a session of its own and then exits (a crash
reporter, a daemonizing cleanup) must not outlive the stop. The stop looked for the group's escapees
first and its members after: a member that forked such a child and exited between the two looks left
both empty, the stop was "done" and the child, holding the server's listening socket, ran on (QA
qa110: an SGLang stand-in doing this under ``tuner study run`` left one such process per launch, and
each stop warned "port ... still busy after the server stopped").

The interleaving is made certain, not left to chance: the stand-in's handler waits for a go-file
before it forks, and the tuner's real mark check (``procs._carries_mark``, which the escapees' look
calls for every process outside the group) is wrapped to write that file and wait until the
leader has exited, its child out of the group. Nothing is faked: every process, signal and look is
real; only when the fork happens is chosen."""

from __future__ import annotations

import os
import signal
import sys
import time

from support.processes import STARTED_GROUPS

from tuner.server import procs
from tuner.server.launcher import ServerProcess
from tuner.server.orphans import list_records
from tuner.server.ports import pick_free_port, port_free

# Serves 200 on its port; at SIGTERM, once told to go, forks a child that leaves the group (keeping
# the listening socket, ignoring SIGTERM), waits until it has, and exits 0.
SPAWNS_AT_SIGTERM = r"""
import os, pathlib, signal, socket, sys, time
port, folder = int(sys.argv[1]), pathlib.Path(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen()

def spawn(*_):
    (folder / "got-term").write_text("")
    for _ in range(300):
        if (folder / "go").exists():
            break
        time.sleep(0.01)
    child = os.fork()
    if child == 0:
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        (folder / "child").write_text(str(os.getpid()))
        time.sleep(600)
        os._exit(0)
    while not (folder / "child").exists():
        time.sleep(0.01)
    os._exit(0)

signal.signal(signal.SIGTERM, spawn)
while True:
    c, _ = s.accept()
    c.recv(4096)
    c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
    c.close()
"""


def test_a_child_forked_out_of_the_group_at_sigterm_is_stopped_too(tmp_path, monkeypatch):
    port = pick_free_port("127.0.0.1")
    srv = ServerProcess.from_argv([sys.executable, "-c", SPAWNS_AT_SIGTERM, str(port), str(tmp_path)],
                                  host="127.0.0.1", port=port, log_path=tmp_path / "server.log",
                                  workdir=tmp_path, startup_timeout_s=60, stop_grace_s=1)
    real = procs._carries_mark
    fired = []

    def fork_during_the_look(pid: int, mark: str) -> bool:
        if not fired and (tmp_path / "got-term").exists():
            fired.append(True)
            (tmp_path / "go").write_text("")
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # the leader gone, its child out of the group
                st = procs.read_stat(srv.pid)
                if (tmp_path / "child").exists() and (st is None or not st.alive):
                    break
                time.sleep(0.01)
        return real(pid, mark)

    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        srv.wait_ready()
        monkeypatch.setattr(procs, "_carries_mark", fork_during_the_look)
    finally:
        srv.stop()
    assert fired, "the stand-in never forked during the stop"
    child = procs.read_stat(int((tmp_path / "child").read_text()))
    if child is not None and child.alive:  # do not leak it into other tests, then fail
        os.kill(child.pid, signal.SIGKILL)
    assert child is None or not child.alive, f"the child forked at SIGTERM outlived the stop: {child}"
    assert port_free("127.0.0.1", port) and not list_records(tmp_path)
