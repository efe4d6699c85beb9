"""When a change ends a game that counts, the result to record for the statistics."""

from __future__ import annotations

from pyramide.service.accounts import Player
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.stats import GameResult, challenge_board
from pyramide.service.status import GameStatus


def settle(stored: StoredGame, now_ms: int, player: Player | None = None) -> GameResult | None:
    """The result to record when this change ends a game that counts (a move was made) and has none yet: won, or
    lost when stuck or abandoned. A dead end settles the game as lost for good, as the rules document says the
    player then starts a new one; undo may still play on in it, but it is never counted again. ``player`` (the
    game's owner, as the request authenticated it) gives the result its name and, for an app's player, the app."""
    if stored.settled or not stored.started:
        return None
    status = stored.status
    if not status.decided:
        return None
    game = stored.game
    stored.settled = True
    assert stored.first_move_ms is not None
    finished = stored.finished_ms or now_ms
    return GameResult(
        player=stored.owner,
        game=stored.id,
        code=None if stored.challenge else str(game.code),
        challenge=stored.challenge,
        board=_board(stored, finished),
        won=status is GameStatus.WON,
        elapsed_ms=max(0, finished - stored.first_move_ms),
        moves=game.moves,
        undos=game.undos,
        score=game.score,
        finished_ms=finished,
        name=None if player is None else player.name,
        app_id=None if player is None or player.app_id is None else str(player.app_id),
        app_name=None if player is None or player.app_id is None else player.app_name,
        external_id=None if player is None or player.app_id is None else player.external_id,
        times=list(stored.times or []) if stored.challenge is not None else None,
        deal=str(game.code),
        sealed_until_ms=stored.sealed_until_ms if stored.challenge is not None else 0,
    )


def _board(stored: StoredGame, finished_ms: int) -> str | None:
    """The leaderboard a win goes on: the code's; for a challenge game, the challenge's if it ended while the
    challenge was open, else none (from the close its code is public, and anyone could look its cards up)."""
    if stored.challenge is None:
        return str(stored.game.code)
    return challenge_board(stored.challenge) if finished_ms < stored.sealed_until_ms else None
