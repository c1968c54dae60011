"""The layer contract of pyproject.toml ([tool.importlinter]): imports point down only, no circles.

The contract is checked by import-linter on the real package, and shown to fail: a copy of the
package with one upward import, and one with an import circle inside a layer, both break it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from packaging.version import Version

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
COPY = "tuner_layers_copy"  # the copy gets its own name, so the installed package cannot stand in


def contract_file(tmp_path: Path, package: str) -> Path:
    """The pyproject's import-linter contract, for ``package`` (its root renamed)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]

    def rename(value):
        if isinstance(value, str):
            return value.replace("tuner", package)
        if isinstance(value, list):
            return [rename(v) for v in value]
        return value

    lines = ["[importlinter]", f"root_package = {package}", ""]
    for contract in config["contracts"]:
        lines.append(f"[importlinter:contract:{contract['id']}]")
        for key, value in contract.items():
            if key == "id":
                continue
            value = rename(value)
            lines.append(f"{key} =" + "".join(f"\n    {v}" for v in value) if isinstance(value, list)
                         else f"{key} = {value}")
        lines.append("")
    path = tmp_path / ".importlinter"
    path.write_text("\n".join(lines))
    return path


def lint(tmp_path: Path, package: str, pythonpath: Path) -> subprocess.CompletedProcess:
    config = contract_file(tmp_path, package)
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    # import-linter takes the file as an argument from 2.17 (which needs Python 3.11; --config is then
    # deprecated) and as --config before it (the dev floor is 2.1)
    positional = Version(metadata.version("import-linter")) >= Version("2.17")
    given = [str(config)] if positional else ["--config", str(config)]
    return subprocess.run([sys.executable, "-c", code, *given, "--no-cache"], cwd=tmp_path,
                          env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def package_copy(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "tuner", src / COPY, ignore=shutil.ignore_patterns("__pycache__", "*.yaml"))
    return src


def test_the_package_keeps_its_layers(tmp_path):
    out = lint(tmp_path, "tuner", ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 kept, 0 broken" in out.stdout


def test_an_upward_import_breaks_the_contract(tmp_path, package_copy):
    rules = package_copy / COPY / "sglang" / "rules.py"
    rules.write_text(rules.read_text() + "\n\ndef _upward():\n    from ..results import pareto  # noqa\n")
    out = lint(tmp_path, COPY, package_copy)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "BROKEN" in out.stdout
    assert f"{COPY}.sglang.rules -> {COPY}.results.pareto" in out.stdout


def test_peers_may_not_import_each_other(tmp_path, package_copy):
    client = package_copy / COPY / "bench" / "client.py"
    client.write_text(client.read_text() + "\n\nfrom ..server import procs  # noqa\n")
    out = lint(tmp_path, COPY, package_copy)
    assert out.returncode == 1, out.stdout + out.stderr
    assert f"{COPY}.bench.client -> {COPY}.server.procs" in out.stdout


def test_a_circle_inside_a_layer_breaks_the_contract(tmp_path, package_copy):
    # report_plots already imports report_data; report_data importing report_plots closes a circle.
    data = package_copy / COPY / "results" / "report_data.py"
    data.write_text(data.read_text() + "\n\nfrom . import report_plots  # noqa\n")
    out = lint(tmp_path, COPY, package_copy)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "no import circles" in out.stdout and "BROKEN" in out.stdout


def test_a_module_over_400_lines_says_why_it_is_one_module():
    """Small modules with one job: a module past 400 lines must say, in its docstring, why it is
    still one module ("Why one module ...") -- or be split."""
    import ast

    root = Path(__file__).resolve().parents[1] / "tuner"
    long_and_silent = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text()
        if text.count("\n") > 400 and "Why one module" not in (ast.get_docstring(ast.parse(text)) or ""):
            long_and_silent.append(str(path.relative_to(root.parent)))
    assert not long_and_silent, f"over 400 lines with no 'Why one module' in the docstring: {long_and_silent}"
