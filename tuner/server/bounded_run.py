"""A short helper command (``nvidia-smi``, an interpreter's import check) run with a bound that holds.

``subprocess.run(timeout=...)`` kills only the child, then waits for it with no bound: a child stuck
in the kernel -- ``nvidia-smi`` on a GPU that fell off the bus sits in uninterruptible sleep, deaf to
SIGKILL -- would hold the tuner for ever, and a process the child started (a wrapper script's) outlived
the timeout. :func:`run_bounded` starts the command in a session of its own, kills that process group
(the one the tuner started, never anything by name) when the time is up, waits at most
:data:`REAP_S` more for it, and leaves a child that still does not end to a daemon thread.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading

#: Seconds a killed command gets to end (and close its pipes) before it is left behind.
REAP_S = 5.0


def run_bounded(argv: list[str], timeout_s: float, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, **kwargs)``, except
    that a timeout kills the command's whole process group and returns within :data:`REAP_S` after
    it, and a Ctrl-C while it runs kills it too (in a session of its own, it does not hear the
    terminal's). Bytes that are not text in the locale's encoding read as U+FFFD (``errors="replace"``):
    QA (qa128): an nvidia-smi answering in a Latin-1 locale (``Zugriff verweigert \xfcber NVML``) was a
    UnicodeDecodeError traceback out of ``tuner doctor``, ``study create`` and ``study run``.
    Raises ``subprocess.TimeoutExpired`` on a timeout, ``OSError`` when the command cannot start,
    and whatever interrupted the wait."""
    kwargs.setdefault("errors", "replace")
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except BaseException as exc:  # the time is up, or Ctrl-C (which its own session does not get)
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # its own group: the session it was started in
        except ProcessLookupError:
            pass
        if not isinstance(exc, subprocess.TimeoutExpired):
            threading.Thread(target=proc.wait, name="reap-stopped-command", daemon=True).start()
            raise
        try:
            proc.communicate(timeout=REAP_S)
        except subprocess.TimeoutExpired:  # stuck in the kernel, or its pipes held by an escapee
            threading.Thread(target=proc.wait, name="reap-stuck-command", daemon=True).start()
        raise subprocess.TimeoutExpired(argv, timeout_s) from None
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)
