"""`tuner doctor` on a storage URL that asks libpq to verify the server (``sslmode=verify-ca``,
``verify-full``) names what fixes a verification that fails (QA, qa190): the tuner keeps the
first line of the driver's error, and libpq's fix for a CA file it cannot find is on its second,
so the line said "root certificate file ... does not exist: check the URL, the server and the
user's rights". A stand-in server on 127.0.0.1 answers PostgreSQL's SSLRequest with "S" (it will
speak TLS), the seam where libpq, the real one, loads the CA file before any handshake."""

import socket
import threading

import pytest
from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, check_storage, ssl_verification_fix


@pytest.fixture
def ssl_willing_port():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    done = threading.Event()
    held: list[socket.socket] = []

    def answer():
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            conn.settimeout(5)
            try:
                if len(conn.recv(8)) == 8:  # the SSLRequest: length 8, code 80877103
                    conn.sendall(b"S")
            except OSError:
                pass
            held.append(conn)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    done.set()
    thread.join(10)
    server.close()
    for conn in held:
        conn.close()


def test_a_ca_file_libpq_cannot_find_is_named_with_the_fix(tmp_path, ssl_willing_port):
    pytest.importorskip("psycopg2", reason="the postgres extra is part of dev")
    missing = tmp_path / "no-ca.crt"
    url = (f"postgresql://tuner:Ssl-pw-3@127.0.0.1:{ssl_willing_port}/db?sslmode=verify-full"
           f"&sslrootcert={missing}")
    c = check_storage(load_study(demo_study(tmp_path, storage=url)))
    assert c.status == FAIL and f'root certificate file "{missing}" does not exist' in c.message, c
    # before the fix: "...: check the URL, the server and the user's rights"
    assert "give sslrootcert=PATH of the CA that signed the server's certificate" in c.message, c
    assert "sslmode=require" in c.message and "Ssl-pw-3" not in c.message, c


def test_libpq_s_other_verification_failures_name_their_fix():
    assert "sslmode=verify-ca" in ssl_verification_fix(
        'server certificate for "db1" does not match host name "db"')
    assert "give the CA file that signed it" in ssl_verification_fix("SSL error: certificate verify failed")
    assert ssl_verification_fix("FATAL:  password authentication failed for user \"u\"") is None
