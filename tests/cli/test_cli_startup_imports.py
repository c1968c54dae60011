"""A command imports only what it uses: the libraries it has no use for stay unloaded.

Nearly all of a short command's time is imports (``python -X importtime -m tuner study status
--help``; ``benchmarks/cli_startup.py`` times the common commands). Each case runs one command in
a fresh interpreter, as ``tuner`` does, and reads ``sys.modules`` at its end: a module-level import
added later that loads Optuna, aiohttp or numpy for ``--help`` fails here, not in a stopwatch.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: Runs ``tuner ARGS`` in this interpreter, then prints the loaded module names as the last line.
_PROBE = """
import json, sys
sys.argv = ["tuner", *json.loads(sys.argv[1])]
from tuner.cli import main
try:
    main()
except SystemExit:
    pass
print()
print(json.dumps(sorted(sys.modules)))
"""

#: The libraries a command that opens no storage, sends no request and runs no server never needs.
_STORAGE = {"optuna", "sqlalchemy", "numpy"}
_HTTP = {"aiohttp", "asyncio"}


def loaded(args: list[str], cwd) -> set[str]:
    """The modules ``tuner ARGS`` (run in ``cwd``) left loaded."""
    out = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], cwd=cwd, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


#: the command line -> the libraries it must not load
CASES = {
    "--help": _STORAGE | _HTTP | {"rich.progress"},
    "bench --help": _STORAGE | _HTTP | {"rich.progress"},
    "study status --help": _STORAGE,
    "study pareto --help": _STORAGE,
    "study list --help": _STORAGE,
    # backend model: no server is launched and no request sent (the launcher's health probe loaded aiohttp)
    "study run model.yaml --dry-run": _HTTP - {"asyncio"},
    "study run model.yaml": _HTTP - {"asyncio"},  # (asyncio: Optuna's tqdm imports it)
}

#: The shipped model study (the performance model alone), two trials: the run ends in seconds.
MODEL_STUDY = (Path(__file__).resolve().parents[2] / "studies" / "model-demo.yaml").read_text().replace(
    "n_trials: 16", "n_trials: 2")


@pytest.mark.parametrize("command", CASES)
def test_a_command_loads_no_library_it_does_not_use(tmp_path, command):
    (tmp_path / "model.yaml").write_text(MODEL_STUDY)
    unused = CASES[command] & loaded(command.split(), tmp_path)
    assert not unused, f"tuner {command} imported {sorted(unused)}"
