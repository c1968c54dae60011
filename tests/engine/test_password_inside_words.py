"""A storage password that is also part of other words (``postgres``, the common default, in
``postgresql``; a one-letter ``p`` in ``port``) is hidden where it stands, never inside a longer word.

QA (qa167): ``tuner study status --storage postgresql://postgres:postgres@HOST/optuna`` said
``error: storage: ***ql://***:***@...``, and with the password ``p`` a line read ``***ostgresql://u:***@
... cannot o***en: O***erationalError: ... ***ort 55679 failed: timeout ex***ired``. A password as an
error quotes it (``:p@``, ``"p"``, ``password=p``) is still ``***``. Port 1 of 127.0.0.1 refuses the
connection (a real attempt, nothing listening).
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tuner.cli import cli
from tuner.engine.urls import mask


@pytest.mark.parametrize("text, secret, masked", [
    ("postgresql://postgres:postgres@h/db", "postgres", "postgresql://***:***@h/db"),
    ("OperationalError: port 1 failed: timeout expired", "p", "OperationalError: port 1 failed: timeout expired"),
    ('u:p@h password=p "p" (p)', "p", 'u:***@h password=*** "***" (***)'),
    ("x:se/cret@h se/cretly", "se/cret", "x:***@h se/cretly"),
    ("x:/xq9@@h a/xq9@b", "/xq9@", "x:***@h a***b"),   # an edge that is no letter is no word's edge
    ("pä{ss}ß?/ äpä{ss}ß?/", "pä{ss}ß?/", "*** äpä{ss}ß?/")])
def test_a_password_is_hidden_where_it_stands_not_inside_words(text, secret, masked):
    assert mask(text, secret) == masked


@pytest.mark.parametrize("user, password", [("postgres", "postgres"), ("u", "p")])
def test_the_error_line_stays_readable(user, password, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    url = f"postgresql://{user}:{password}@127.0.0.1:1/optuna"
    result = CliRunner().invoke(cli, ["study", "status", "--study", "x", "--storage", url])
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    shown_user = "***" if user == password else user  # the user name is the password: hidden too
    assert line.startswith(f"error: storage: postgresql://{shown_user}:***@127.0.0.1:1/optuna: cannot open: "
                           "OperationalError: connection to server at \"127.0.0.1\", port 1 failed"), line
    assert line.endswith("; run it again once the storage answers (`tuner study run` waits for it)"), line
    assert f":{password}@" not in line
