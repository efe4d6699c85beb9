"""When a change ends a game that counts, the result to record for the statistics."""

from __future__ import annotations

from pyramide.service.games.stored_game import StoredGame
from pyramide.service.stats import GameResult


def settle(stored: StoredGame, now_ms: int, name: str | None = None) -> GameResult | None:
    """The result to record when this change ends a game that counts (a move was made) and has none yet: won, or
    lost when stuck or abandoned. A dead end settles the game as lost for good, as the rules document says the
    player then starts a new one; undo may still play on in it, but it is never counted again."""
    if stored.settled or not stored.started:
        return None
    if not stored.over:
        return None
    game = stored.game
    stored.settled = True
    assert stored.first_move_ms is not None
    finished = stored.finished_ms or now_ms
    return GameResult(
        player=stored.owner,
        game=stored.id,
        code=str(game.code),
        won=game.is_won and not stored.abandoned,
        elapsed_ms=max(0, finished - stored.first_move_ms),
        moves=game.moves,
        undos=game.undos,
        score=game.score,
        finished_ms=finished,
        name=name,
    )
