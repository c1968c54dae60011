"""The distribution has a name of its own (``tuner`` on the public index is another package), and
every install instruction (README, error messages) names it and an extra that exists."""

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
NAME = PYPROJECT["project"]["name"]


def test_the_distribution_is_not_called_tuner_but_the_command_is():
    assert NAME == "sglang-spec-tuner"
    assert PYPROJECT["project"]["scripts"] == {"tuner": "tuner.cli:main"}


def _instructions() -> list[tuple[str, str, str]]:
    """(file, package, extra) of every `pip install 'PKG[EXTRA]'` in the README and the code."""
    files = [ROOT / "README.md", *sorted((ROOT / "tuner").rglob("*.py")), *sorted((ROOT / "examples").rglob("*"))]
    out = []
    for f in files:
        if f.is_file():
            for pkg, extra in re.findall(r"pip install (?:-e )?'?([A-Za-z0-9_.-]*)\[([a-z,]+)\]", f.read_text()):
                out.append((str(f.relative_to(ROOT)), pkg, extra))
    return out


def test_every_install_instruction_names_the_distribution_and_a_real_extra():
    found = _instructions()
    assert any(pkg == NAME for _, pkg, _ in found) and any(pkg == "." for _, pkg, _ in found), found
    extras = set(PYPROJECT["project"]["optional-dependencies"])
    for where, pkg, extra in found:
        assert pkg in (NAME, "."), f"{where}: pip install {pkg}[{extra}] installs another package"
        assert set(extra.split(",")) <= extras, f"{where}: no extra {extra}"


def test_no_shipped_file_names_a_path_of_the_development_machine():
    files = [ROOT / "README.md", *(p for d in ("tuner", "studies", "search_spaces", "examples")
                                   for p in sorted((ROOT / d).rglob("*")) if p.is_file() and p.suffix != ".pyc")]
    for f in files:
        text = f.read_text(errors="replace")
        for bad in ("/work/", "/root/", "/tmp/lc"):
            assert bad not in text, f"{f.relative_to(ROOT)} names {bad}: show a placeholder path instead"
