"""The tail of a stand-in server script: an HTTP server on ``port`` (a variable the script's head
sets, from its ``--port``) that answers 200 to ``/health`` and ``/health_generate`` and 404 to the
rest, bound with ``SO_REUSEADDR`` as uvicorn binds. Prefix it with what the stand-in does first
(fail, sleep through a model load, count its launches)."""

HEALTHY_SERVER_PY = """
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path in ("/health_generate", "/health") else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""
