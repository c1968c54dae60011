"""A server whose HTTP process left the process group the tuner started (``os.setsid()`` in a child,
as a daemonizing launcher or a wrapper does) listens on its own port: the launcher took that
listener for a stranger that answered while the server loaded, launched it again on other ports
and stopped the run with "port ... is in use by another process" (QA qa110: four launches, then
``PortInUseError``, with an SGLang stand-in run by ``tuner study run``). Its escapee, found by the
launch's mark and by descent (:func:`tuner.server.procs.escapees`), is the server's own; a process
neither descended from it nor marked still is a stranger
(tests/server/test_stranger_answers_while_loading.py)."""

from __future__ import annotations

import sys

from support.healthy_http import HEALTHY_SERVER_PY
from support.processes import STARTED_GROUPS

from tuner.server.launcher import ServerProcess
from tuner.server.orphans import list_records
from tuner.server.ports import pick_free_port, port_free
from tuner.server.procs import escapees, process_alive

# The leader stays in the group and waits; its child, in a session of its own, serves the port.
LEAVES_THE_GROUP = """
import os, signal, sys
port = int(sys.argv[1])
child = os.fork()
if child:
    signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
    os.waitpid(child, 0)
    sys.exit(0)
os.setsid()
""" + HEALTHY_SERVER_PY


def test_a_listener_that_left_the_group_is_the_servers_own(tmp_path):
    port = pick_free_port("127.0.0.1")
    srv = ServerProcess.from_argv([sys.executable, "-c", LEAVES_THE_GROUP, str(port)], host="127.0.0.1",
                                  port=port, log_path=tmp_path / "server.log", workdir=tmp_path,
                                  startup_timeout_s=60, stop_grace_s=5)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        assert srv.wait_ready() == f"http://127.0.0.1:{port}"  # raised PortInUseError before the fix
        fled = escapees(srv.pgid, root=srv.pid, mark=srv.mark)
        assert len(fled) == 1 and fled[0].sid == fled[0].pid  # the listener: a session of its own
    finally:
        srv.stop()
    # the escapee went with the stop: the port is free, no record left
    assert port_free("127.0.0.1", port) and not list_records(tmp_path)
    assert not process_alive(fled[0].pid, fled[0].start_ticks)
