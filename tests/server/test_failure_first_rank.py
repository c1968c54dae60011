"""The first rank to die decides the failure class, not its peers dying of it (tuner/server/failures.py,
``deciding_region``). At TP8 one rank's scheduler runs out of memory ("Scheduler hit an exception:
Traceback ...", managers/scheduler.py line 6372, then SIGQUIT to the parent); its peers, waiting on it in
a CPU-group barrier, log gloo's "Connection closed by peer" next (sgl-project/sglang issue 4205), or
torch's C++ TCPStore lines (issue 8336), before the parent's sigquit handler kills them. QA (qa151): on a
stand-in ``sglang.launch_server`` doing this, the trial failed ``nccl`` (a class that rules out no
larger tree), quoting a peer's gloo line."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tuner.server.failures import classify_log, error_line
from tuner.server.launcher import LaunchError, ServerProcess
from tuner.server.ports import pick_free_port

SITE = "/usr/local/lib/python3.12/dist-packages"
LOADING = "[2026-12-07 00:02:30 TP0] Load weight begin. avail mem=78.50 GB\n"
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.00 GiB. GPU 3 has a total capacity "
       "of 79.19 GiB of which 2.31 GiB is free.")
CLOSING = ("[2026-12-07 00:02:34] Received sigquit from a child process. It usually means the child failed.\n"
           "[2026-12-07 00:02:34] kill_process_tree called: parent_pid=4121, include_parent=True, pid=4121\n")


def died(rank: int, frames: list[tuple[str, str]], exception: str) -> str:
    """One scheduler's death record, as scheduler.py logs it (``get_exception_traceback``)."""
    body = "".join(f'  File "{SITE}/sglang/srt/{path}", line 100, in f\n    {code}\n' for path, code in frames)
    return (f"[2026-12-07 00:02:34 TP{rank}] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SITE}/sglang/srt/managers/scheduler.py", line 6362, in run_scheduler_process\n'
            "    scheduler = Scheduler(server_args, port_args)\n" + body + exception + "\n\n")


def peer_in_barrier(rank: int) -> str:
    return died(rank, [("distributed/parallel_state.py", "torch.distributed.barrier(group=self.cpu_group)")],
                f"RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
                f"[127.0.0.1]:{40000 + rank}")


ONE_RANK_OOM = died(3, [("model_executor/pool_configurator.py", "self.req_to_token_pool = ReqToTokenPool(")], OOM)


def test_one_rank_out_of_memory_then_its_peers_gloo_errors_is_oom():
    log = LOADING + ONE_RANK_OOM + "".join(peer_in_barrier(r) for r in (0, 1, 2, 4, 5, 6, 7)) + CLOSING
    assert classify_log(log, -9, "startup") == "oom"
    assert error_line(log).startswith("torch.OutOfMemoryError: CUDA out of memory")


def test_a_long_traceback_then_peers_c10d_lines_is_oom():
    # one rank's deep traceback (past the 80 lines a traceback is read for), then its peers' TCPStore
    # warnings with their C++ frames (past the final lines read): neither window held the exception
    deep = [(f"layers/moe/layer{i}.py", f"return self.forward_{i}(x)") for i in range(45)]
    tcpstore = "".join(
        f"[rank{r}]:[W1207 00:02:34.421222505 TCPStore.cpp:106] [c10d] sendBytes failed on SocketImpl(fd=60, "
        f"addr=[localhost]:57152, remote=[localhost]:31354): Broken pipe\n"
        "Exception raised from sendBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:653 (most recent "
        "call first):\n" + "".join(f"frame #{i}: <unknown function> + 0x5ba8afe (0x7f9a91bddafe in "
                                    "/x/torch/lib/libtorch_cpu.so)\n" for i in range(8))
        for r in (0, 1, 2))
    log = LOADING + died(3, deep, OOM) + tcpstore + CLOSING
    assert classify_log(log, -9, "startup") == "oom"
    assert error_line(log).startswith("torch.OutOfMemoryError")


def test_peers_errors_without_a_first_rank_out_of_memory_stay_nccl():
    first = died(3, [("model_executor/model_runner.py", "self.forward(batch)")],
                 "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")
    log = LOADING + first + peer_in_barrier(0) + peer_in_barrier(1) + CLOSING
    assert classify_log(log, -9, "startup") == "nccl"


def test_an_out_of_memory_warning_outside_a_death_record_decides_nothing():
    warning = ("[2026-12-07 00:02:31 TP0] Entering DeepGEMM JIT Pre-Compile session. It may take a long time "
               "... reducing max_m to 8192 to avoid out of memory\n")
    log = LOADING + warning + peer_in_barrier(0) + CLOSING
    assert classify_log(log, -9, "startup") == "nccl"


# A server process shaped as SGLang's: the launching process spawns its TP ranks (multiprocessing's
# spawn, as engine.py), rank 1 runs out of memory and SIGQUITs the parent after its peers logged the
# broken barrier; the parent's sigquit handler kills the tree (entrypoints/engine.py).
SERVER = textwrap.dedent(r'''
    import logging, multiprocessing as mp, os, signal, sys, time

    def rank(r, parent, folder):
        logging.basicConfig(level=logging.INFO, format=f"[%(asctime)s TP{r}] %(message)s", force=True)
        log = logging.getLogger()
        if r == 1:
            log.error(sys.argv[2])
            open(os.path.join(folder, "died"), "w").close()
            while len([n for n in os.listdir(folder) if n.startswith("peer")]) < 2:
                time.sleep(0.01)
            os.kill(parent, signal.SIGQUIT)
            os._exit(1)
        while not os.path.exists(os.path.join(folder, "died")):
            time.sleep(0.01)
        log.error(sys.argv[3].replace("RANK", str(r)))
        open(os.path.join(folder, f"peer{r}"), "w").close()
        time.sleep(600)

    def quit(signum, frame):
        logging.error("Received sigquit from a child process. It usually means the child failed.")
        for p in mp.active_children():
            p.kill()
        os.kill(os.getpid(), signal.SIGKILL)

    if __name__ == "__main__":
        logging.basicConfig(level=logging.INFO, format="[%(asctime)s] %(message)s", force=True)
        signal.signal(signal.SIGQUIT, quit)
        mp.set_start_method("spawn", force=True)
        for r in range(3):
            mp.Process(target=rank, args=(r, os.getpid(), sys.argv[1])).start()
        time.sleep(600)
''')


def test_a_server_whose_rank_ran_out_of_memory_fails_oom(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    first = ONE_RANK_OOM.split("] ", 1)[1].rstrip("\n")
    peer = peer_in_barrier(0).split("] ", 1)[1].rstrip("\n").replace("40000", "RANK")
    port = pick_free_port("127.0.0.1")
    srv = ServerProcess.from_argv([sys.executable, str(script), str(tmp_path), first, peer], host="127.0.0.1",
                                  port=port, log_path=tmp_path / "server.log", workdir=tmp_path,
                                  startup_timeout_s=60, stop_grace_s=1)
    try:
        srv.start()
        with pytest.raises(LaunchError) as err:
            srv.wait_ready()
    finally:
        srv.stop()
    assert "Connection closed by peer" in srv.log_text()  # the peers did log after the first rank
    assert err.value.failure_class == "oom"
    assert "torch.OutOfMemoryError: CUDA out of memory" in err.value.message
