"""Every code has its words in both languages; the engine stays pure."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

import pytest

import pyramide.engine
from pyramide.engine import (
    IllegalMoveError,
    InvalidCardError,
    InvalidDealCodeError,
    InvalidLayoutError,
    InvalidMoveError,
    InvalidRulesError,
    InvalidStateError,
    PyramideError,
    errors,
    message,
)
from pyramide.engine.codes import Code
from pyramide.engine.messages import ALWAYS_SHOWN, CATALOGUE, LOCALES

ENGINE = Path(pyramide.engine.__file__).parent
PURE_STDLIB = {
    "__future__",
    "collections",
    "dataclasses",
    "enum",
    "functools",
    "hashlib",
    "hmac",
    "itertools",
    "math",
    "re",
    "secrets",
    "string",
    "typing",
    "zlib",
}


def test_every_illegal_move_code_has_hungarian_and_english_text() -> None:
    for code in IllegalMoveError.CODES:
        assert code in CATALOGUE
    for key, texts in CATALOGUE.items():
        assert set(texts) == set(LOCALES), key
        assert texts["hu"] != texts["en"], key


def test_error_classes_name_catalogued_codes() -> None:
    classes: list[type[PyramideError]] = [
        InvalidCardError,
        InvalidDealCodeError,
        InvalidRulesError,
        InvalidLayoutError,
        InvalidMoveError,
        InvalidStateError,
    ]
    for cls in classes:
        assert cls.code in CATALOGUE


def test_messages_fill_their_parameters_or_drop_them() -> None:
    assert message("card_removed", "en", card="KD") == "This card has already been removed: KD"
    assert message("card_removed", "hu") == "Ez a lap már lekerült"
    assert message("sum_must_be_13", "fr") == "Az összegnek ennyinek kell lennie: 13", "Hungarian by default"


def test_the_always_shown_messages_are_the_documents() -> None:
    assert {"sum_must_be_13", "no_more_moves"} <= ALWAYS_SHOWN
    assert "card_covered" not in ALWAYS_SHOWN


def test_an_unknown_illegal_move_code_is_a_programming_error() -> None:
    with pytest.raises(AssertionError):
        IllegalMoveError("made_up")  # type: ignore[arg-type]


CATALOGUE_READER: Final = {"json", "pathlib"}
"""What ``messages.py`` alone may import besides: it reads the message catalogue, once, at import."""


def test_the_engine_imports_nothing_but_itself_and_pure_standard_modules() -> None:
    for path in ENGINE.glob("*.py"):
        allowed = PURE_STDLIB | (CATALOGUE_READER if path.name == "messages.py" else set())
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert name.startswith("pyramide.engine") or top in allowed, f"{path.name} imports {name}"


SOLVER = ENGINE.parent / "solver"
TWINS = "twins.py"
"""The solver's one module that restates the engine's rules, each twin proven equal to the engine's function
(tests/unit/solver/test_twins.py)."""


def _thirteens(tree: ast.AST) -> set[str]:
    """The names a module gives the number 13: ``PAIR_SUM`` and ``KING_VALUE``, under whatever alias it imports."""
    names = {"PAIR_SUM", "KING_VALUE"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names |= {alias.asname for alias in node.names if alias.name in names and alias.asname}
    return names


def _is_thirteen(node: ast.expr, names: set[str]) -> bool:
    return (isinstance(node, ast.Name) and node.id in names) or (isinstance(node, ast.Constant) and node.value == 13)


def _rule_arithmetic(path: Path) -> list[str]:
    """Each place ``path`` works out pairing by hand: a partner value as ``PAIR_SUM - …``, ``KING_VALUE - …`` or
    ``13 - …`` (under any alias), or a pair as a sum compared with 13."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _thirteens(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and _is_thirteen(node.left, names):
            found.append(f"{path.name}:{node.lineno}")
        elif isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
            sides = (node.left, node.comparators[0])
            summed = any(isinstance(side, ast.BinOp) and isinstance(side.op, ast.Add) for side in sides)
            if summed and any(_is_thirteen(side, names) for side in sides):
                found.append(f"{path.name}:{node.lineno}")
    return found


def solver_rule_breaches(solver: Path) -> list[str]:
    """Each place a solver module other than :data:`TWINS` restates pairing (:func:`_rule_arithmetic`) or reads the
    cover masks that freeness is made of."""
    found = []
    for path in sorted(solver.glob("*.py")):
        if path.name != TWINS:
            found += _rule_arithmetic(path)
            found += [f"{path.name}: COVER_MASK"] * ("COVER_MASK" in path.read_text("utf-8"))
    return found


def test_only_the_cards_module_works_out_a_partner() -> None:
    """Pairing has one home: ``cards.values_pair`` and ``cards.partner``; the rest of the engine calls them."""
    assert [f for p in ENGINE.glob("*.py") if p.name != "cards.py" for f in _rule_arithmetic(p)] == []


def test_only_the_solver_twins_restate_pairing_and_freeness() -> None:
    """The solver states each rule of the engine's once, in its twins module, proven equal to the engine's; every
    other solver module calls the twin (or the engine)."""
    assert solver_rule_breaches(SOLVER) == []


def test_only_the_pyramid_module_tests_freeness() -> None:
    """Freeness has one home, ``pyramid.is_free`` (with the pyramid's own geometry beside it): no other engine
    module reads the cover masks."""
    users = [p.name for p in ENGINE.glob("*.py") if p.name != "pyramid.py" and "COVER_MASK" in p.read_text("utf-8")]
    assert users == []


def test_the_solver_imports_only_the_engine_and_pure_standard_modules() -> None:
    solver = SOLVER
    # gc: a search pauses the collector, then restores it; random: the foresight screen's seeded samples, each from a
    # random.Random(seed) of its own (the same win is judged the same way), never the module's shared generator
    allowed = PURE_STDLIB | {"time", "heapq", "gc", "contextlib", "random", "statistics"}
    for path in solver.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                ok = name.startswith(("pyramide.engine", "pyramide.solver")) or name.split(".")[0] in allowed
                assert ok, f"solver/{path.name} imports {name}"


def test_every_engine_code_is_one_enum_member_with_its_text() -> None:
    """Codes are an enum, not free strings: the catalogue has a text for each member and for nothing else, and
    every error class and illegal move names a member."""
    assert set(CATALOGUE) == set(Code) and all(isinstance(code, Code) for code in CATALOGUE)
    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.InvalidInputError)]
    assert all(isinstance(c.code, Code) for c in classes if c is not errors.InvalidInputError)
    assert set(Code) >= errors.IllegalMoveError.CODES
