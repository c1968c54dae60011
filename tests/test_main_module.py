"""``python -m tuner`` runs the command; importing ``tuner.__main__`` does not.

QA (qa179): ``python -c "import tuner.__main__"`` -- as ``pytest --doctest-modules --pyargs tuner``
or an API-doc generator walking the installed package does -- printed the command's usage and
exited 2 (click's "missing command"): the module called ``main()`` unguarded, which also rewires
the process's stdout/stderr and exits.
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import tuner


def test_importing_tuner_main_runs_nothing(capsys):
    sys.modules.pop("tuner.__main__", None)
    module = importlib.import_module("tuner.__main__")  # raised SystemExit(2) before the guard
    assert callable(module.main)
    out = capsys.readouterr()
    assert out.out == "" and out.err == "", out


def test_python_dash_m_tuner_still_runs_the_command():
    r = subprocess.run([sys.executable, "-m", "tuner", "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"tuner, version {tuner.__version__}"
    r = subprocess.run([sys.executable, "-m", "tuner", "no-such-command"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "No such command 'no-such-command'" in r.stderr, (r.returncode, r.stderr)
