"""A budget or trial timeout written as an ISO 8601 duration (``PT8H``: Kubernetes, Java and .NET
write them so) is refused, as before, and the line now says what to write in the tuner's units,
as it does for days (QA, qa168: ``--timeout PT8H`` said only the forms it takes). In-process: the
parser and the flag's and key's one line."""

import pytest
from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.study import parse_duration
from tuner.config.yamlfile import ConfigError


@pytest.mark.parametrize("text, written", [
    ("PT8H", "8h"), ("pt8h", "8h"), ("PT1H30M", "1h30m"), ("PT90S", "1m30s"), ("P1DT2H", "26h"),
    ("P7D", "168h"), ("PT0.5S", "0.5s"), ("PT 23H 59M", "23h59m"),
])
def test_an_iso_8601_duration_is_refused_saying_what_to_write(text, written):
    with pytest.raises(ConfigError) as caught:
        parse_duration(text, "s.yaml", "budget.timeout")
    assert str(caught.value).endswith(f"got {text!r} (an ISO 8601 duration: write {written})")
    assert parse_duration(written) == parse_duration(written.upper())  # what it says is taken


def test_a_zero_iso_duration_says_must_be_positive_and_a_month_is_not_taken_for_minutes():
    with pytest.raises(ConfigError, match="must be positive"):
        parse_duration("PT0S", "--timeout", "")
    with pytest.raises(ConfigError) as caught:
        parse_duration("P1M", "--timeout", "")  # a month: nothing to say it as
    assert "ISO" not in str(caught.value)


def test_the_timeout_flag_says_it_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["study", "run", "s.yaml", "--timeout", "PT8H"])
    assert r.exit_code != 0 and r.stderr.strip().splitlines() == [
        "error: --timeout: expected a duration with a unit on every number, such as 8h, 45m, 90s or 1h30m, "
        "got 'PT8H' (an ISO 8601 duration: write 8h)"]
    assert list(tmp_path.iterdir()) == []
