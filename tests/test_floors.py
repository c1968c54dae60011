"""The dependency floors of pyproject.toml hold for what the code and the suite use: a user whose
environment already has an older-but-allowed version keeps it, so a floor below what is used is a
break for that user, not for the newest-version CI."""

import importlib
import re
import sys
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _floors(requirements: list[str]) -> dict[str, Version]:
    out = {}
    for line in requirements:
        req = Requirement(line)
        floors = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
        if floors:
            out[req.name.lower()] = max(floors)
    return out


RUNTIME = _floors(PROJECT["dependencies"])
EXTRAS = {name: _floors(reqs) for name, reqs in PROJECT["optional-dependencies"].items()}


def test_the_dev_extra_holds_each_user_extra_at_the_same_floor():
    """`dev` repeats the user extras' packages (the suite exercises them): one floor for both, so a
    floor raised for users is the one the tests run against."""
    for extra in ("postgres", "dashboard", "report"):
        for name, floor in EXTRAS[extra].items():
            assert EXTRAS["dev"].get(name) == floor, f"[{extra}] {name}>={floor}, [dev] {EXTRAS['dev'].get(name)}"


def test_the_click_floor_separates_a_cli_runner_results_stderr():
    """click 8.2 captures a CliRunner result's stderr apart by default; before it `result.stderr`
    raises "stderr not separately captured" (the 8.1 way, `mix_stderr=False`, is gone in 8.2)."""
    users = [p for p in sorted(ROOT.joinpath("tests").rglob("*.py"))
             if "CliRunner" in (text := p.read_text()) and re.search(r"\b\w+\.stderr\b", text)]
    assert users  # the suite does read it
    assert RUNTIME["click"] >= Version("8.2"), [str(p.relative_to(ROOT)) for p in users[:3]]


def test_no_schema_field_is_in_a_protected_pydantic_namespace():
    """pydantic before 2.10 (the floor allows 2.6) protects every ``model_`` name by default and warns
    at import on fields such as ``model_path``: the schemas state the namespaces they protect."""
    from tuner.config.yamlfile import StrictModel

    for module in ("tuner.config.study", "tuner.config.suite", "tuner.config.space", "tuner.config.slo",
                   "tuner.config.dataset", "tuner.config.sampler", "tuner.sim.profile"):
        importlib.import_module(module)
    protected = StrictModel.model_config.get("protected_namespaces", ("model_",))
    todo, seen = [StrictModel], []
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
        for field in cls.model_fields:
            assert not any(field.startswith(p) for p in protected), f"{cls.__qualname__}.{field}: {protected}"
    assert len(seen) > 20  # the schemas were found
