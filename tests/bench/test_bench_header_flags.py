"""`tuner bench`'s header says what ``/server_info`` says of speculation, and never reads flags that
are not integers as some other setting (QA: ``speculative_num_steps: true`` beside EAGLE3 printed
"steps=1", ``2.9`` "steps=2", ``"lots"`` "no speculative decoding", each exit 0). A study's trial
with such flags is ``args_unverified`` (tuner.engine.verify), read by the same rule."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_bench_client import FakeSGLang

from tuner.bench.result import resolved_spec_from_info
from tuner.cli import cli
from tuner.engine.verify import _speculation
from tuner.sglang.rules import SpecConfig

ONE = {"name": "one", "prompts": [{"name": "fib", "text": "def fib(n):"}],
       "single": {"lengths": [8], "repeats": 1}, "sweep": {"concurrencies": []},
       "warmup": {"requests": 0}, "timeout_s": 500}

EAGLE3 = {"version": "0.5.23-fake", "model_path": "fake/model", "sim_speedup": 100.0,
          "speculative_algorithm": "EAGLE3", "speculative_num_steps": 3, "speculative_eagle_topk": 1,
          "speculative_num_draft_tokens": 4}


def _header(tmp_path, info: dict) -> str:
    suite_file = tmp_path / "one.yaml"
    suite_file.write_text(json.dumps(ONE))
    with FakeSGLang(info=info) as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file)])
    # the header is the first line (the console may wrap it): up to its clock, whitespace made single
    return " ".join(r.output.split("figures in")[0].split())


@pytest.mark.parametrize("steps", [True, 2.9, "lots", "3", None])
def test_flags_that_are_not_integers_are_said_not_read(tmp_path, steps):
    info = {**EAGLE3, "speculative_num_steps": steps}
    assert resolved_spec_from_info(info) is None
    header = _header(tmp_path, info)
    assert "no speculative decoding" not in header and "as the server runs it" not in header, header
    assert (f"speculative (EAGLE3), its flags not integers in /server_info (speculative_num_steps={steps!r}, "
            "speculative_eagle_topk=1, speculative_num_draft_tokens=4)") in header, header
    failure = _speculation(info, SpecConfig(3, 1, 4), "EAGLE3")
    assert failure is not None and failure[0] == "args_unverified", failure


def test_integer_flags_and_an_autoregressive_server_read_as_before(tmp_path):
    assert resolved_spec_from_info(EAGLE3) == SpecConfig(3, 1, 4)
    assert "speculative, as the server runs it: steps=3 topk=1 draft=4" in _header(tmp_path, EAGLE3)
    off = {**EAGLE3, "speculative_algorithm": None}
    assert "no speculative decoding" in _header(tmp_path, off)
    unsaid = {k: v for k, v in EAGLE3.items() if k != "speculative_algorithm"}
    assert "speculation not said (/server_info has no speculative_algorithm)" in _header(tmp_path, unsaid)
