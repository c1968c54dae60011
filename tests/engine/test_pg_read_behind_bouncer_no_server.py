"""A read command whose storage is a real PgBouncer (transaction mode) with its PostgreSQL server
gone says so within the bound of a statement no patient call arms (the lock wait + 10 s), one line,
exit 2, naming the hang and the fix.

QA (qa183): PgBouncer answers the login of the first client after its server went away itself (it
keeps the server's parameters) and queues the client's statements until its query_wait_timeout
(120 s): ``TUNER_STORAGE=postgresql://...@127.0.0.1:BOUNCER/db tuner study status S`` stood 2m02s
without a line, then said "cannot open: OperationalError: server closed the connection
unexpectedly" (connect_timeout covers the login alone, statement_timeout is the server's). The
statement that waited was SQLAlchemy's own, at the pool's connect (psycopg2's hstore OIDs), before
any cursor event.
"""

import os
import subprocess
import sys
from urllib.parse import urlsplit

from support.pgbouncer import pgbouncer

from tuner.engine.storage import open_storage


def test_status_behind_a_bouncer_whose_server_is_gone_says_no_reply(pg_cluster, tmp_path):
    url = pg_cluster.database()
    with pgbouncer(url, "transaction", tmp_path) as via:
        storage = open_storage(via)  # the tables, and PgBouncer keeps the server's parameters
        storage.engine.dispose()
        pg_cluster.stop()  # PgBouncer learns it only when a client's statement needs a server
        env = {**os.environ, "TUNER_STORAGE": via, "TUNER_STORAGE_PATIENCE_S": "2"}  # bound: 2 + 10 s
        # without the bound the command waits PgBouncer's 120 s query_wait_timeout: the timeout fails it
        done = subprocess.run([sys.executable, "-m", "tuner", "study", "status", "s"], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=100)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: storage: postgresql://"), lines[0]
    assert "cannot open: NoReply: no reply within 12 s (" in lines[0], lines[0]
    assert "PgBouncer" in lines[0] and "run it again once the storage answers" in lines[0], lines[0]
    assert urlsplit(url).password not in done.stderr
