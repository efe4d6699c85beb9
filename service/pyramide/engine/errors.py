"""The engine's errors: a small ``ValueError`` hierarchy, each error carrying a stable code.

Callers branch on the class (bad input vs. an illegal move) and show ``code`` to clients; the localised text for
a code lives in :mod:`pyramide.engine.messages`, so the engine never decides a language.
"""

from __future__ import annotations

from typing import ClassVar

from pyramide.engine.codes import Code


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
    code: str = Code.INVALID_CARD

    def __init__(self, text: str) -> None:
        super().__init__(f"not a card code: {text!r}", text=text)


class InvalidDealCodeError(InvalidInputError):
    code: str = Code.INVALID_DEAL_CODE

    def __init__(self, text: str, reason: str) -> None:
        super().__init__(f"{reason}: {text!r}", text=text)


class InvalidRulesError(InvalidInputError):
    code: str = Code.INVALID_RULES


class InvalidLayoutError(InvalidInputError):
    code: str = Code.INVALID_LAYOUT


class InvalidMoveError(InvalidInputError):
    code: str = Code.INVALID_MOVE


class InvalidStateError(InvalidInputError):
    code: str = Code.INVALID_STATE


class IllegalMoveError(PyramideError):
    """A well-formed move that the rules do not allow in the current state; the state is left untouched."""

    CODES: ClassVar[frozenset[Code]] = frozenset(
        {
            Code.CARD_COVERED,
            Code.CARD_REMOVED,
            Code.NOT_FREE,
            Code.NOT_A_KING,
            Code.SUM_MUST_BE_13,
            Code.SAME_CARD,
            Code.STOCK_EMPTY,
            Code.STOCK_NOT_EMPTY,
            Code.WASTE_EMPTY,
            Code.NO_RECYCLES_LEFT,
            Code.NO_MORE_MOVES,
            Code.GAME_OVER,
            Code.NOTHING_TO_UNDO,
        }
    )

    def __init__(self, code: Code, detail: str = "", **params: str) -> None:
        if code not in self.CODES:
            raise AssertionError(f"unknown illegal-move code {code!r}")
        super().__init__(detail, code=code, **params)
