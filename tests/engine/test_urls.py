"""Storage URLs (tuner/engine/urls.py): the password hidden whatever characters it holds, driver
errors scrubbed of it in every form, and the URL the driver gets carrying it intact."""

from urllib.parse import quote

import pytest
from sqlalchemy.engine import make_url

from tuner.engine.urls import connect_url, driver_url, redact, scrub, secrets_of

#: (password as written in the URL, the password the server checks)
PASSWORDS = [("se/cret", "se/cret"), ("p#ss?w@rd", "p#ss?w@rd"), ("%2Fx", "/x"), ("%252Fx", "%2Fx"),
             ("pä{s}ß", "pä{s}ß"), ("a:b:c", "a:b:c"), ("x@y/z", "x@y/z"), ("s%40c%23r", "s@c#r"),
             # an @ and then a ?: SQLAlchemy alone reads host "ss" and drops the rest as a query
             ("p@ss?word", "p@ss?word"), ("p@ss?x=y", "p@ss?x=y"),
             # an @ and then a colon: SQLAlchemy alone fails on a "port" that is the rest of the password
             ("ab@cd:TopSecret99", "ab@cd:TopSecret99"), ("Zq@1:/?#%{} 7 Xk@h", "Zq@1:/?#%{} 7 Xk@h")]


@pytest.mark.parametrize("written, actual", PASSWORDS)
def test_the_password_is_hidden_and_reaches_the_driver_intact(written, actual):
    url = f"postgresql://tuner:{written}@db.example.com:5432/tuner"
    shown = redact(url)
    assert shown == "postgresql://tuner:***@db.example.com:5432/tuner"
    parsed = connect_url(url)
    assert (parsed.username, parsed.password, parsed.host, parsed.port, parsed.database) == \
        ("tuner", actual, "db.example.com", 5432, "tuner")
    assert make_url(driver_url(url)).password == actual  # what psycopg2 is given
    assert "{" not in driver_url(url)  # Optuna str.format()s the URL it is given
    # an error message quoting the password in any form comes out without it
    for form in {written, actual, quote(actual, safe=""), driver_url(url), url}:
        text = scrub(f"FATAL: password authentication failed ({form})", url)
        assert written not in text and actual not in text, text
    assert set(secrets_of(url)) >= {actual, quote(actual, safe="")}


def test_other_urls_shown_as_they_are_or_without_what_could_be_a_password():
    assert redact("sqlite:////srv/a@b/study.db") == "sqlite:////srv/a@b/study.db"
    assert redact("postgresql://tuner@db/tuner") == "postgresql://tuner@db/tuner"
    assert redact("postgresql://db/tuner?password=hunter2&sslmode=require") == \
        "postgresql://db/tuner?password=***&sslmode=require"
    assert redact("tuner:hunter2@db/tuner") == "tuner:***@db/tuner"  # no scheme: not a URL, still hidden
    assert "hunter2" not in redact("postgresql://tuner:hunter2@db:notaport/tuner")
    # a text that does not parse keeps no ?password= either (QA: 'pos tgresql://...?password=' showed it)
    assert redact("pos tgresql://db/tuner?password=hunter2&x=1") == "pos tgresql://db/tuner?password=***&x=1"
    assert "hunter2" not in redact("postgresql://tuner@db:notaport/tuner?SSLPassword=hunter2")
    assert redact(None) is None and redact("") == ""


def test_an_at_in_a_query_value_stays_the_values_and_sqlite_credentials_are_hidden():
    # ?password=p@ss is libpq's own password parameter: the host stays the one written
    url = "postgresql://tuner:hunter2@127.0.0.1:1/tuner?password=p@ss"
    assert redact(url) == "postgresql://tuner:***@127.0.0.1:1/tuner?password=***"
    assert (connect_url(url).host, connect_url(url).password) == ("127.0.0.1", "hunter2")
    url = "postgresql://u:pw@db/tuner?application_name=a@b"
    assert (connect_url(url).host, connect_url(url).query["application_name"]) == ("db", "a@b")
    # SQLCipher-style credentials in an SQLite URL: hidden, in the URL and in the driver's error
    for url in ("sqlite://user:Zq9pw@/x.db", "sqlite+pysqlcipher://:S3cr#t:p@ss/w%rd?x@/x.db"):
        assert "***@/x.db" in redact(url) and "Zq9pw" not in redact(url) and "S3cr" not in redact(url)
        assert "Zq9pw" not in scrub(f"Invalid SQLite URL: {url}", url)
        assert "S3cr" not in scrub(f"Invalid SQLite URL: {url}", url)


@pytest.mark.parametrize("url,says", [
    ("SQLITE:///x.db", "lower-case: 'sqlite'"),
    ("Postgresql://u:pw@h/db", "lower-case: 'postgresql'"),
    ("postgresq://u:pw@h/db", "did you mean 'postgresql'?"),
    ("mysql://u:pw@h/db", "SQLite or PostgreSQL"),
    ("postgresql+nosuch://u:pw@h/db", "no driver 'nosuch'"),
])
def test_a_scheme_the_tuner_cannot_use_is_named_with_what_is_expected(url, says):
    from tuner.engine.urls import scheme_problem

    problem = scheme_problem(url)
    assert problem is not None and says in problem, problem
    assert f"scheme {url.partition(':')[0]!r}" in problem
    assert "expected sqlite:///PATH or postgresql://" in problem
    assert "pw" not in problem


@pytest.mark.parametrize("url", ["sqlite:///x.db", "sqlite+pysqlite:///x.db", "postgresql://u:pw@h/db",
                                 "postgres://u:pw@h/db", "postgresql+psycopg2://u@h/db"])
def test_the_supported_schemes_pass(url):
    from tuner.engine.urls import scheme_problem

    assert scheme_problem(url) is None


def test_a_driver_not_installed_says_how_to_install_it(monkeypatch):
    import sys

    from tuner.engine.urls import scheme_problem

    monkeypatch.setitem(sys.modules, "psycopg", None)
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    problem = scheme_problem("postgresql://u:pw@h/db")
    assert problem is not None and "no module 'psycopg2'" in problem and "[postgres]" in problem, problem
