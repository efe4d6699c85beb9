"""What applying a move did: frozen records that undo, the game record and clients read."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from pyramide.engine.cards import Card
from pyramide.engine.errors import InvalidStateError
from pyramide.engine.messages import message
from pyramide.engine.moves import DRAW, RECYCLE, Draw, Move, RemoveKing, RemovePair

POINTS_PER_CARD = 10


class Status(StrEnum):
    """``won`` once the win condition holds; ``stuck`` when no removal, draw or turn-over is possible any more."""

    IN_PROGRESS = "in_progress"
    WON = "won"
    STUCK = "stuck"


@dataclass(frozen=True, slots=True)
class Outcome:
    """Where a game stands, as :meth:`pyramide.engine.Game.outcome` decides it: its status and its score.

    ``decided``: won or stuck, the result stands (the statistics count it once). ``final``: won, nothing changes
    it any more, not even undo; a stuck game may still be undone back into play (the rules document)."""

    status: Status
    score: int

    @property
    def decided(self) -> bool:
        return self.status is not Status.IN_PROGRESS

    @property
    def final(self) -> bool:
        return self.status is Status.WON


@dataclass(frozen=True, slots=True)
class Operation:
    """One applied move with what undo needs to take it back exactly.

    ``from_waste`` lists the waste cards a removal took, bottom to top; the move's other cards came from the
    pyramid. ``fresh_before`` says whether the waste top was a card just drawn before the move (stock–waste
    pairing depends on it).
    """

    move: Move
    from_waste: tuple[Card, ...] = ()
    fresh_before: bool = False

    @property
    def removed(self) -> tuple[Card, ...]:
        """The cards this operation took off the table."""
        move = self.move
        if isinstance(move, RemoveKing):
            return (move.card,)
        if isinstance(move, RemovePair):
            return move.cards
        return ()

    @property
    def points(self) -> int:
        """10 for each pyramid card removed; waste cards, draws and turn-overs score nothing."""
        return POINTS_PER_CARD * (len(self.removed) - len(self.from_waste))


RECORD_SIZE = 3
_NO_CARD = 255
_KING, _PAIR, _DRAW, _RECYCLE = range(4)


@lru_cache(maxsize=8192)
def pack_operation(operation: Operation) -> bytes:
    """Three bytes: flags (bits 0-1 king, pair, draw, turn-over; bit 2 ``fresh_before``; bits 3-4 first and
    second card from the waste; bit 5 the waste held them second card lowest), then the cards (255 for none).
    Fixed-size records let the undo history stay packed in memory and in storage."""
    move, waste = operation.move, operation.from_waste
    cards = operation.removed
    if isinstance(move, RemoveKing):
        kind = _KING
    elif isinstance(move, RemovePair):
        kind = _PAIR
    else:
        kind = _DRAW if isinstance(move, Draw) else _RECYCLE
    flags = kind | operation.fresh_before << 2
    for bit, card in zip((3, 4), cards, strict=False):
        flags |= (card in waste) << bit
    if len(waste) == 2 and waste[0] == cards[1]:
        flags |= 1 << 5
    padded = (*cards, _NO_CARD, _NO_CARD)
    return bytes((flags, padded[0], padded[1]))


@lru_cache(maxsize=8192)
def unpack_operation(record: bytes) -> Operation:
    """The inverse of :func:`pack_operation`; ``InvalidStateError`` for a record it cannot have written."""
    flags, first, second = record
    kind = flags & 3
    move: Move
    if kind == _KING and first < 52 and second == _NO_CARD and not flags & 0b110000:
        move = RemoveKing(Card(first))
    elif kind == _PAIR and first < 52 and second < 52 and first != second:
        move = RemovePair(Card(first), Card(second))
    elif kind in (_DRAW, _RECYCLE) and first == second == _NO_CARD and not flags & 0b111000:
        move = DRAW if kind == _DRAW else RECYCLE
    else:
        raise InvalidStateError("the stored undo history is damaged")
    if flags >> 6:
        raise InvalidStateError("the stored undo history is damaged")
    cards = (first, second)
    waste = tuple(Card(cards[i]) for i in (0, 1) if flags >> (3 + i) & 1)
    if flags & 32:
        if len(waste) != 2:
            raise InvalidStateError("the stored undo history is damaged")
        waste = waste[::-1]
    return Operation(move, waste, bool(flags & 4))


@dataclass(frozen=True, slots=True)
class Undone:
    """The result of an undo: the operation that was taken back (its points are taken off the score)."""

    operation: Operation

    @property
    def points(self) -> int:
        return -self.operation.points


@dataclass(frozen=True, slots=True)
class Feedback:
    """What a tap (or a refused move) tells the player: a stable code, its parameters, and whether the rules say
    the app always shows its message (others show only with error explanations on)."""

    code: str
    params: tuple[tuple[str, str], ...] = ()
    always_shown: bool = False

    def shown(self, explain_errors: bool) -> bool:
        return self.always_shown or explain_errors

    def message(self, locale: str, explain_errors: bool) -> str | None:
        """The localised text, or ``None`` when the game does not show it."""
        return message(self.code, locale, **dict(self.params)) if self.shown(explain_errors) else None


@dataclass(frozen=True, slots=True)
class TapResult:
    """A tap's feedback and, when the tap changed the table, the operation it applied."""

    feedback: Feedback
    operation: Operation | None = None
