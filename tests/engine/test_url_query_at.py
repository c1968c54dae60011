"""An ``@`` in a plain query value of a storage URL whose user has no password in it
and a port (``postgresql://tuner@db:5432/tuner?password=p@ss``) is the value's own, as with one:
SQLAlchemy ended the credentials there, so the tuner connected to the host ``ss`` and showed it, the
end of the password, in every line (QA: ``postgresql://tuner%40127.0.0.1:***@ss``)."""

from __future__ import annotations

from tuner.engine.urls import connect_url, driver_url, redact


def test_an_at_in_a_query_value_after_a_user_alone_stays_the_values():
    url = "postgresql://tuner@127.0.0.1:1/tuner?password=p@ss"
    assert redact(url) == "postgresql://tuner@127.0.0.1:1/tuner?password=***"
    parsed = connect_url(url)
    assert (parsed.username, parsed.host, parsed.port, parsed.database) == ("tuner", "127.0.0.1", 1, "tuner")
    assert parsed.query["password"] == "p@ss"
    assert "@ss" not in driver_url(url).split("?")[0]
    # the rule for a password written in the credentials is unchanged
    assert connect_url("postgresql://tuner:p?ss@db/tuner").password == "p?ss"
    assert connect_url("postgresql://u:p@ss?word@db/tuner").password == "p@ss?word"
    assert (connect_url("postgresql://u:p?x=a@db").password, connect_url("postgresql://u:p?x=a@db").host) == \
        ("p?x=a", "db")
    # a '?' in a percent-encoded password is no query (QA of this fix: it recursed without end)
    encoded = connect_url("postgresql://refused:p%23ss%3Fw%40rd@127.0.0.1:5432/db1")
    assert (encoded.password, encoded.host, encoded.database) == ("p#ss?w@rd", "127.0.0.1", "db1")
