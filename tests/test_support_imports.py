"""Tests import their helpers as ``support.X`` (``pythonpath = ["tests"]``), never ``tests.support.X``:
the two names load one file as two modules, each with its own module state (a helper's cache, a
registry of servers started, a patched attribute), so a test that set one up through one name read
it back empty through the other. The same holds for a test module another test imports from
(``from test_report import ...``, never ``from tests.results.test_report import ...``): loaded twice,
its ``prepared_once`` builds ran twice a session, keyed by the module's name (QA, qa210)."""
import re
from pathlib import Path

TESTS = Path(__file__).parent


def test_no_test_imports_support_under_a_second_name():
    pattern = re.compile(r"^\s*(from|import)\s+tests\.support\b", re.MULTILINE)
    offenders = [str(p.relative_to(TESTS)) for p in sorted(TESTS.rglob("*.py")) if pattern.search(p.read_text())]
    assert offenders == [], f"import these as support.X: {offenders}"


def test_no_test_imports_another_test_module_under_a_second_name():
    pattern = re.compile(r"^\s*(from|import)\s+tests\.\w+\.test_\w+", re.MULTILINE)
    offenders = [str(p.relative_to(TESTS)) for p in sorted(TESTS.rglob("*.py")) if pattern.search(p.read_text())]
    assert offenders == [], f"import these as test_X (pytest puts each test file's folder on sys.path): {offenders}"
