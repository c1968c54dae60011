"""`tuner doctor` on a PostgreSQL that asks for a password the client does not have names where
libpq looks for one (QA, qa190): a ~/.pgpass others may read, which libpq ignores with only a
WARNING on stderr, failed as "fe_sendauth: no password supplied: check the URL, the server and the
user's rights", and `chmod 600` was never said. A real server (support.pg), a real password file."""

from urllib.parse import urlsplit

from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, check_storage


def test_a_password_file_others_may_read_is_named_with_chmod(tmp_path, pg_url, monkeypatch):
    parts = urlsplit(pg_url)
    without = pg_url.replace(f":{parts.password}@", "@", 1)  # the password only in the file
    assert parts.password not in without
    passfile = tmp_path / "pgpass"
    passfile.write_text(f"{parts.hostname}:{parts.port}:*:{parts.username}:{parts.password}\n")
    passfile.chmod(0o644)
    monkeypatch.setenv("PGPASSFILE", str(passfile))
    monkeypatch.delenv("PGPASSWORD", raising=False)
    config = load_study(demo_study(tmp_path, storage=without))
    c = check_storage(config)
    assert c.status == FAIL and "no password supplied" in c.message, c
    # before the fix: "...: check the URL, the server and the user's rights"
    assert f"chmod 600 {passfile}" in c.message and "(mode 0644)" in c.message, c
    assert parts.password not in c.message
    passfile.chmod(0o600)  # the fix it names: libpq reads the file
    assert check_storage(config).status != FAIL


def test_no_password_anywhere_names_where_one_goes(tmp_path, pg_url, monkeypatch):
    parts = urlsplit(pg_url)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "no-such-pgpass"))
    monkeypatch.delenv("PGPASSWORD", raising=False)
    c = check_storage(load_study(demo_study(tmp_path, storage=pg_url.replace(f":{parts.password}@", "@", 1))))
    assert c.status == FAIL and "no password supplied" in c.message, c
    assert "set PGPASSWORD" in c.message and str(tmp_path / "no-such-pgpass") in c.message, c
