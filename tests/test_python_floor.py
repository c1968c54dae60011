"""The tuner runs on the Python its GPU node's SGLang image ships (3.10 and 3.12 have been seen), not
only on the 3.11 CI runs: pyproject's ``requires-python = ">=3.10"`` holds only while no module uses
syntax or standard-library names newer than 3.10, or ones 3.12+ deprecate (a DeprecationWarning is
an error under the suite's ``filterwarnings``). This reads every module of tuner/ with ``ast``, so
the 3.11 CI catches what would break 3.10 before a user on a GPU node does.

A use guarded by ``try: ... except (ImportError, AttributeError)`` or under an ``if`` on
``sys.version_info`` is allowed (tests/ does so for ``tomllib``).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Standard-library names added after 3.10 (``module.name``), and datetime's naive-UTC calls that
#: 3.12 deprecates.
NEWER = {
    "tomllib": "3.11", "wsgiref.types": "3.11",
    "datetime.UTC": "3.11", "contextlib.chdir": "3.11", "hashlib.file_digest": "3.11",
    "operator.call": "3.11", "math.cbrt": "3.11", "math.exp2": "3.11", "sys.exception": "3.11",
    "logging.getLevelNamesMapping": "3.11", "itertools.batched": "3.12",
    **{f"typing.{n}": "3.11" for n in ("Self", "LiteralString", "Never", "assert_never", "assert_type",
                                        "reveal_type", "dataclass_transform", "Required", "NotRequired",
                                        "TypeVarTuple", "Unpack", "get_overloads", "clear_overloads")},
    "typing.override": "3.12", "typing.TypeAliasType": "3.12", "typing.ReadOnly": "3.13",
    "typing.TypeIs": "3.13",
    **{f"enum.{n}": "3.11" for n in ("StrEnum", "ReprEnum", "verify", "member", "nonmember", "global_enum",
                                      "EnumCheck", "FlagBoundary", "show_flag_values")},
    **{f"asyncio.{n}": "3.11" for n in ("TaskGroup", "timeout", "timeout_at", "Timeout", "Runner", "Barrier",
                                         "BrokenBarrierError")},
    "datetime.datetime.utcnow": "deprecated in 3.12", "datetime.datetime.utcfromtimestamp": "deprecated in 3.12",
}
NEWER_BUILTINS = {"ExceptionGroup": "3.11", "BaseExceptionGroup": "3.11"}


def _guarded(node: ast.AST) -> bool:
    """A ``try`` catching ImportError/AttributeError, or an ``if`` on ``sys.version_info``."""
    if isinstance(node, ast.Try):
        caught = {n.id for h in node.handlers for n in ast.walk(h.type or ast.Name("BaseException"))
                  if isinstance(n, ast.Name)}
        return bool(caught & {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception"})
    return isinstance(node, ast.If) and "version_info" in ast.dump(node.test)


def newer_than_310(source: str, name: str = "<module>") -> list[str]:
    """``line: what (version)`` for each use in ``source`` that Python 3.10 lacks or 3.12 deprecates."""
    found: list[str] = []
    try:  # syntax 3.10's parser refuses (3.12's nested same-quote f-strings fail on 3.11 already)
        ast.parse(source, name, feature_version=(3, 10))
    except SyntaxError as exc:
        found.append(f"{exc.lineno}: syntax newer than 3.10 ({exc.msg})")
    try:
        tree = ast.parse(source, name)
    except SyntaxError:  # this Python cannot read it either (3.10 reading except*): said above
        return found
    aliases: dict[str, str] = {}  # name bound in the module -> the dotted standard name it stands for

    def visit(node: ast.AST) -> None:
        if _guarded(node):
            return
        line = getattr(node, "lineno", 0)
        if type(node).__name__ == "TryStar":  # except* (ast.TryStar exists from 3.11 on)
            found.append(f"{line}: except* (3.11)")
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                if a.name in NEWER:
                    found.append(f"{line}: import {a.name} ({NEWER[a.name]})")
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                aliases[a.asname or a.name] = full
                if full in NEWER or node.module in NEWER:
                    found.append(f"{line}: from {node.module} import {a.name} ({NEWER.get(full) or NEWER[node.module]})")
        elif isinstance(node, ast.Attribute):
            parts = [node.attr]
            inner = node.value
            while isinstance(inner, ast.Attribute):
                parts.insert(0, inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in aliases:
                full = ".".join([aliases[inner.id], *parts])
                if full in NEWER:
                    found.append(f"{line}: {full} ({NEWER[full]})")
        elif isinstance(node, ast.Name) and node.id in NEWER_BUILTINS and node.id not in aliases:
            found.append(f"{line}: {node.id} ({NEWER_BUILTINS[node.id]})")
        for child in ast.iter_child_nodes(node):
            visit(child)

    # imports first, wherever they are (a function-level import binds names used above it)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                if isinstance(node, ast.Import):
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                elif node.module and not node.level:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    visit(tree)
    return sorted(set(found), key=lambda f: int(f.split(":")[0]))


def test_no_module_of_the_tuner_needs_more_than_python_310():
    problems = [f"{path.relative_to(ROOT)}:{f}" for path in sorted((ROOT / "tuner").rglob("*.py"))
                for f in newer_than_310(path.read_text(), str(path))]
    assert not problems, problems


def test_the_check_finds_what_310_lacks():
    source = (
        "import asyncio, tomllib\n"
        "import datetime as dt\n"
        "from datetime import UTC, datetime\n"
        "from typing import Self\n"
        "import enum\n"
        "class Kind(enum.StrEnum):\n"
        "    A = 'a'\n"
        "async def f():\n"
        "    async with asyncio.timeout(1):\n"
        "        pass\n"
        "    return dt.UTC, datetime.utcnow(), ExceptionGroup\n"
        "try:\n"
        "    import tomllib as t\n"
        "except ImportError:\n"
        "    t = None\n"
    )
    found = "\n".join(newer_than_310(source))
    for what in ("import tomllib", "from datetime import UTC", "from typing import Self", "enum.StrEnum",
                 "asyncio.timeout", "datetime.UTC", "datetime.datetime.utcnow", "ExceptionGroup"):
        assert what in found, (what, found)
    assert "13:" not in found  # the guarded import
    assert "syntax newer than 3.10" in "\n".join(newer_than_310("try:\n    pass\nexcept* OSError:\n    pass\n"))
