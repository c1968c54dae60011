"""A storage URL given where the command line does not take it -- as a positional argument
(`tuner study list URL`, `tuner study create URL`), or as the value of another option (`-f URL`) --
never prints its password: QA saw click's `Got unexpected extra argument (postgresql://u:PASSWORD@...)`
and `'postgresql://u:PASSWORD@...' is not one of 'table', 'json', 'csv'`. The line still says what
is wrong, with the password as ***; the exit code is click's (2)."""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from tuner.cli import cli

PASSWORD = "pa:ss@w/rd €"
URL = f"postgresql://u:{quote(PASSWORD, safe='')}@127.0.0.1:1/db"
RAW = f"postgresql://u:{PASSWORD}@127.0.0.1:1/db"  # as a user might paste it, unencoded


def _no_secret(text: str) -> None:
    for form in (PASSWORD, quote(PASSWORD, safe=""), "pa:ss", "w/rd"):
        assert form not in text, text


@pytest.mark.parametrize("url", [URL, RAW])
@pytest.mark.parametrize("args", [
    ["study", "list", "{u}"],
    ["study", "status", "m", "{u}"],
    ["study", "copy", "m", "n", "o", "{u}"],
    ["study", "list", "--storage", "{u}", "-f", "{u}"],
    ["study", "create", "{u}"],
    ["{u}"],
    ["doctor", "{u}"],
])
def test_a_misplaced_url_keeps_its_password(args, url):
    argv = [a.format(u=url) for a in args]
    r = CliRunner().invoke(cli, argv)
    assert r.exit_code == (1 if argv[0] == "doctor" else 2), r.output
    assert "***" in r.output, r.output
    _no_secret(r.output)


def test_through_the_console_script():
    r = subprocess.run([sys.executable, "-m", "tuner", "study", "list", URL], capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "unexpected extra argument" in r.stderr and "***" in r.stderr, r.stderr
    _no_secret(r.stdout + r.stderr)
