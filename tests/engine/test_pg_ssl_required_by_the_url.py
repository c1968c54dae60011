"""A storage URL asking for SSL (``?sslmode=require``, as a cloud database's URL carries it) of a
PostgreSQL that has none: libpq refuses before any session (``server does not support SSL, but SSL
was required``), on every try.

QA (qa167): ``tuner study status`` said ``run it again once the storage answers`` and ``tuner study run``
waited out its whole patience (``does not answer``, then ``did not answer``, exit 75), where the
server answered and only the URL can change: it is now a refusal, exit 2 at once, naming the URL.
The session's test server (support.pg), which has no SSL.
"""

import optuna
from click.testing import CliRunner

from tuner.cli import cli
from tuner.engine.storage import open_storage


def test_ssl_the_server_lacks_is_the_url_s_to_fix_not_an_outage(pg_url, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "30")  # before the fix: 30 s of waiting, then exit 75
    storage = open_storage(pg_url)
    optuna.create_study(study_name="ssl", storage=storage, directions=["maximize"])
    storage.engine.dispose()
    url = pg_url + ("&" if "?" in pg_url else "?") + "sslmode=require"
    ran = CliRunner().invoke(cli, ["study", "run", "--study", "ssl", "--storage", url])
    shown = CliRunner().invoke(cli, ["study", "status", "--study", "ssl", "--storage", url])
    for result in (ran, shown):
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, result.output
        assert "server does not support SSL, but SSL was required" in lines[0], result.output
        assert "drop sslmode from the URL" in lines[0], result.output
        assert "does not answer" not in result.output and "run it again once" not in result.output, result.output
