"""The installed package says it is typed (PEP 561), and its public API is annotated.

QA (qa179): with the wheel installed (not editable), a script importing the public API named in
tuner/__init__.py (``from tuner.config.study import load_study``) failed `mypy`: "Skipping analyzing
"tuner.config.study": module is installed, but missing library stubs or py.typed marker
[import-untyped]", and every name from the tuner was ``Any``. Type checkers read an installed
package's annotations only when a ``py.typed`` file sits at its root. The wheel is built once here
(about 2 seconds, as in tests/test_wheel.py).
"""

from __future__ import annotations

import inspect
import typing
import zipfile

from test_wheel import wheel  # noqa: F401 - the module-scoped fixture that builds the wheel

import tuner
from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.sglang.rules import SpecConfig, resolve


def test_the_wheel_marks_the_package_typed_at_its_root(wheel):  # noqa: F811
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "tuner/py.typed" in names, sorted(n for n in names if not n.endswith(".py"))


def test_the_public_api_the_marker_vouches_for_is_annotated():
    for name in ("SpecConfig", "resolve", "SearchSpace", "load_study"):
        assert name in tuner.__doc__, name  # the API the package's docstring declares public
    for func in (resolve, load_study):
        hints = typing.get_type_hints(func)
        params = [p for p in inspect.signature(func).parameters if p not in ("self", "cls")]
        assert "return" in hints and all(p in hints for p in params), (func.__qualname__, hints)
    for cls in (SpecConfig, SearchSpace):
        assert typing.get_type_hints(cls), cls.__qualname__
