"""A node whose SGLang is another release than the one the tuner writes flags for (0.5.23): its parser
has no flag the launch passes, argparse exits 2 with "unrecognized arguments". No setting launches
there whatever its values, so it is the node's failure, not the trial's: ``ConfigError`` (the run
stops, the trial is queued again) naming the flag, the study key that wrote it, the installed
release and the fix. QA (qa187): a node whose SGLang no longer took ``--speculative-eagle-topk``
failed every trial as ``invalid_args``, each charged to its setting, until the budget was spent.

The seam: ``server.python`` is a wrapper that runs a fake ``sglang`` package (``sglang.__version__``
0.5.30, no installed distribution) whose ``launch_server`` parses its argv with argparse as SGLang
does (``prog="sglang serve"``), without the flags a test names; a real process each launch."""

from __future__ import annotations

import sys
import textwrap

import pytest
from support.processes import STARTED_GROUPS

from tuner.config.study import ServerSettings
from tuner.config.yamlfile import ConfigError
from tuner.server.launcher import LaunchError, ServerProcess
from tuner.sglang.rules import SpecConfig

LAUNCH_SERVER = textwrap.dedent("""\
    import argparse, os, sys
    parser = argparse.ArgumentParser(prog="sglang serve")
    missing = set(os.environ.get("FAKE_MISSING", "").split(","))
    for flag in ("--model-path", "--tp-size", "--host", "--port", "--speculative-algorithm",
                 "--speculative-draft-model-path", "--speculative-num-steps", "--speculative-eagle-topk",
                 "--speculative-num-draft-tokens", "--cuda-graph-max-bs-decode", "--max-running-requests",
                 "--mem-fraction-static"):
        if flag not in missing:
            parser.add_argument(flag)
    parser.add_argument("--attention-backend", choices=["fa3", "triton"] if "flashinfer" in missing else None)
    if "--enable-metrics" not in missing:
        parser.add_argument("--enable-metrics", action="store_true")
    parser.parse_args()
    sys.exit("the fake sglang parsed its flags; it serves nothing")
    """)


def fake_sglang(tmp_path) -> str:
    """The wrapper to give as ``server.python``: the fake ``sglang`` package first on the path."""
    pkg = tmp_path / "site" / "sglang"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('__version__ = "0.5.30"\n')
    (pkg / "launch_server.py").write_text(LAUNCH_SERVER)
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{tmp_path / "site"}" exec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def launch(tmp_path, missing: str, spec: SpecConfig | None = SpecConfig(3, 1, 4), args: dict | None = None):
    settings = ServerSettings.model_validate({
        "backend": "sglang", "python": fake_sglang(tmp_path), "model_path": "org/model",
        "draft_model_path": "org/draft", "tp_size": 1, "host": "127.0.0.1", "port": 0,
        "startup_timeout_s": 60, "stop_grace_s": 5, "args": args or {},
        "env": {"FAKE_MISSING": missing, "CUDA_VISIBLE_DEVICES": "0"}})
    srv = ServerProcess(settings, spec, workdir=tmp_path / "w", trial=0)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        srv.wait_ready()
    finally:
        srv.stop()
        assert srv.returncode is not None and not srv.gpu_lock.held  # nothing left running or held
    raise AssertionError("the fake sglang never becomes ready")


def test_a_flag_the_tuner_writes_that_the_installed_sglang_lacks_stops_the_run(tmp_path):
    with pytest.raises(ConfigError) as err:
        launch(tmp_path, "--speculative-eagle-topk")
    said = str(err.value)
    assert err.value.key == "server.python", said
    assert "runs sglang 0.5.30, which refuses --speculative-eagle-topk" in said, said
    assert "sglang serve: error: unrecognized arguments: --speculative-eagle-topk 1" in said, said
    assert "SGLang 0.5.23's flags" in said and "\n" not in said, said


def test_a_pin_the_installed_sglang_lacks_is_said_with_the_fix_that_works(tmp_path):
    # an older SGLang names the CUDA-graph cap --cuda-graph-max-bs: the pin's fix is to set it oneself
    with pytest.raises(ConfigError) as err:
        launch(tmp_path, "--cuda-graph-max-bs-decode", spec=None)
    said = str(err.value)
    assert "the tuner pins --cuda-graph-max-bs-decode 1 for every launch: set it yourself in " \
           "server.extra_args" in said, said


def test_a_flag_of_server_args_is_named_with_its_key(tmp_path):
    with pytest.raises(ConfigError) as err:
        launch(tmp_path, "--enable-metrics", spec=None, args={"enable_metrics": True})
    said = str(err.value)
    assert err.value.key == "server.args" and "take --enable-metrics out of server.args" in said, said


def test_a_value_the_parser_refuses_stays_a_launch_failure(tmp_path):
    # argparse refusing a value ("invalid choice") is no missing flag: the launch's failure, as before
    with pytest.raises(LaunchError) as err:
        launch(tmp_path, "flashinfer")
    assert err.value.failure_class == "invalid_args", err.value.message
    assert "argument --attention-backend: invalid choice: 'flashinfer'" in err.value.message
