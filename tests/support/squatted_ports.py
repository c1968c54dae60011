"""A server whose port is taken at every launch, for tests of the launcher's port relaunches.

``squat_every_picked_port`` makes another socket take each port the tuner picks
(``tuner.server.launcher.pick_free_port``) before the server binds it; ``binder_python`` is an
interpreter that binds its ``--port`` as uvicorn does, and so exits with SGLang's "[Errno 98]
Address already in use" on such a port. The caller closes the returned sockets."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

from tuner.server import launcher
from tuner.server.ports import pick_free_port

BINDER = ("import socket, sys; a = sys.argv[1:]; port = int(a[a.index('--port') + 1]); "
          "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
          "s.bind(('127.0.0.1', port)); s.listen()")


def squat_every_picked_port(monkeypatch) -> list[socket.socket]:
    """Each port the launcher picks is taken first; the squatting sockets, filled as it picks."""
    squats: list[socket.socket] = []

    def squatted_port(host: str) -> int:
        # bound without SO_REUSEADDR and not listening: no bind succeeds on it, and a health check is
        # refused at once (rather than waiting on a listener that never answers)
        port = pick_free_port(host)
        s = socket.socket()
        s.bind((host, port))
        squats.append(s)
        return port

    monkeypatch.setattr(launcher, "pick_free_port", squatted_port)
    return squats


def binder_python(tmp_path: Path) -> Path:
    """An executable to give as ``server.python``: it runs :data:`BINDER` with the server's arguments."""
    wrapper = tmp_path / "python-binder"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "{BINDER}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper
