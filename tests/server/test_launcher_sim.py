"""The launcher through the simulated SGLang server (``python -m tuner.sim``), as real processes:
start and stop, every failure class from the simulator's fault flags and bad flag combinations, a
port in use, a server that dies with its tuner killed with ``kill -9``, and no process left behind."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import requests

# One process-table check and one registry of started groups for both launcher test files.
from support.processes import STARTED_GROUPS, finish, gone, wait_until

from tuner.config.study import ServerSettings
from tuner.server.launcher import LaunchError, PortInUseError, ServerProcess, cleanup_orphans
from tuner.server.orphans import list_records
from tuner.server.ports import port_free
from tuner.sglang.rules import SpecConfig

PY = sys.executable
ROOT = Path(__file__).resolve().parents[2]
def sim_settings(*extra: str, **kw) -> ServerSettings:
    base = {"backend": "sim", "python": PY, "model_path": "moonshotai/Kimi-K2.6",
            "draft_model_path": "sim/kimi-k2.6-eagle3", "tp_size": 8, "startup_timeout_s": 60.0,
            "stop_grace_s": 5.0, "extra_args": list(extra),
            "sim": {"speedup": 5000.0, "load_seconds": 0.1, "noise": 0.0, "seed": 1}}
    return ServerSettings.model_validate({**base, **kw})


def server(tmp_path, spec=SpecConfig(3, 1, 4), *extra, trial=1, **kw) -> ServerProcess:
    return ServerProcess(sim_settings(*extra, **kw), spec, workdir=tmp_path, trial=trial,
                         max_concurrency=32)


def launch_error(srv: ServerProcess) -> LaunchError:
    """Start and wait; the launch must fail. The server is stopped either way."""
    try:
        with pytest.raises(LaunchError) as exc:
            srv.start()
            STARTED_GROUPS.add(srv.pgid)
            srv.wait_ready()
    finally:
        srv.stop()
    return exc.value


def generate(url: str, text="Write a Python function for fib.", tokens=8) -> requests.Response:
    return requests.post(url + "/generate", timeout=30,
                         json={"text": text, "sampling_params": {"max_new_tokens": tokens}})


def test_start_ready_serves_with_the_pins_and_stops_clean(tmp_path):
    srv = server(tmp_path)
    with srv:
        STARTED_GROUPS.add(srv.pgid)
        assert srv.ready and srv.log_path == tmp_path / "trials" / "1" / "server.log"
        assert [r.pid for r in list_records(tmp_path)] == [srv.pid]
        info = requests.get(srv.url + "/server_info", timeout=10).json()
        assert (info["max_running_requests"], info["cuda_graph_max_bs_decode"], info["attention_backend"]) == (
            32, 32, "flashinfer")
        assert (info["speculative_num_steps"], info["speculative_eagle_topk"],
                info["speculative_num_draft_tokens"]) == (3, 1, 4)
        assert generate(srv.url).status_code == 200
        srv.check_alive()
        assert srv.classify_exit()[0] == "other"  # healthy: nothing known in the log
    assert gone(srv.pid) and port_free(srv.host, srv.port) and not list_records(tmp_path)
    srv.stop()


def test_a_request_in_flight_does_not_hold_up_the_stop(tmp_path):
    """Issue 16's SIGTERM handling, seen from the launcher: the simulator exits on SIGTERM by itself
    with a long request in flight (its log says how it stopped), well inside a 120 s grace, so the
    launcher never gets to SIGKILL."""
    srv = server(tmp_path, stop_grace_s=120.0, sim={"speedup": 1.0, "load_seconds": 0.1})
    answers: list = []
    with srv:
        STARTED_GROUPS.add(srv.pgid)

        def long_request():  # 4,000 tokens at 1x: minutes of model time
            try:
                answers.append(generate(srv.url, tokens=4000).status_code)
            except requests.RequestException as exc:
                answers.append(type(exc).__name__)

        t = threading.Thread(target=long_request)
        t.start()
        deadline = time.monotonic() + 30
        while requests.get(srv.url + "/server_info", timeout=10).json()["sim_running_requests"] < 1:
            assert time.monotonic() < deadline, "the request never started"
            time.sleep(0.05)
    t.join(timeout=30)
    log = srv.log_path.read_text()
    assert "# tuner: stopped, exit code 0" in log and "killed by SIGKILL" not in log, log[-800:]
    assert answers == [503]  # aborted, as SGLang answers requests it drops at shutdown


def test_baseline_launch_has_the_same_pins(tmp_path):
    srv = server(tmp_path, None, trial=None)
    with srv:
        STARTED_GROUPS.add(srv.pgid)
        info = requests.get(srv.url + "/server_info", timeout=10).json()
        assert info["speculative_algorithm"] is None
        assert (info["max_running_requests"], info["cuda_graph_max_bs_decode"], info["attention_backend"]) == (
            32, 32, "flashinfer")
    assert srv.log_path == tmp_path / "baseline" / "server.log"


@pytest.mark.parametrize("spec, extra, quoted", [
    (SpecConfig(1, None, 3), (), "TypeError: '>' not supported"),  # the article's second failure
    (SpecConfig(None, 4, None), (), "AssertionError"),  # the article's first failure
    (SpecConfig(3, 1, 4), ("--no-such-flag", "1"), "unrecognized arguments: --no-such-flag"),
])
def test_invalid_args(tmp_path, spec, extra, quoted):
    err = launch_error(server(tmp_path, spec, *extra))
    assert err.failure_class == "invalid_args" and quoted in err.message
    assert err.exit_code in (1, 2) and err.log_tail


def test_oom(tmp_path):
    err = launch_error(server(tmp_path, SpecConfig(3, 1, 4), "--context-length", "100000",
                              args={"max_running_requests": 100000}))
    assert err.failure_class == "oom" and "Not enough memory" in err.message


def test_nccl(tmp_path):
    err = launch_error(server(tmp_path, SpecConfig(3, 1, 4), "--sim-fail-startup",
                              "torch.distributed.DistBackendError: NCCL error: unhandled system error"))
    assert err.failure_class == "nccl" and err.exit_code == 1


def test_startup_timeout(tmp_path):
    err = launch_error(server(tmp_path, SpecConfig(3, 1, 4), "--sim-hang-on-start",
                              startup_timeout_s=1.5))
    assert err.failure_class == "startup_timeout" and err.exit_code is None


def test_crash_after_ready(tmp_path):
    srv = server(tmp_path, SpecConfig(3, 1, 4), "--sim-crash-after-requests", "1")
    with srv:
        STARTED_GROUPS.add(srv.pgid)
        with pytest.raises(requests.RequestException):
            for _ in range(3):
                generate(srv.url)
        deadline = time.monotonic() + 10
        while srv.returncode is None and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(LaunchError) as exc:
            srv.check_alive()
        assert exc.value.failure_class == "crash_after_ready"
        assert srv.classify_exit()[0] == "crash_after_ready"


@pytest.mark.parametrize("spec,where", [
    # steps 1, topk 2 drafts 2 candidates; 8 draft tokens need 7: SGLang's warmup request fails
    (SpecConfig(1, 2, 8), "RuntimeError: selected index k out of range"),
    # steps 2: the draft CUDA-graph capture fails (eagle_draft_cuda_graph_runner.py)
    (SpecConfig(2, 2, 8), "Capture cuda graph failed: selected index k out of range"),
])
def test_spec_runtime_before_ready(tmp_path, spec, where):
    srv = server(tmp_path, spec, "--attention-backend", "fa3")
    srv.start()
    STARTED_GROUPS.add(srv.pgid)
    try:
        with pytest.raises(LaunchError) as exc:
            srv.wait_ready()
        assert exc.value.failure_class == "spec_runtime"
        assert "selected index k out of range" in exc.value.message
        assert where in srv.log_path.read_text()
    finally:
        srv.stop()


def test_port_in_use_by_a_stranger(tmp_path):
    with socket.socket() as stranger:
        stranger.bind(("127.0.0.1", 0))
        stranger.listen()
        port = stranger.getsockname()[1]
        srv = server(tmp_path, SpecConfig(3, 1, 4), port=port)
        with pytest.raises(PortInUseError, match=f"port {port} on 127.0.0.1 is in use"):
            with srv:
                pass
        assert srv.proc is None and not list_records(tmp_path)


def test_cli_launch_serves_and_stops_on_sigterm(tmp_path):
    study = tmp_path / "study.yaml"
    study.write_text(textwrap.dedent(f"""\
        name: t
        search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
        server:
          model_path: m
          draft_model_path: d
          sim: {{speedup: 5000.0, load_seconds: 0.1, noise: 0.0}}
        bench: {{suite: quick}}
        """))
    cli = subprocess.Popen([PY, "-m", "tuner", "launch", str(study), "--num-steps", "3", "--topk", "1",
                            "--draft-tokens", "4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, cwd=ROOT)
    try:
        url = cli.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), cli.stderr.read()
        rec, = list_records(tmp_path / "t")
        STARTED_GROUPS.add(rec.pgid)
        assert generate(url).status_code == 200
        cli.send_signal(signal.SIGTERM)
        assert cli.wait(timeout=30) == 143
        assert gone(rec.pid) and not list_records(tmp_path / "t")
    finally:
        finish(cli)


TUNER = """
import sys, time
sys.path.insert(0, {root!r})
from tuner.config.study import ServerSettings
from tuner.server.launcher import ServerProcess
from tuner.sglang.rules import SpecConfig
s = ServerSettings.model_validate({settings!r})
srv = ServerProcess(s, SpecConfig(3, 1, 4), workdir={workdir!r}, trial=5, max_concurrency=32)
srv.start()
srv.wait_ready()
print(srv.pid, srv.url, flush=True)
time.sleep(120)
"""


def test_a_server_dies_with_its_tuner_and_the_next_run_drops_its_record(tmp_path):
    script = tmp_path / "tuner_child.py"
    script.write_text(TUNER.format(root=str(ROOT), workdir=str(tmp_path),
                                   settings=sim_settings().model_dump(mode="json")))
    child = subprocess.Popen([PY, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=ROOT)
    try:
        line = child.stdout.readline().split()
        assert len(line) == 2, child.stderr.read()
        pid, url = int(line[0]), line[1]
        STARTED_GROUPS.add(pid)
        child.kill()  # kill -9: the tuner gets no chance to stop its server...
        child.wait(timeout=10)
        # ...and the kernel stops it (PR_SET_PDEATHSIG): it does not serve on until the next run
        port = int(url.rsplit(":", 1)[1])
        assert wait_until(lambda: gone(pid) and port_free("127.0.0.1", port)), "the server outlived its tuner"
        assert cleanup_orphans(tmp_path) == [] and not list_records(tmp_path)  # the next run: the record goes
    finally:
        finish(child)
