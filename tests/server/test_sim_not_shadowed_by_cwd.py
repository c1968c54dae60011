"""A ``tuner.py`` or ``tuner/`` package in the working folder does not hide the installed tuner from
the simulator the launcher starts, and ``tuner doctor`` names it where it would.

QA, qa179: in a folder holding the user's own ``tuner.py``, every simulator trial failed with
"No module named tuner.sim" (``python -m`` puts the working folder first on ``sys.path``), and
doctor said to set ``server.python``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from support.cli_in_process import working_dir
from support.processes import STARTED_GROUPS

import tuner
from tuner.config.study import ServerSettings
from tuner.engine.doctor import _shadowing_tuner
from tuner.server.launcher import ServerProcess
from tuner.sglang.rules import SpecConfig


def _settings() -> ServerSettings:
    return ServerSettings.model_validate({
        "backend": "sim", "python": sys.executable, "model_path": "moonshotai/Kimi-K2.6",
        "draft_model_path": "sim/kimi-k2.6-eagle3", "tp_size": 8, "startup_timeout_s": 60.0,
        "stop_grace_s": 5.0, "sim": {"speedup": 5000.0, "load_seconds": 0.1, "noise": 0.0, "seed": 1}})


@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH is read from Python 3.11 on; "
                    "on 3.10 doctor names the file (the other test)")
@pytest.mark.parametrize("shadow", ["tuner.py", "tuner/__init__.py"])
def test_the_simulator_starts_beside_a_users_tuner(tmp_path, shadow):
    folder = tmp_path / "here"
    (folder / shadow).parent.mkdir(parents=True, exist_ok=True)
    (folder / shadow).write_text("raise SystemExit('the user\\'s own tuner was imported')\n")
    _started_with_safe_path(folder, tmp_path)  # raises when the simulator does not become ready


def test_doctor_names_a_shadowing_tuner(tmp_path):
    with working_dir(tmp_path):
        assert _shadowing_tuner() is None
        (tmp_path / "tuner").mkdir()
        assert _shadowing_tuner() is None  # a plain folder (say, of studies) hides nothing
        (tmp_path / "tuner" / "__init__.py").write_text("")
        assert _shadowing_tuner() == "tuner/"
        (tmp_path / "tuner.py").write_text("")
        assert _shadowing_tuner() == "tuner.py"


def _started_with_safe_path(folder, tmp_path) -> bool:
    """Start the simulator from ``folder`` and wait until it is ready (stopped after); whether its
    environment held PYTHONSAFEPATH."""
    with working_dir(folder):
        srv = ServerProcess(_settings(), SpecConfig(3, 1, 4), workdir=tmp_path / "work", trial=1,
                            max_concurrency=32)
        try:
            srv.start()
            STARTED_GROUPS.add(srv.pgid)
            environ = Path(f"/proc/{srv.proc.pid}/environ").read_bytes().split(b"\0")
            srv.wait_ready()
        finally:
            srv.stop()
    return any(v.startswith(b"PYTHONSAFEPATH=") for v in environ)


def test_a_tuner_run_from_its_own_checkout_keeps_the_working_folder_on_the_path(tmp_path):
    """``python -m tuner`` in a checkout that is not installed finds the tuner by the working folder:
    the simulator must too, so there the variable is not set."""
    checkout = Path(tuner.__file__).resolve().parents[1]
    assert _started_with_safe_path(tmp_path, tmp_path) is True
    assert _started_with_safe_path(checkout, tmp_path) is False
