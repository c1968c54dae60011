"""A storage URL SQLAlchemy cannot parse: a port that is no whole number (``host:5x/db``, or a
newline pasted into ``$TUNER_STORAGE`` from a file of two lines). QA (qa125): every command that
opens the storage ended in ``ValueError: invalid literal for int() with base 10``, a traceback;
now one line naming where the URL came from, exit 2 (doctor: its storage check fails), the
password never shown, nothing written. tuner/engine/urls.py ``scheme_problem``."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from support.model_study import model_study_yaml

from tuner.cli import cli

SECRET = "S3cr3t@:/%#?é"


@pytest.mark.parametrize("port", ["5x", "5432\n6543"], ids=["letters", "newline"])
@pytest.mark.parametrize("argv", [["study", "create", "s.yaml"], ["study", "run", "s.yaml"],
                                  ["study", "status", "s.yaml"], ["study", "list"], ["doctor", "s.yaml"]],
                         ids=lambda argv: " ".join(argv))
def test_a_url_whose_port_is_no_number_is_one_line(tmp_path, monkeypatch, port, argv):
    from urllib.parse import quote

    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.yaml").write_text(model_study_yaml("s", "${TUNER_STORAGE}", 1))
    monkeypatch.setenv("TUNER_STORAGE", f"postgresql://tuner:{quote(SECRET, safe='')}@127.0.0.1:{port}/db")
    result = CliRunner().invoke(cli, argv)
    assert isinstance(result.exception, SystemExit), repr(result.exception)  # no traceback
    assert SECRET not in result.output and quote(SECRET, safe="") not in result.output
    said = [line for line in result.output.splitlines() if line.startswith(("error:", "fail "))]
    assert len(said) == 1 and "its port is not digits" in said[0], result.output
    if argv[0] == "doctor":
        assert result.exit_code == 1 and said[0].startswith("fail  storage:")
    else:
        assert result.exit_code == 2 and said[0].startswith("error: $TUNER_STORAGE: 'postgresql://tuner:***@")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]  # nothing written
