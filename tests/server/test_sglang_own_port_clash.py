"""SGLang 0.5.23 takes ports besides ``--port``: its ``nccl_port`` (picked anew at each launch in
22000-29999, ``get_free_port_below_ephemeral``, and bound later by torch's TCPStore in the rank-0
scheduler) and, with DP attention, ports it derives from ``--port`` (``PortArgs.init_new``,
``srt/server_args.py``). Another process holding one made the launch exit with "address already in
use" on a port that is not the tuner's, which was classified ``other`` (the TCPStore) or
``invalid_args`` (SGLang's ValueError "dist_init_port at ... is not available in 30 seconds") and
charged to the setting. Now it is launched again, like a server whose own port was taken, and
after :data:`PORT_RELAUNCHES` relaunches the start fails with a :class:`PortInUseError` (the run
stops, the trial is queued again), nothing left running. The stand-in fails as SGLang does at its
first launches, then serves."""

from __future__ import annotations

import sys

import pytest
from support.healthy_http import HEALTHY_SERVER_PY
from support.processes import STARTED_GROUPS

from tuner.config.study import ServerSettings
from tuner.server.launcher import PORT_RELAUNCHES, LaunchError, PortInUseError, ServerProcess
from tuner.server.orphans import list_records

PY = sys.executable

TCPSTORE = ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
            "address. port: 25731, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use")
DP_PORT = ("ValueError: dist_init_port at 41516 is not available in 30 seconds. dist_init_port is used by a "
           "process already.")

STANDIN = """
import os, pathlib, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
a = sys.argv[1:]
port = int(a[a.index("--port") + 1])
count = pathlib.Path(os.environ["CLASH_COUNTER"])
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
if n < int(os.environ["CLASH_LAUNCHES"]):
    print("[2026-12-05 07:30:00] server_args=ServerArgs(...)")
    print("[2026-12-05 07:30:04 TP0] Scheduler hit an exception: Traceback (most recent call last):")
    print('  File "sglang/srt/managers/scheduler.py", line 6364, in run_scheduler_process')
    print("    scheduler = Scheduler(server_args, port_args)")
    print(os.environ["CLASH_LINE"], flush=True)
    sys.exit(1)
""" + HEALTHY_SERVER_PY


def standin(tmp_path, clashes: int, line: str, port: int = 0) -> ServerProcess:
    wrapper = tmp_path / "python-clash"
    script = tmp_path / "clash.py"
    script.write_text(STANDIN)
    wrapper.write_text(f'#!/bin/sh\nexec "{PY}" "{script}" "$@"\n')
    wrapper.chmod(0o755)
    server = ServerSettings.model_validate({
        "backend": "sim", "python": str(wrapper), "model_path": "org/model", "draft_model_path": "org/draft",
        "tp_size": 8, "startup_timeout_s": 60, "stop_grace_s": 5, "sim": {"speedup": 5000.0},
        "env": {"CLASH_COUNTER": str(tmp_path / "launches"), "CLASH_LAUNCHES": str(clashes), "CLASH_LINE": line}})
    return ServerProcess(server, None, workdir=tmp_path, port=port)


def launch_lines(srv: ServerProcess) -> list[str]:
    return [ln for ln in srv.log_path.read_text().splitlines() if ln.startswith("# tuner:") and " launch: " in ln]


@pytest.mark.parametrize("line", [TCPSTORE, DP_PORT], ids=["tcpstore", "dp_attention_port"])
def test_a_clash_on_one_of_sglangs_own_ports_is_launched_again(tmp_path, line):
    srv = standin(tmp_path, clashes=1, line=line)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        try:
            srv.wait_ready()
        except LaunchError as exc:
            raise AssertionError(f"charged to the setting: {exc.failure_class}: {exc.message}") from None
        assert len(launch_lines(srv)) == 2
    finally:
        srv.stop()
    assert not list_records(tmp_path)


def test_a_fixed_port_is_launched_again_on_itself(tmp_path):
    from tuner.server.ports import pick_free_port

    port = pick_free_port("127.0.0.1")
    srv = standin(tmp_path, clashes=1, line=TCPSTORE, port=port)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        assert srv.wait_ready() == f"http://127.0.0.1:{port}"
        assert [f" --port {port} " in ln for ln in launch_lines(srv)] == [True, True]
    finally:
        srv.stop()


def test_a_clash_at_every_launch_stops_the_run_not_the_setting(tmp_path):
    srv = standin(tmp_path, clashes=100, line=TCPSTORE)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        with pytest.raises(PortInUseError) as err:
            srv.wait_ready()
        assert "TCPStore port 25731" in str(err.value) and f"at {PORT_RELAUNCHES + 1} launches" in str(err.value)
        assert len(launch_lines(srv)) == PORT_RELAUNCHES + 1
        assert srv.returncode is not None
    finally:
        srv.stop()
    assert not list_records(tmp_path)
