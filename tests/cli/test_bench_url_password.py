"""`tuner bench --url http://user:PASSWORD@host:port` never prints the password, nor saves it in the
--json result (QA: `no server answering at http://u:s3cret@127.0.0.1:1 ...` on stderr, and the
result file kept the URL as given in `base_url`). The URL is shown and stored with `***`."""

from __future__ import annotations

import json
import socket

import yaml
from click.testing import CliRunner
from support.simproc import running_sim

from tuner.cli import cli

PASSWORD = "s3c@r:et/x y"
SUITE = {"name": "tiny", "prompts": [{"name": "a", "text": "hello"}], "single": {"lengths": [8], "repeats": 1},
         "sweep": {"concurrencies": [1], "max_tokens": 8}, "warmup": {"requests": 0}, "timeout_s": 60}


def _url(port: int) -> str:
    from urllib.parse import quote

    return f"http://user:{quote(PASSWORD, safe='')}@127.0.0.1:{port}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _no_secret(text: str) -> None:
    from urllib.parse import quote

    for form in (PASSWORD, quote(PASSWORD, safe=""), "s3c"):
        assert form not in text, text


def test_no_server_line_hides_the_password(tmp_path):
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE))
    r = CliRunner().invoke(cli, ["bench", "--url", _url(_free_port()), "--suite", str(tmp_path / "suite.yaml"),
                                 "--json", str(tmp_path / "r.json")], catch_exceptions=False)
    assert r.exit_code == 1 and "no server answering at http://user:***@127.0.0.1:" in r.output, r.output
    _no_secret(r.output)


def test_saved_result_hides_the_password(tmp_path):
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(SUITE))
    with running_sim(speedup=50) as sim:
        port = int(sim.url.rsplit(":", 1)[1])
        r = CliRunner().invoke(cli, ["bench", "--url", _url(port), "--suite", str(tmp_path / "suite.yaml"),
                                     "--json", str(tmp_path / "r.json")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    _no_secret(r.output)
    saved = (tmp_path / "r.json").read_text()
    _no_secret(saved)
    assert json.loads(saved)["base_url"] == f"http://user:***@127.0.0.1:{port}"
