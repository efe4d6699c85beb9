"""The engine's errors: a small ``ValueError`` hierarchy, each error carrying a stable code.

Callers branch on the class (bad input vs. an illegal move) and show ``code`` to clients; the localised text for
a code lives in :mod:`pyramide.engine.messages`, so the engine never decides a language.
"""

from __future__ import annotations

from typing import ClassVar


class PyramideError(ValueError):
    """Base of every engine error. ``code`` is stable and documented; ``params`` fill the localised message."""

    code: str = "pyramide_error"

    def __init__(self, detail: str = "", *, code: str | None = None, **params: str) -> None:
        if code is not None:
            self.code = code
        self.detail = detail
        self.params = params
        super().__init__(f"{self.code}: {detail}" if detail else self.code)


class InvalidInputError(PyramideError):
    """Input that cannot be read at all: a card, code, rule set, layout, move notation or stored state."""


class InvalidCardError(InvalidInputError):
    code = "invalid_card"

    def __init__(self, text: str) -> None:
        super().__init__(f"not a card code: {text!r}", text=text)


class InvalidDealCodeError(InvalidInputError):
    code = "invalid_deal_code"

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"{reason}: {text!r}", text=text)


class InvalidRulesError(InvalidInputError):
    code = "invalid_rules"


class InvalidLayoutError(InvalidInputError):
    code = "invalid_layout"


class InvalidMoveError(InvalidInputError):
    code = "invalid_move"


class InvalidStateError(InvalidInputError):
    code = "invalid_state"


class IllegalMoveError(PyramideError):
    """A well-formed move that the rules do not allow in the current state; the state is left untouched."""

    CODES: ClassVar[frozenset[str]] = frozenset(
        {
            "card_covered",
            "card_removed",
            "not_free",
            "not_a_king",
            "sum_must_be_13",
            "same_card",
            "stock_empty",
            "stock_not_empty",
            "waste_empty",
            "no_recycles_left",
            "no_more_moves",
            "game_over",
            "nothing_to_undo",
        }
    )

    def __init__(self, code: str, detail: str = "", **params: str) -> None:
        if code not in self.CODES:
            raise AssertionError(f"unknown illegal-move code {code!r}")
        super().__init__(detail, code=code, **params)
