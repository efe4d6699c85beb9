"""Moves as small value types with a text notation that round-trips.

Notation: a king ``KD``; a pair ``10C+3S``; a draw ``D``; a turn-over of the waste ``R``; an undo ``U``. A game
record is the moves separated by spaces. Parsing takes what :func:`parse_card` takes (any case, ``T``, suit
symbols) and the words ``draw``, ``recycle`` and ``undo``; :meth:`Move.notation` always writes the canonical form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pyramide.engine.cards import Card, card_code, parse_card
from pyramide.engine.errors import InvalidCardError, InvalidMoveError


class Move:
    """Base of the five moves."""

    __slots__ = ()

    def notation(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.notation()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.notation()!r})"


@dataclass(frozen=True, slots=True, repr=False)
class RemoveKing(Move):
    """Remove a free king, from the pyramid or the top of the waste."""

    card: Card

    def notation(self) -> str:
        return card_code(self.card)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RemovePair(Move):
    """Remove two cards that make 13. The order of the cards does not matter: ``10C+3S`` equals ``3S+10C``."""

    first: Card
    second: Card

    def notation(self) -> str:
        return f"{card_code(self.first)}+{card_code(self.second)}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RemovePair):
            return NotImplemented
        return {self.first, self.second} == {other.first, other.second}

    def __hash__(self) -> int:
        return hash(frozenset((self.first, self.second)))

    @property
    def cards(self) -> tuple[Card, Card]:
        return self.first, self.second


@dataclass(frozen=True, slots=True, repr=False)
class Draw(Move):
    """Move the stock's top card onto the waste, face up."""

    SYMBOL: ClassVar[str] = "D"

    def notation(self) -> str:
        return self.SYMBOL


@dataclass(frozen=True, slots=True, repr=False)
class Recycle(Move):
    """Turn the waste over into the empty stock, keeping the order."""

    SYMBOL: ClassVar[str] = "R"

    def notation(self) -> str:
        return self.SYMBOL


@dataclass(frozen=True, slots=True, repr=False)
class Undo(Move):
    """Take back the last operation."""

    SYMBOL: ClassVar[str] = "U"

    def notation(self) -> str:
        return self.SYMBOL


DRAW = Draw()
RECYCLE = Recycle()
UNDO = Undo()
_WORDS: dict[str, Move] = {
    "D": DRAW,
    "DRAW": DRAW,
    "R": RECYCLE,
    "RECYCLE": RECYCLE,
    "U": UNDO,
    "UNDO": UNDO,
}


def parse_move(text: str) -> Move:
    """Read one move in notation; ``InvalidMoveError`` if it is not one. Says nothing about legality."""
    if not isinstance(text, str):
        raise InvalidMoveError(f"not a move: {text!r}")
    cleaned = text.strip()
    word = _WORDS.get(cleaned.upper())
    if word is not None:
        return word
    parts = cleaned.split("+")
    try:
        cards = [parse_card(p) for p in parts]
    except InvalidCardError as error:
        raise InvalidMoveError(f"not a move: {text!r} ({error.detail})") from None
    if len(cards) == 1:
        return RemoveKing(cards[0])
    if len(cards) == 2:
        return RemovePair(cards[0], cards[1])
    raise InvalidMoveError(f"not a move: {text!r}")


def format_record(moves: list[Move]) -> str:
    """A game record: the moves' notation separated by single spaces."""
    return " ".join(m.notation() for m in moves)


def parse_record(text: str) -> list[Move]:
    """The moves of a game record, in order."""
    return [parse_move(part) for part in text.split()]
