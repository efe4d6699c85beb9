"""The test tree's own layout: what tests share lives in ``tests/support/``, and no test module, conftest or helper
imports a test module or a conftest (pytest collects those; importing them runs a module twice and ties one test's
private helpers to another)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
SUPPORT_DOCSTRING = '"""Shared test helpers: imported by tests, never a test module."""\n'


def _imported(source: str, package: tuple[str, ...]) -> list[tuple[int, str]]:
    """Every module a file of ``package`` with ``source`` imports (relative imports resolved), with the line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else ()
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def _is_test_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "tests" and any(part.startswith("test_") or part == "conftest" for part in parts[1:])


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")), ids=lambda p: str(p.relative_to(TESTS)))
def test_no_file_imports_a_test_module_or_a_conftest(path: Path) -> None:
    package = path.relative_to(TESTS.parent).parent.parts
    imported = _imported(path.read_text(), package)
    wrong = [f"{path.relative_to(TESTS)}:{line}: {name}" for line, name in imported if _is_test_module(name)]
    assert not wrong, "import it from tests/support/ instead: " + "; ".join(wrong)


def test_support_is_a_package_of_helpers_only() -> None:
    support = TESTS / "support"
    assert (support / "__init__.py").read_text() == SUPPORT_DOCSTRING
    assert not [p.name for p in support.rglob("*.py") if p.name.startswith("test_") or p.name == "conftest.py"]


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("from tests.integration.test_games import X", True),
        ("from .test_games import X", True),
        ("from . import test_games", True),
        ("from .conftest import X", True),
        ("from ..unit.engine.test_moves import X", True),
        ("import tests.unit.engine.test_moves", True),
        ("from tests.support.serving import serving", False),
        ("from tests import support", False),
        ("from .. import support", False),
    ],
)
def test_the_rule_sees_every_spelling_of_such_an_import(source: str, caught: bool) -> None:
    """The rule's own test, as if in a file of tests/integration: absolute, relative and plain imports."""
    names = [name for _, name in _imported(source, ("tests", "integration"))]
    assert any(_is_test_module(name) for name in names) is caught
