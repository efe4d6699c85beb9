"""Move request bodies and the engine's moves, both ways."""

from __future__ import annotations

from pyramide.engine import DRAW, RECYCLE, UNDO, Move, RemoveKing, RemovePair, card_code, parse_card
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.schemas import DrawMove, KingMove, PairMove, RecycleMove, UndoMove


def move_from_body(body: PairMove | KingMove | DrawMove | RecycleMove | UndoMove | object) -> Move:
    """The engine's move for a parsed move body; a body of no known kind is 422 ``validation_failed``, never a
    draw (the schema's union refuses one first; this holds if a kind is ever added there and not here)."""
    if isinstance(body, PairMove):
        first, second = (parse_card(c) for c in body.cards)
        return RemovePair(first, second)
    if isinstance(body, KingMove):
        return RemoveKing(parse_card(body.card))
    if isinstance(body, RecycleMove):
        return RECYCLE
    if isinstance(body, UndoMove):
        return UNDO
    if isinstance(body, DrawMove):
        return DRAW
    raise DomainError(ErrorCode.VALIDATION_FAILED)


def move_body(move: Move) -> dict[str, object]:
    """The request body for ``move``: the inverse of :func:`move_from_body`, for clients replaying a record."""
    if isinstance(move, RemovePair):
        return {"type": "pair", "cards": [card_code(c) for c in move.cards]}
    if isinstance(move, RemoveKing):
        return {"type": "king", "card": card_code(move.card)}
    return {"type": {DRAW: "draw", RECYCLE: "recycle", UNDO: "undo"}[move]}
