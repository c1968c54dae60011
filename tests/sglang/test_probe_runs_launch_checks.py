"""`tuner doctor`'s probe runs SGLang's launch checks too, not only its resolver.

SGLang 0.5.23's launch runs ``ServerArgs.check_server_args`` (``arg_groups/validation_hook.py``) right
after ``resolve_once`` and before anything loads (``entrypoints/engine.py`` line 1165). QA (qa194): the
probe stopped after ``resolve_once``, so a command line SGLang refuses there (``--pp-size 2`` with EAGLE3:
"Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative decoding";
``--chunked-prefill-size 1000`` on a page size of 16: "chunked_prefill_size must be divisible by
page_size", as SGLang 0.5.23 run on CPU by ``benchmarks/sglang_agreement.py`` said) was reported as
passing SGLang's argument handling, and every launch of the night ended there.

The SGLang side is a stand-in ``sglang.srt.server_args`` module, below the probe's seam
(``prepare_server_args``), whose record raises in ``check_server_args`` what validation_hook.py raises.
"""

from __future__ import annotations

import sys
import types

import pytest

from tuner.sglang import probe


class _Record:
    """A ServerArgs as 0.5.23 shapes it: resolve_once, resolved_dict, check_server_args."""

    def __init__(self, argv):
        self.pp_size = int(argv[argv.index("--pp-size") + 1]) if "--pp-size" in argv else 1
        self.resolved = False

    def resolve_once(self):
        self.resolved = True

    def resolved_dict(self):
        return {"speculative_algorithm": "EAGLE3", "speculative_num_steps": 3, "page_size": 1}

    def check_server_args(self):
        assert self.resolved, "check_server_args runs after resolve_once"
        # validation_hook.py line 133 (check_pipeline_parallel_compat)
        assert self.pp_size == 1, "Pipeline parallelism currently only supports EAGLE (non-multi-layer) " \
                                  "speculative decoding"


@pytest.fixture
def stand_in(monkeypatch):
    module = types.ModuleType("sglang.srt.server_args")
    module.prepare_server_args = _Record
    for name in ("sglang", "sglang.srt"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "sglang.srt.server_args", module)


def test_a_refusal_of_sglangs_launch_checks_is_reported(stand_in):
    got = probe.probe(["--model-path", "m", "--speculative-algorithm", "EAGLE3", "--pp-size", "2"])
    assert got["ok"] is False, got
    assert got["exception"] == "AssertionError", got
    assert "Pipeline parallelism currently only supports EAGLE" in got["message"], got


def test_a_command_line_the_checks_take_still_passes(stand_in):
    got = probe.probe(["--model-path", "m", "--speculative-algorithm", "EAGLE3"])
    assert got["ok"] is True, got
    assert got["resolved"]["speculative_num_steps"] == 3, got
