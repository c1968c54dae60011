"""The source distribution holds the whole test suite and the licence, so it tests as a clone does.

QA (qa179): setuptools alone put only ``tests/test_*.py`` in the sdist (no ``conftest.py``, no
``tests/support``, no subfolders), so a packager's ``pytest`` on the unpacked sdist could not even
collect; and ``license = "Apache-2.0"`` was declared with no LICENSE file in it or the repository.
MANIFEST.in now grafts what the suite and README need. Built here as ``python -m build --sdist``
would (setuptools' PEP 517 hook), from a copy of the checkout, so nothing lands in it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SKIP = shutil.ignore_patterns(".git", ".venv", "venv", "__pycache__", "*.pyc", "*.egg-info", "build", "dist",
                               ".landscapes", ".pytest_cache", "*.db", "*-report.html")


def test_the_sdist_holds_the_test_suite_and_the_licence(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=_SKIP)
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
                        "print(b.build_sdist(sys.argv[1]))", str(out)], cwd=src, capture_output=True,
                       text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    (sdist,) = out.glob("sglang_spec_tuner-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    tests = {p.relative_to(src).as_posix() for p in (src / "tests").rglob("*") if p.is_file()}
    assert tests, "no tests found in the copy"
    missing = sorted(tests - names)
    assert not missing, f"test files left out of the sdist (MANIFEST.in): {missing[:20]}"
    for needed in ("LICENSE", "README.md", "pyproject.toml", "tests/conftest.py", "studies/sim-demo.yaml",
                   ".ci/setup-system"):
        assert needed in names, needed
    assert "Apache License" in (ROOT / "LICENSE").read_text()[:200]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
