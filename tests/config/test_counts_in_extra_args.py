"""``max_running_requests``, ``page_size`` and ``cuda_graph_config`` set in ``server.extra_args`` (raw argv,
appended last to every launch) are checked as in ``server.args`` (tuner/config/server_arg_checks.py):
SGLang 0.5.23 reads one command line.

QA (qa146): ``extra_args: [--max-running-requests, "0"]`` was created (``tuner study create``, exit 0),
and the launcher pinned no batch cap since the study set one, so SGLang (``max(1, N // attn_dp_size)``
requests per DP worker) served every concurrency level one request at a time; a
``--cuda-graph-config`` SGLang cannot size (``{"decode": {"max_bs": "8"}}``: a TypeError in
``handle_gpu_memory_settings``) was created and every launch, the baseline's first, would end.
Real ``tuner study create`` in process (click's runner)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli


def _create(tmp_path, name, extra_args, args=None):
    study = demo_study(tmp_path, name, **{"server.extra_args": extra_args, "server.args": args or {}})
    return CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)


@pytest.mark.parametrize("extra_args, says", [
    (["--max-running-requests", "0"], "max_running_requests: 0; SGLang runs max(1, 0) = 1 request at a time"),
    (["--max-running=-2"], "max_running_requests: -2; SGLang runs max(1, -2) = 1 request at a time"),
    (["--page-size", "0"], "page_size: 0; a page holds at least 1 token"),
    (["--cuda-graph-config", '{"decode": {"max_bs": "8"}}'],
     "cuda_graph_config: SGLang 0.5.23 refuses '{\"decode\": {\"max_bs\": \"8\"}}' while handling its arguments"),
])
def test_a_count_sglang_runs_otherwise_is_refused_in_extra_args(tmp_path, extra_args, says):
    r = _create(tmp_path, "counts", extra_args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and ": server: extra_args: " in lines[0] and says in lines[0], r.output
    assert not (tmp_path / "counts.db").exists()


def test_counts_sglang_takes_in_extra_args_are_created(tmp_path):
    ok = _create(tmp_path, "fine", ["--max-running-requests", "64", "--cuda-graph-bs-decode", "1", "2", "4"],
                 {"cuda_graph_config": '{"decode": {"max_bs": 4}}'})
    assert ok.exit_code == 0, ok.output
    assert (tmp_path / "fine.db").exists()
