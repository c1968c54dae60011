"""A process that left both the server's group and its environment, holding the server's port, is named
when the stop finds the port still busy (tuner/server/launcher.py, ``stop``; tuner/server/ports.py,
``port_holders``). Such a process cannot be told from a stranger (tuner/server/procs.py: a descendant that
scrubbed its environment and lost its parent cannot be found), so the tuner leaves it running; QA (qa151):
a stand-in SGLang whose helper double-forked, called setsid() and exec'd with an empty environment,
keeping the listening socket, outlived the run while the stop said only "port N still busy after the
server stopped"."""

from __future__ import annotations

import logging
import textwrap

from support.healthy_http import HEALTHY_THREAD_PY, script_server
from support.processes import kill_if_left, wait_until


# Ready at once; on "go", a helper leaves the session (double fork, setsid) and execs with an empty
# environment, keeping the listening socket; it writes its pid, then sleeps.
SERVER = textwrap.dedent(r'''
    import os, sys, time

    port, folder = int(sys.argv[1]), sys.argv[2]
''') + HEALTHY_THREAD_PY + textwrap.dedent(r'''
    while not os.path.exists(os.path.join(folder, "go")):
        time.sleep(0.02)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.set_inheritable(s.fileno(), True)
            code = f"import os, time; open({folder!r} + '/helper', 'w').write(str(os.getpid())); time.sleep(120)"
            os.execve(sys.executable, [sys.executable, "-c", code], {})
        os._exit(0)
    time.sleep(600)
''')


def test_the_process_left_holding_the_port_is_named(tmp_path, caplog):
    srv = script_server(tmp_path, SERVER, str(tmp_path))
    helper = None
    try:
        srv.start()
        srv.wait_ready()
        (tmp_path / "go").write_text("")
        assert wait_until(lambda: (tmp_path / "helper").exists() and (tmp_path / "helper").read_text(), 30)
        helper = int((tmp_path / "helper").read_text())
        with caplog.at_level(logging.WARNING, logger="tuner.server"):
            srv.stop()
    finally:
        srv.stop()
        kill_if_left(helper)
    busy = [r.getMessage() for r in caplog.records if "still busy after the server stopped" in r.getMessage()]
    assert len(busy) == 1
    assert f"pid {helper} (" in busy[0] and "import os, time" in busy[0]
    assert "the tuner leaves it running" in busy[0]
