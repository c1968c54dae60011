"""The wheel holds every file the tuner reads by a shipped name, and runs a study from an empty folder.

QA: installed with `pip install` (not from a clone), the tuner had no search space and no study to
start from: a study file needs `search_space`, and search_spaces/ and studies/ are not in the
package. Here the wheel is built as a user's `pip install .` builds it (from a copy of the sources,
so no build/ or egg-info lands in the checkout), its contents checked against what the code resolves
(shipped suites and their datasets, profiles, spaces, starter studies, the server-args table), and
then, with that wheel alone on the path, `tuner study init` + `run` + `export` in an empty folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest
from support.prepared_once import prepared_once

import tuner
from tuner.config.space import SHIPPED_SPACES, SPACES_DIR
from tuner.config.starters import STARTERS, starter_path
from tuner.config.suite import SHIPPED_SUITES, SUITES_DIR
from tuner.config.yamlfile import read_yaml
from tuner.sglang.server_args import SERVER_ARGS_TABLE
from tuner.sim.parser import DEFAULT_PROFILE
from tuner.sim.profile import PROFILES_DIR, list_profiles

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(tuner.__file__).resolve().parent
#: building takes about a second; a build past this is stuck (a build backend fetched, a tree copied)
BUILD_TIMEOUT_S = 120


def _in_wheel(path: Path) -> str:
    return "tuner/" + path.resolve().relative_to(PACKAGE).as_posix()


def resolved_by_name() -> set[str]:
    """Every file the code opens by a shipped name, as a path inside the wheel."""
    files = [SUITES_DIR / f"{name}.yaml" for name in SHIPPED_SUITES]
    for suite in list(files):
        data = read_yaml(suite)
        dataset = data.get("dataset") or {}
        extra = [dataset.get("path")] + [p.get("file") for p in data.get("prompts") or []]
        files += [suite.parent / f for f in extra if f]
    assert DEFAULT_PROFILE in list_profiles()
    files += [PROFILES_DIR / f"{name}.yaml" for name in list_profiles()]
    files += [SPACES_DIR / f"{name}.yaml" for name in SHIPPED_SPACES]
    files += [starter_path(backend) for backend in STARTERS]
    files.append(SERVER_ARGS_TABLE)
    for f in files:
        assert f.is_file(), f"{f}: resolved by the code, missing from the source tree"
    return {_in_wheel(f) for f in files}


def _build_wheel(folder: Path) -> None:
    """The wheel, built into ``folder`` as a user's ``pip install .`` builds it, from a copy of the
    sources outside it (so no build/ or egg-info lands in the checkout, nor in the folder)."""
    with tempfile.TemporaryDirectory(prefix="tuner-wheel-src-") as tmp:
        src = Path(tmp)
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(ROOT / name, src / name)
        shutil.copytree(ROOT / "tuner", src / "tuner", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(folder)], cwd=src, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    assert r.returncode == 0, f"pip wheel failed (setuptools>=77 is a dev extra):\n{r.stderr[-3000:]}"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built once per session (this module and tests/test_wheel_zipimport.py, which imports
    this fixture, on whichever xdist worker asks first); each caller gets its own copy of the file."""
    (built,) = prepared_once(tmp_path_factory, "wheel", _build_wheel).glob("sglang_spec_tuner-*.whl")
    return built


def test_the_wheel_holds_every_file_resolved_by_a_shipped_name(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = sorted(resolved_by_name() - names)
    assert not missing, f"not in the wheel (pyproject [tool.setuptools.package-data]): {missing}"
    # and every data file beside the code: one the code reads by a path of its own would be missed above
    data = {_in_wheel(p) for p in PACKAGE.rglob("*") if p.is_file() and p.suffix not in (".py", ".pyc")
            and "__pycache__" not in p.parts}
    assert not sorted(data - names), f"data files left out of the wheel: {sorted(data - names)}"


def test_the_wheel_alone_inits_runs_and_exports_a_study_in_an_empty_folder(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "empty"
    work.mkdir()
    # the wheel's tuner first on the path (the checkout's editable install comes after it)
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("TUNER_STORAGE", None)

    def tuner_cli(*args: str) -> subprocess.CompletedProcess:
        r = subprocess.run([sys.executable, "-m", "tuner", *args], cwd=work, env=env, capture_output=True,
                           text=True, timeout=240)
        assert r.returncode == 0, f"tuner {' '.join(args)} exited {r.returncode}:\n{r.stderr[-3000:]}"
        return r

    where = subprocess.run([sys.executable, "-c", "import tuner; print(tuner.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True, timeout=60).stdout.strip()
    assert Path(where).is_relative_to(site), where
    tuner_cli("study", "init", "demo.yaml", "--backend", "model")
    study = work / "demo.yaml"
    text = study.read_text()
    assert "\nsearch_space: eagle3 " in text and "n_trials: 16" in text
    study.write_text(text.replace("n_trials: 16", "n_trials: 3"))  # a few trials
    assert "949 valid effective configs" in tuner_cli("space", "list", "eagle3").stdout
    r = tuner_cli("study", "run", "demo.yaml")
    assert "the study's budget of 3 trials is spent" in r.stdout, r.stdout[-2000:]
    tuner_cli("study", "export", "demo.yaml", "--pick", "knee", "-o", "best.yaml")
    best = (work / "best.yaml").read_text()
    assert "speculative-num-steps" in best or "speculative_num_steps" in best, best
    assert sorted(p.name for p in work.iterdir()) == ["best.yaml", "demo", "demo.db", "demo.yaml"]
