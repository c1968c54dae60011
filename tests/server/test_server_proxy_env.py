"""A node whose environment sets an HTTP proxy: SGLang 0.5.23's own warmup requests its own URL
through ``requests`` (``entrypoints/http_server.py``, ``_execute_server_warmup``), which sends even
loopback through the proxy unless ``no_proxy`` names it; the server then kills itself ("Initialization
failed. warmup error") at every launch. The launcher adds the server's host and loopback to
``no_proxy`` / ``NO_PROXY`` (tuner/server/environ.py). The stand-in below does what SGLang does
between binding its port and answering its health check 200."""

from __future__ import annotations

import socket
import sys

import psutil
from support.processes import STARTED_GROUPS

from tuner.server.launcher import LaunchError, ServerProcess
from tuner.server.ports import pick_free_port

PY = sys.executable

SGLANG_LIKE_WARMUP = """
import sys, threading, requests
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
a = sys.argv[1:]
port = int(a[a.index("--port") + 1])
up = threading.Event()

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path == "/model_info":
            code = 200
        elif self.path in ("/health_generate", "/health"):
            code = 200 if up.is_set() else 503  # ServerStatus.Starting until the warmup succeeded
        else:
            code = 404
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
try:  # SGLang's warmup: its own url through requests, the proxy variables honoured
    requests.get(f"http://127.0.0.1:{port}/model_info", timeout=5).raise_for_status()
except Exception as exc:
    print(f"Initialization failed. warmup error: {type(exc).__name__}: {exc}", flush=True)
    sys.exit(1)
up.set()
print("The server is fired up and ready to roll!", flush=True)
threading.Event().wait()
"""


def closed_port() -> int:
    """A port nothing listens on: the proxy that cannot reach this node's loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_server_behind_an_http_proxy_reaches_itself(tmp_path):
    proxy = f"http://127.0.0.1:{closed_port()}"
    port = pick_free_port("127.0.0.1")
    srv = ServerProcess.from_argv([PY, "-c", SGLANG_LIKE_WARMUP, "--port", str(port)], host="127.0.0.1",
                                  port=port, log_path=tmp_path / "server.log", workdir=tmp_path,
                                  env={"http_proxy": proxy, "NO_PROXY": "hub.corp.example"},
                                  startup_timeout_s=60, stop_grace_s=5)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        try:
            srv.wait_ready()
        except LaunchError as exc:
            raise AssertionError(f"{exc.failure_class}: {exc.message}\n{srv.log_text()}") from None
        assert "fired up" in srv.log_text()
        env = psutil.Process(srv.pid).environ()
        # the user's own entry kept, in both spellings (urllib reads the lowercase one first)
        for var in ("no_proxy", "NO_PROXY"):
            assert env[var].split(",") == ["hub.corp.example", "127.0.0.1", "localhost", "::1"], env[var]
        assert env["http_proxy"] == proxy  # everything else still goes through the proxy
    finally:
        srv.stop()


def test_no_proxy_is_left_alone_where_no_proxy_is_set(tmp_path):
    from tuner.server.environ import server_environment

    env = server_environment({"A": "1"}, "127.0.0.1", base={"PATH": "/bin", "no_proxy": "x"})
    assert env == {"PATH": "/bin", "no_proxy": "x", "PYTHONUNBUFFERED": "1", "A": "1"}
    env = server_environment({}, "0.0.0.0", base={"HTTPS_PROXY": "http://p:3128", "no_proxy": "a, b"})
    assert env["no_proxy"] == env["NO_PROXY"] == "a,b,127.0.0.1,localhost,::1"
    env = server_environment({"https_proxy": ""}, "10.1.2.3", base={"ALL_PROXY": "socks5://p:1080"})
    assert env["NO_PROXY"] == "10.1.2.3,127.0.0.1,localhost,::1"


def test_the_storage_password_never_reaches_the_server(tmp_path, monkeypatch):
    """A launched server inherits the tuner's environment, and shows it in /proc/PID/environ to its
    own code and to whoever may read it: the storage's credentials are left out (QA, qa190: a
    simulated server's environment held TUNER_STORAGE=postgresql://tuner:PW@... and PGPASSWORD);
    what server.env sets, and a proxy URL with its own credentials, are kept."""
    secret = "s3cr3t-Pw"
    monkeypatch.setenv("TUNER_STORAGE", f"postgresql://tuner:{secret}@127.0.0.1:5432/db")
    monkeypatch.setenv("PGPASSWORD", secret)
    monkeypatch.setenv("MY_DB", f"postgresql+psycopg2://tuner:{secret}@db.example/tuner")
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "30")
    monkeypatch.setenv("HTTPS_PROXY", "http://me:proxypw@127.0.0.1:3128")
    port = pick_free_port("127.0.0.1")
    srv = ServerProcess.from_argv([PY, "-c", "import time; time.sleep(60)", "--port", str(port)], host="127.0.0.1",
                                  port=port, log_path=tmp_path / "server.log", workdir=tmp_path,
                                  env={"MINE": f"set-by-the-study-{secret}"}, startup_timeout_s=60, stop_grace_s=5)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        env = psutil.Process(srv.pid).environ()
    finally:
        srv.stop()
    assert not {"TUNER_STORAGE", "PGPASSWORD", "MY_DB"} & set(env), sorted(env)
    assert [k for k, v in env.items() if secret in v] == ["MINE"]  # server.env is the user's choice
    assert env["TUNER_STORAGE_PATIENCE_S"] == "30" and env["HTTPS_PROXY"] == "http://me:proxypw@127.0.0.1:3128"
