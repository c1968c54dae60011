"""The looks for a server's escapees pass over the processes started before its leader
(``born_from``, :func:`tuner.server.procs.escapees`; QA qa227: every stop read the whole of every
process on the node, environment included, three times and more). What that relies on: every
process of a launch, the escapees that left its group with the mark (a double fork, reparented away)
and those that dropped the mark but descend from it, starts at or after the leader's recorded start,
so the narrowed look finds exactly what the whole look finds, even with no slack at all under the
leader's start; and a stop (which narrows) leaves none of them running."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from support.processes import STARTED_GROUPS, gone, kill_if_left, wait_until

from tuner.server import procs
from tuner.server.launcher import ServerProcess
from tuner.server.ports import pick_free_port

# The leader forks one child that leaves the session and double-forks (the marked escapee, its parent
# exited: found by its mark) and one that leaves the session and runs a process with an empty
# environment (no mark: found by descent only, its parent alive).
SERVER = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    print("marked", os.getpid(), flush=True)
    time.sleep(120)
    os._exit(0)
if os.fork() == 0:
    os.setsid()
    pid = os.fork()
    if pid == 0:
        os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)"], {})
    print("unmarked", pid, flush=True)
    time.sleep(120)
    os._exit(0)
time.sleep(120)
"""


def _pid(srv: ServerProcess, word: str) -> int:
    line = re.compile(rf"^{word} (\d+)$", re.M)
    assert wait_until(lambda: line.search(srv.log_text())), srv.log_text()[-2000:]
    return int(line.search(srv.log_text()).group(1))


def test_the_narrowed_look_finds_every_escapee_and_the_stop_ends_them(tmp_path, monkeypatch):
    monkeypatch.setattr(procs, "BORN_MARGIN_TICKS", 0)  # no slack: the contract itself, bare
    port = pick_free_port("127.0.0.1")
    srv = ServerProcess.from_argv([sys.executable, "-c", SERVER], host="127.0.0.1", port=port,
                                  log_path=tmp_path / "s.log", workdir=tmp_path, stop_grace_s=1)
    marked = unmarked = None
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        marked, unmarked = _pid(srv, "marked"), _pid(srv, "unmarked")
        assert wait_until(lambda: "TUNER_SERVER_MARK" not in procs.psutil.Process(unmarked).environ())
        born = srv.record.start_ticks
        assert born == procs.read_stat(srv.pid).start_ticks
        whole = procs.escapees(srv.pgid, root=srv.pid, mark=srv.mark)
        narrowed = procs.escapees(srv.pgid, root=srv.pid, mark=srv.mark, born_from=born)
        assert {marked, unmarked} <= {st.pid for st in whole}
        assert {st.pid for st in narrowed} == {st.pid for st in whole}
        assert all(st.start_ticks >= born for st in whole)
        # the marked one again, its tree walk given nothing: found by the mark alone
        assert marked in {st.pid for st in procs.escapees(srv.pgid, mark=srv.mark, born_from=born)}
        srv.stop()
        assert gone(srv.pid) and wait_until(lambda: gone(marked) and gone(unmarked), 5)
    finally:
        kill_if_left(marked)
        kill_if_left(unmarked)
        srv.stop()


def test_a_start_later_than_now_is_not_trusted(tmp_path):
    # a record damaged or edited on disk: a leader's start beyond the present would pass over every
    # process of the server, whose orphans the cleanup would then leave running
    mark = procs.new_mark()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True,
                             env={**os.environ, procs.MARK_VAR: mark})
    STARTED_GROUPS.add(child.pid)
    try:
        assert wait_until(lambda: mark in procs.psutil.Process(child.pid).environ().get(procs.MARK_VAR, ""))
        future = procs.read_stat(child.pid).start_ticks + 10**9
        found = procs.escapees(-1, mark=mark, outside_only=False, born_from=future)
        assert [st.pid for st in found] == [child.pid]
    finally:
        child.kill()
        child.wait()
