"""A finished (or running) game's positions, step by step: the engine replays the game's record from its deal code,
so that a client can show any moment of a game without a rules engine of its own (the engine is the one home of
every rule) and without dealing a game to replay it."""

from __future__ import annotations

from pyramide.engine import Game, Move, card_code
from pyramide.engine.pyramid import POSITIONS, free_slots
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.status import GameStatus


def position_after(stored: StoredGame, moves: list[Move], step: int) -> dict[str, object]:
    """The position after the first ``step`` operations of ``moves`` (``stored``'s record), as plain data: what a
    board shows, and the operation that led there. 404 ``step_not_found`` outside ``0..len(moves)``. The last step
    carries the stored game's status (``abandoned`` included); earlier ones the engine's."""
    if not 0 <= step <= len(moves):
        raise DomainError(ErrorCode.STEP_NOT_FOUND)
    game = Game(stored.game.code)
    for move in moves[:step]:
        game.play(move)
    status = stored.status if step == len(moves) else GameStatus.of(game.outcome().status)
    return {
        "step": step,
        "steps": len(moves),
        "operation": moves[step - 1].notation() if step else None,
        "status": status,
        "score": game.score,
        "moves": game.moves,
        "pyramid": _slots(game),
        "waste": {
            "count": len(game.waste),
            "top": None if game.waste_top is None else card_code(game.waste_top),
            "cards": [card_code(c) for c in game.waste],
        },
        "stock": {"count": game.stock_count},
        "recycles": {"used": game.recycles_used, "left": game.recycles_left},
    }


def _slots(game: Game) -> list[dict[str, object]]:
    """The 28 slots as a snapshot shows them."""
    free = set(free_slots(game.present))
    return [
        {
            "row": POSITIONS[slot][0] + 1,
            "col": POSITIONS[slot][1] + 1,
            "card": card_code(card) if game.present >> slot & 1 else None,
            "free": slot in free,
        }
        for slot, card in enumerate(game.layout.pyramid)
    ]
