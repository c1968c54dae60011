"""SGLang's request log (``--log-requests``; utils/request_logger.py) echoes each client's prompt and the
model's reply into the server log: "Receive: obj=GenerateReqInput(text='...')", "Receive OpenAI: obj=...",
"Finish: obj=..., out=...", or JSON lines of event "request.received" / "request.finished". Those are
user text and never where the server failed, so the failure class and the quoted error line ignore
them (tuner/server/failures.py, ``server_lines``). QA (qa152): a TP rank SIGKILLed after ready (SGLang's
watchdog: "Subprocess scheduler_0 ... crashed with exit code -9"), its last prompt asking about "CUDA out
of memory", was ``oom`` -- ruling out every larger tree -- and quoted the prompt; a prompt about an "NCCL
error" made it ``nccl``; a prompt quoting a Python traceback made the echo the failure region."""

from __future__ import annotations

import signal
import sys
import textwrap

import pytest

from tuner.server.failures import classify_log, error_line
from tuner.server.launcher import ServerProcess
from tuner.server.ports import pick_free_port

READY = "[2026-12-07 03:00:00] The server is fired up and ready to roll!\n"
DECODE = "[2026-12-07 03:00:02 TP0] Decode batch, #running-req: 1, #token: 100\n"
WATCHDOG = ("[2026-12-07 03:00:05] Subprocess scheduler_0 (pid=9399) crashed with exit code -9. "
            "Triggering SIGQUIT for cleanup...")
CLOSING = (f"{WATCHDOG}\n[2026-12-07 03:00:05] Received sigquit from a child process. It usually means the "
           "child failed.\n")
PROMPTS = ["Why do I get 'torch.OutOfMemoryError: CUDA out of memory' on a 24 GB card?",
           "What does 'NCCL error: unhandled system error' mean?",
           "Fix this: Traceback (most recent call last):\\n  File \"a.py\", line 1\\n"
           "RuntimeError: CUDA error: out of memory\\n"]


def _echoes(prompt: str) -> list[str]:
    return [f"[2026-12-07 03:00:01] Receive: obj=GenerateReqInput(text='{prompt}', sampling_params="
            "{'max_new_tokens': 256})\n",
            "[2026-12-07 03:00:01] Receive OpenAI: obj={'messages': [{'role': 'user', 'content': "
            f"'{prompt}'}}]}}\n",
            f"[2026-12-07 03:00:01] Finish: obj=GenerateReqInput(text='hi'), out={{'text': '{prompt}'}}\n",
            '{"timestamp": "2026-12-07T03:00:01", "event": "request.received", "rid": "1", "obj": {"text": "'
            + prompt.replace('"', '\\"') + '"}}\n']


@pytest.mark.parametrize("prompt", PROMPTS)
def test_a_prompt_echoed_before_a_ranks_death_is_no_evidence(prompt):
    for echo in _echoes(prompt):
        log = READY + echo + DECODE * 3 + CLOSING
        assert classify_log(log, -9, "running") == "crash_after_ready", echo
        assert error_line(log) == WATCHDOG, echo


def test_a_real_failure_after_an_echo_is_still_read():
    oom = ("[2026-12-07 03:00:04 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
           '  File "/x/sglang/srt/managers/scheduler.py", line 1, in f\n'
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    log = READY + _echoes("hello")[0] + oom + CLOSING
    assert classify_log(log, -9, "running") == "oom"
    assert error_line(log).startswith("torch.OutOfMemoryError: CUDA out of memory")


# Ready at once, logs a request echo on "go", then dies of SIGKILL (as the kernel's OOM killer ends a rank).
SERVER = textwrap.dedent(r'''
    import os, signal, socket, sys, threading, time
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[1])))
    s.listen(16)

    def serve():
        while True:
            c, _ = s.accept()
            c.recv(65536)
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    while not os.path.exists(os.path.join(sys.argv[2], "go")):
        time.sleep(0.02)
    print(sys.argv[3], flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
''')


def test_a_server_killed_after_echoing_such_a_prompt_crashed_after_ready(tmp_path):
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    port = pick_free_port("127.0.0.1")
    argv = [sys.executable, str(script), str(port), str(tmp_path), _echoes(PROMPTS[0])[0]]
    srv = ServerProcess.from_argv(argv, host="127.0.0.1", port=port, log_path=tmp_path / "server.log",
                                  workdir=tmp_path, startup_timeout_s=60, stop_grace_s=1)
    try:
        srv.start()
        srv.wait_ready()
        (tmp_path / "go").write_text("")
        failure_class, message, _ = srv.classify_exit(exit_wait_s=30)
    finally:
        srv.stop()
    assert srv.returncode == -signal.SIGKILL
    assert failure_class == "crash_after_ready", message
    assert "CUDA out of memory" not in message
    said = ("server killed by SIGKILL after it was ready: (the log holds SGLang's request log alone: no "
            "failure said)")
    assert message.startswith(said), message
