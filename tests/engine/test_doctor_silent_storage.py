"""`tuner doctor` against a PostgreSQL address that takes the connection and never answers (a frozen
postmaster, a paused VM, a port a firewall or proxy holds open): one connect timeout, not one per
check that reads the storage, and one line in the driver's own words (QA, qa190: 21 s, two
connections, and "OperationalError: (psycopg2.OperationalError) connection ...")."""

import socket
import threading

import pytest
from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli


@pytest.fixture
def silent_port():
    """A port on 127.0.0.1 that accepts every connection and never sends a byte; yields
    (port, the connections it accepted)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)  # a closed socket does not wake accept(): the loop looks at `done`
    accepted: list[socket.socket] = []
    done = threading.Event()

    def accept():
        while not done.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:  # socket.timeout is one
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    done.set()
    thread.join(10)
    server.close()
    for conn in accepted:
        conn.close()


def test_doctor_asks_a_silent_storage_once_and_says_the_drivers_words(tmp_path, monkeypatch, silent_port):
    pytest.importorskip("psycopg2", reason="the postgres extra is part of dev")
    # a connect timeout of 3 s; the silence is remembered as long, past the checks after it
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "3")
    port, accepted = silent_port
    path = demo_study(tmp_path, storage=f"postgresql://tuner:Pw-silent-9@127.0.0.1:{port}/db")
    r = CliRunner().invoke(cli, ["doctor", str(path)], catch_exceptions=False)
    assert r.exit_code == 1, r.stdout
    fails = [line for line in r.stdout.splitlines() if line.startswith("fail")]
    assert len(fails) == 1 and fails[0].startswith("fail  storage: postgresql://tuner:***@127.0.0.1"), r.stdout
    assert "timeout expired" in fails[0], fails[0]
    # before the fix: the stored study's read, then the write probe, each a connect timeout
    assert len(accepted) == 1, f"{len(accepted)} connections to a server that never answers: {r.stdout}"
    # before the fix: "OperationalError: (psycopg2.OperationalError) connection to server ..."
    assert fails[0].count("OperationalError") == 1 and "(psycopg2" not in fails[0], fails[0]
    assert "Pw-silent-9" not in r.output
