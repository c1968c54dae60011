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
    from importlib.metadata import packages_distributions
else:  # pragma: no cover
    import tomli as tomllib
    # 3.10's reads top_level.txt only, which wheels not built by setuptools (click, rich, aiohttp)
    # lack: every such import was "not installed". The backport infers names from files, as 3.11 does
    from importlib_metadata import packages_distributions

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


def _imports(tree) -> tuple[set[str], set[str], set[str]]:
    """The top-level names a module imports: (at module level, anywhere, probed) -- probed ones in a
    ``try:`` whose ``except`` catches ImportError, as an optional package is."""
    import ast

    def names(node):
        if isinstance(node, ast.Import):
            return {a.name.split(".")[0] for a in node.names}
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            return {node.module.split(".")[0]}
        return set()

    def catches_import_error(handler):
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        return any(isinstance(k, ast.Name) and k.id in ("ImportError", "ModuleNotFoundError") for k in kinds)
    probed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(catches_import_error(h) for h in node.handlers):
            probed |= set().union(*(names(n) for stmt in node.body for n in ast.walk(stmt)))
    top = set().union(*(names(n) for n in tree.body))
    return top, set().union(*(names(n) for n in ast.walk(tree))), probed


def test_every_package_the_tuner_imports_is_declared_and_eager_ones_are_required():
    """A module imported when a tuner module loads comes from `dependencies`; one imported inside a
    function (a command's optional part) from `dependencies` or an extra; one probed in a ``try``
    (torch for Optuna's GPSampler, psycopg 3 beside psycopg2) from nothing. `requests` was a runtime
    dependency only the tests and benchmarks used; now it is in `dev` and this keeps it out of tuner/."""
    import ast
    dists = {m: {d.lower() for d in ds} for m, ds in packages_distributions().items()}
    declared_any = set(RUNTIME).union(*(set(e) for e in EXTRAS.values() if e is not EXTRAS["dev"]))
    # a script the *server's* interpreter runs (SGLang's own parser, `tuner doctor`): sglang is there
    server_side = {Path("tuner/sglang/probe.py"): {"sglang"}}
    problems, checked = [], set()
    for path in sorted((ROOT / "tuner").rglob("*.py")):
        top, every, probed = _imports(ast.parse(path.read_text(), str(path)))
        exempt = server_side.get(path.relative_to(ROOT), set()) | {"tuner", "__future__"}
        for name in sorted(every - probed - set(sys.stdlib_module_names) - exempt):
            provided = dists.get(name, set())
            allowed = RUNTIME.keys() if name in top else declared_any
            checked.add(name)
            if not provided & set(allowed):
                problems.append(f"{path.relative_to(ROOT)}: {name} ({', '.join(sorted(provided)) or 'not installed'})")
    assert not problems, problems
    assert {"optuna", "yaml", "click", "aiohttp", "sklearn", "psutil"} <= checked  # the walk saw them
