"""`tuner bench --json` refuses a shipped suite's own file and dataset, as it refuses a suite file's.

QA (README "Benchmarking a server": "--json refuses, before any request, the --suite file (and its
prompt files and dataset)"): with a shipped suite's name (`--suite quick`, `--suite mixed`) the
check was skipped, so `--json` given the package's quick.yaml or mixed.jsonl wrote the result over
it, exit 0, and the shipped suite no longer loaded.
"""

import socket

import pytest
from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.suite import SUITES_DIR


def _closed_url() -> str:
    """A loopback URL nothing listens on: a refused check must come before any connection."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize("suite, target, what", [
    ("quick", SUITES_DIR / "quick.yaml", "is the --suite file"),
    ("mixed", SUITES_DIR / "mixed.yaml", "is the --suite file"),
    ("mixed", SUITES_DIR.parent / "datasets" / "mixed.jsonl", "is the dataset of the --suite file"),
])
def test_json_over_a_shipped_suites_own_file_is_refused(suite, target, what):
    before = target.read_bytes()
    r = CliRunner().invoke(cli, ["bench", "--url", _closed_url(), "--suite", suite, "--json", str(target)])
    assert r.exit_code == 2, r.output
    assert f"error: --json: {target}: {what}: writing there would destroy it" in r.stderr, r.stderr
    assert target.read_bytes() == before
