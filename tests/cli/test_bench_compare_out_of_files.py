"""`tuner bench --compare` under the tuner's own open-file limit says so in one line, as plain
`tuner bench` does (QA, qa222).

``prlimit --nofile=6:6 tuner bench --compare BASE.json`` hit the limit at ``GET /server_info``,
asked before any request to judge the baseline's model (``_refuse_other_model``): plain
``tuner bench`` printed one line naming the limit and ``ulimit -n 65536``; ``--compare`` printed a
traceback of :class:`tuner.bench.TunerOutOfFiles`, exit 1. Here ``/server_info`` is refused as the
kernel refuses a socket past the limit (``EMFILE``, through the client's own check), and both
commands must answer alike."""

from __future__ import annotations

import errno
import json

import pytest
from support.cli_in_process import tuner_here

from tuner.bench import SuiteResult
from tuner.bench.client import BenchClient
from tuner.bench.open_files import check

SUITE = {"name": "tiny", "prompts": [{"name": "p", "text": "Write a haiku about autumn leaves."}],
         "single": {"lengths": [16], "repeats": 1}, "sweep": {"concurrencies": [1], "max_tokens": 16},
         "warmup": {"requests": 1, "max_tokens": 4}, "timeout_s": 60, "ignore_eos": True}


@pytest.fixture
def baseline(tmp_path):
    """A suite file and a baseline of it measured by the simulator (model ``org/model``)."""
    from support.simproc import running_sim

    suite, base = tmp_path / "s.json", tmp_path / "base.json"
    suite.write_text(json.dumps(SUITE))
    with running_sim("--model-path", "org/model", "--sim-noise", "0", speedup=200) as sim:
        r = tuner_here("bench", "--url", sim.url, "--suite", str(suite), "--json", str(base))
    assert r.exit_code == 0, r.output
    assert SuiteResult.load(base).server_info["model_path"] == "org/model"
    return suite, base


@pytest.mark.parametrize("compare", [False, True], ids=["plain", "compare"])
def test_out_of_files_at_server_info_is_one_line_with_or_without_compare(baseline, tmp_path, monkeypatch,
                                                                         compare):
    suite, base = baseline

    async def refused(self):  # the kernel's EMFILE, read by the client's own check (bench/client.py)
        check(OSError(errno.EMFILE, "Too many open files"), "asking GET /server_info")

    monkeypatch.setattr(BenchClient, "server_info", refused)
    out = tmp_path / "run.json"
    argv = ["bench", "--url", "http://127.0.0.1:9", "--suite", str(suite), "--json", str(out)]
    r = tuner_here(*argv, *(["--compare", str(base)] if compare else []))
    assert r.exit_code == 1 and isinstance(r.exception, SystemExit), (r.output, r.exception)  # no traceback
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and r.stdout == "", r.output
    assert lines[0].startswith("error: the tuner could not open a file or connection while asking GET "
                               "/server_info: its open-file limit is reached (ulimit -n: "), lines[0]
    assert "`ulimit -n 65536`" in lines[0] and "the server is not to blame" in lines[0], lines[0]
