"""A log line that AVOIDS running out of memory is no out-of-memory failure (tuner/server/failures.py,
``_OOM``): DeepGEMM's warmup warning "... reducing max_m to X to avoid out of memory"
(layers/deep_gemm_wrapper/compile_utils.py) is logged just before its JIT compile, which can outlast
server.startup_timeout_s. QA (qa152): a server still compiling at the deadline, that warning its last
line, failed ``oom`` -- a class of the setting's size, which rules out every larger tree -- where it is a
``startup_timeout``."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tuner.server.failures import LaunchError, classify_log
from tuner.server.launcher import ServerProcess
from tuner.server.ports import pick_free_port

LOADING = "[2026-12-07 03:00:00 TP0] Load weight begin. avail mem=70.00 GB\n"
DEEPGEMM = ("[2026-12-07 03:01:00 TP0] Available memory 3.1GB is less than required memory 6.2GB for warmup, "
            "reducing max_m to 4096 to avoid out of memory\n")


def test_a_server_still_compiling_after_the_deepgemm_warning_timed_out():
    assert classify_log(LOADING + DEEPGEMM, None, "startup") == "startup_timeout"
    # ...and one that then died of a signal during the compile is no oom either
    assert classify_log(LOADING + DEEPGEMM + "Killed\n", -9, "startup") == "other"


def test_a_real_shortage_after_the_warning_is_still_oom():
    oom = (LOADING + DEEPGEMM + "[2026-12-07 03:02:00 TP0] Scheduler hit an exception: Traceback "
           "(most recent call last):\n"
           "  File \"/x/sglang/srt/layers/deep_gemm_wrapper/compile_utils.py\", line 1, in f\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    assert classify_log(oom, 1, "startup") == "oom"
    assert classify_log(LOADING + "RuntimeError: CUDA error: out of memory\n", 1, "startup") == "oom"


# Loads, logs DeepGEMM's warning, then compiles past the deadline (never binds its port).
SERVER = textwrap.dedent(r'''
    import sys, time
    print("[2026-12-07 03:00:00 TP0] Load weight begin. avail mem=70.00 GB", flush=True)
    print(sys.argv[1], flush=True)
    time.sleep(60)
''')


def test_the_launcher_names_a_compile_past_the_deadline_a_startup_timeout(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    port = pick_free_port("127.0.0.1")
    srv = ServerProcess.from_argv([sys.executable, str(script), DEEPGEMM.strip()], host="127.0.0.1",
                                  port=port, log_path=tmp_path / "server.log", workdir=tmp_path,
                                  startup_timeout_s=1.5, stop_grace_s=1)
    try:
        srv.start()
        with pytest.raises(LaunchError) as caught:
            srv.wait_ready()
    finally:
        srv.stop()
    assert caught.value.failure_class == "startup_timeout"
    assert "not ready after 2 s (server.startup_timeout_s)" in caught.value.message
