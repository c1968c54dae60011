"""A storage URL holding a NUL character (``%00`` in its password, user, host or database name:
a secret store's value pasted with one, a generated password) (tuner/engine/urls.py
``scheme_problem``).

QA (qa154): libpq takes NUL-terminated strings, so psycopg2 refuses such a URL before it connects
(``ValueError: embedded null character``), which no command caught: ``tuner study status --storage
'postgresql://tuner:x%00y@db/tuner'`` ended in a 70-line traceback (run, create and doctor too). No
server can take that URL: it is bad input, one line naming the storage (its password hidden) and
what fixes it, exit 2, nothing written.

In-process, no server: the URL is refused before anything connects.
"""

import pytest
from click.testing import CliRunner

from tuner.cli import cli

SECRET = "s3cr%00et"


@pytest.mark.parametrize("url", [
    f"postgresql://tuner:{SECRET}@127.0.0.1:1/tuner",  # the password
    "postgresql://tu%00ner:pw@127.0.0.1:1/tuner",  # the user
    "postgresql://tuner:pw@127.0.0.1:1/tu%00ner",  # the database
])
def test_a_storage_url_holding_a_nul_is_one_line_and_exit_2(url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["study", "status", "--study", "x", "--storage", url])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert "NUL" in lines[0] and "%00" in lines[0], lines[0]
    for form in (SECRET, "s3cr\0et", "s3cr"):
        assert form not in result.output, result.output
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_doctor_fails_its_storage_check_on_such_a_url_instead_of_a_traceback(tmp_path, monkeypatch):
    from support.faults import study_file

    monkeypatch.chdir(tmp_path)
    path = study_file(tmp_path, "nul", 1)
    monkeypatch.setenv("TUNER_STORAGE", f"postgresql://tuner:{SECRET}@127.0.0.1:1/tuner")
    result = CliRunner().invoke(cli, ["doctor", str(path)])
    # before the fix: ValueError('embedded null character') out of the check of the stored study
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 1, result.output
    failing = [line for line in result.output.splitlines() if line.startswith("fail")]
    assert len(failing) == 1 and failing[0].startswith("fail  storage:") and "NUL" in failing[0], result.output
    for form in (SECRET, "s3cr\0et", "s3cr"):
        assert form not in result.output, result.output
