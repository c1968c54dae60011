"""A PostgreSQL password with the characters that broke redaction before (``/``, ``#``, ``?``, ``@``,
``%``, unicode) works, and is never shown nor stored: through every command that shows or stores a
storage URL (create, run --dry-run, a worker's run, status in every format, pareto, export as YAML and
JSON, report, list, copy, compare), its error messages (wrong password, nothing listening, no such
database or study, a storage gone past the patience), every file written and every database row.

Each password belongs to a role made for the test on the session's own PostgreSQL server
(support.pg.PgCluster), and is written into the URL as a user would write it.
"""

import os
from urllib.parse import quote, quote_plus

import pytest
from click.testing import CliRunner

from support.faults import study_file
from support.pg import database_text
from tuner.cli import cli

#: (written in the URL, the role's password as the server checks it)
PASSWORDS = [("se/cret", "se/cret"), ("p#ss?w@rd", "p#ss?w@rd"), ("%2Fxq9%40", "/xq9@"), ("pä{ss}ß?/", "pä{ss}ß?/")]


def forms(written: str, actual: str) -> set[str]:
    return {written, actual, quote(actual, safe=""), quote_plus(actual)}


@pytest.mark.parametrize("written, actual", PASSWORDS, ids=["slash", "hash-query-at", "percent", "unicode"])
def test_the_password_never_shows(written, actual, pg_cluster, tmp_path, monkeypatch):
    role = "tuner_pw_" + os.urandom(3).hex()
    made = pg_cluster.database(role, actual)
    db = made.rsplit("/", 1)[1]
    url = f"postgresql://{role}:{written}@127.0.0.1:{pg_cluster.port}/{db}"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE", url)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")
    # storage: ${TUNER_STORAGE}; two trials (and the baseline) put the URL through every record a
    # worker writes, as three did, for a launch less
    path = study_file(tmp_path, "pw", 2)
    shown = f"postgresql://{role}:***@127.0.0.1:{pg_cluster.port}/{db}"
    outputs: list[str] = []

    def tuner(*args, code=0):
        result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
        outputs.append(result.output)
        assert result.exit_code == code, (args, result.output)
        return result.output

    assert shown in tuner("study", "create", path, "--storage", url)
    assert shown in tuner("study", "create", path)
    assert shown in tuner("study", "run", path, "--dry-run")
    # a worker, measuring through the performance model on this storage
    from tuner.config.study import load_study
    from tuner.config.suite import load_suite
    from tuner.engine.backends import ModelBackend
    from tuner.engine.runner import run_study

    config = load_study(path)
    events: list = []
    run_study(config, url, ModelBackend("k2.6-tp8-pcie", load_suite("quick"), seed=1), on_event=lambda k, i: events.append((k, i)))
    outputs.append(repr(events))
    tuner("study", "status", "pw")
    tuner("study", "status", "pw", "-f", "json")
    tuner("study", "status", "pw", "-f", "csv")
    tuner("study", "pareto", "pw")
    tuner("study", "export", "pw", "--pick", "knee", "-o", tmp_path / "best.yaml")
    tuner("study", "export", "pw", "--pick", "knee", "--format", "json", "-o", tmp_path / "best.json")
    assert shown in (tmp_path / "best.yaml").read_text() and shown in (tmp_path / "best.json").read_text()
    tuner("study", "list")
    assert shown in tuner("study", "list", "-f", "csv")
    assert shown in tuner("study", "copy", "pw", "pw2")
    tuner("study", "compare", "pw", "pw2", "-f", "json")
    if written == "p#ss?w@rd":  # one page is enough to read (and each takes seconds)
        tuner("study", "report", "pw", "-o", tmp_path / "report.html")

    # errors: the wrong password, nothing listening, no such database, no such study
    wrong = url.replace(f":{written}@", ":Wr0ng-Secret@")
    out = tuner("study", "status", "pw", "--storage", wrong, code=2)
    assert "Wr0ng-Secret" not in out and "***" in out
    dead_port = url.replace(f":{pg_cluster.port}/", ":1/")
    assert "***@127.0.0.1:1/" in tuner("study", "status", "pw", "--storage", dead_port, code=2)
    tuner("study", "status", "pw", "--storage", url.rsplit("/", 1)[0] + "/no_such_db", code=2)
    assert "no such study" in tuner("study", "status", "nosuchstudy", code=2)
    # a worker whose storage stays away past the patience: one line, exit 75
    out = tuner("study", "run", "--study", "pw", "--storage", dead_port, code=75)
    assert "did not answer" in out and "***@127.0.0.1:1/" in out

    secrets = forms(written, actual)
    for text in outputs:
        for secret in secrets:
            assert secret not in text, (secret, text[-2000:])
    for f in tmp_path.rglob("*"):
        if f.is_file():
            data = f.read_text(errors="replace")
            for secret in secrets:
                assert secret not in data, (secret, f)
    rows = database_text(url)
    for secret in secrets:
        assert secret not in rows, secret
