"""Python's own file server on 127.0.0.1, as a server that is not SGLang: GET answers, POST is 501,
``/server_info`` is 404. The test owns the process and ends it on leaving the block."""

from __future__ import annotations

import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def python_file_server(folder: Path) -> Iterator[str]:
    """Serve ``folder`` until the block ends; yields the URL once a GET answers (within ~10 s)."""
    import requests

    from tuner.server.ports import pick_free_port

    port = pick_free_port("127.0.0.1")
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
                              cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                requests.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)
