"""The tuner runs imported straight from its wheel file (zipimport), as from a zipapp.

QA (qa179): with the wheel itself on the path (``PYTHONPATH=sglang_spec_tuner-0.1.0-py3-none-any.whl
python -m tuner study init m.yaml --backend model``), every command that reads a shipped file ended in
a traceback, ``NotADirectoryError: [Errno 20] Not a directory: '.../sglang_spec_tuner-0.1.0-py3-none-
any.whl/tuner/config/studies/model-demo.yaml'``, or in "error: .../tuner/config/spaces/eagle3.yaml:
cannot read: Not a directory": the shipped files were located by ``Path(__file__)``, which inside an
archive names no folder. Now :func:`tuner.shipped` hands out a private copy of them (removed at exit).
The wheel is built once here (about 2 seconds, as in tests/test_wheel.py); the study runs on the
performance model (no server), 2 trials of the shipped `mixed` suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_wheel import wheel  # noqa: F401 - the module-scoped fixture that builds the wheel


def test_the_main_job_runs_with_the_wheel_file_itself_on_the_path(wheel, tmp_path):  # noqa: F811
    work, tmp = tmp_path / "empty", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(wheel), "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmp)}
    env.pop("TUNER_STORAGE", None)

    def tuner_cli(*args: str) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=work, env=env, capture_output=True,
                           text=True, timeout=240)
        assert r.returncode == 0 and "Traceback" not in r.stderr, \
            f"tuner {' '.join(args)} exited {r.returncode}:\n{r.stderr[-3000:]}"
        return r

    where = subprocess.run([sys.executable, "-c", "import tuner; print(tuner.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=60).stdout.strip()
    assert where == str(Path(wheel) / "tuner" / "__init__.py")  # imported from inside the archive
    tuner_cli("study", "init", "demo.yaml", "--backend", "model")
    study = work / "demo.yaml"
    text = study.read_text()
    assert "\nsearch_space: eagle3 " in text and "n_trials: 16" in text
    assert "suite: seed\n" in text
    # the mixed suite reads its dataset beside it (../datasets/mixed.jsonl)
    study.write_text(text.replace("n_trials: 16", "n_trials: 2").replace("suite: seed\n", "suite: mixed\n"))
    r = tuner_cli("study", "run", "demo.yaml")  # the shipped space, suite, dataset and profile
    assert "done: 2 measured" in r.stdout, r.stdout[-2000:]
    tuner_cli("study", "export", "demo.yaml", "--pick", "knee", "-o", "best.yaml")
    assert "speculative-num-steps: " in (work / "best.yaml").read_text()
    assert "tuner-data-" not in (work / "best.yaml").read_text()  # the copy's path is nowhere kept
    assert list(tmp.iterdir()) == []  # each process removed its copy when it ended
