"""A storage URL asking for SSL (``?sslmode=require``, as a cloud database's URL carries it) of a
PostgreSQL that has none: libpq refuses before any session (``server does not support SSL, but SSL
was required``), on every try.

QA (qa167): ``tuner study status`` said ``run it again once the storage answers`` and ``tuner study run``
waited out its whole patience (``does not answer``, then ``did not answer``, exit 75), where the
server answered and only the URL can change: it is now a refusal, exit 2 at once, naming the URL.
The session's test server (support.pg), which has no SSL.
"""

from support.pg_refusals import PATIENCE_S, assert_refused_at_once, run_and_status, study_database


def test_ssl_the_server_lacks_is_the_url_s_to_fix_not_an_outage(pg_url, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", PATIENCE_S)
    study_database(pg_url, "ssl")
    url = pg_url + ("&" if "?" in pg_url else "?") + "sslmode=require"
    assert_refused_at_once(run_and_status("ssl", url), "server does not support SSL, but SSL was required",
                           "drop sslmode from the URL")
