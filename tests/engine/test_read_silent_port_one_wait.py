"""A read command whose PostgreSQL URL names a port that accepts connections and never answers (a
frozen postmaster, a paused VM) says so after one connect timeout, not two: one connection is tried.

QA (qa183): ``TUNER_STORAGE=postgresql://...@127.0.0.1:PORT/db tuner study status S`` against a
Python listener that accepts and never answers said "timeout expired" after 21 s at the default
patience, two connect timeouts of 10 s: the check that the database holds a study (holds_tables)
took the timeout for "cannot tell" and the open that followed waited it out again.
"""

import socket
import threading

from support.cli_in_process import tuner_here


def _silent_listener():
    """A TCP listener on 127.0.0.1 that accepts and never answers; returns (port, accepted, stop)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # closed: the test is over
                return
            accepted.append(conn)

    threading.Thread(target=serve, daemon=True).start()

    def stop():
        server.close()
        for conn in accepted:
            conn.close()

    return server.getsockname()[1], accepted, stop


def test_status_on_a_silent_port_tries_one_connection(tmp_path):
    port, accepted, stop = _silent_listener()
    try:
        env = {"TUNER_STORAGE": f"postgresql://tuner:s3cret-pw@127.0.0.1:{port}/tuner",
               "TUNER_STORAGE_PATIENCE_S": "2"}  # connect_timeout 2 s
        result = tuner_here("study", "status", "s", cwd=tmp_path, env=env)
    finally:
        stop()
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: storage: postgresql://tuner:***@127.0.0.1:{port}/tuner: cannot open: "
                               "OperationalError: "), lines[0]
    assert "timeout expired; run it again once the storage answers" in lines[0], lines[0]
    assert "s3cret-pw" not in result.stderr + result.stdout
    assert len(accepted) == 1, f"{len(accepted)} connections tried, each waiting the connect timeout"
    assert not list(tmp_path.iterdir())  # nothing written
