"""Who may play a daily challenge and see its game's cards (``PYRAMIDE_CHALLENGE_PLAYERS``, issue 57).

With ``app``, only players an app made rank; an anonymous player who could still start an attempt would be the
throwaway that draws the whole stock and hands the layout to a solver for an app player's attempt. So under ``app``
an anonymous player is refused 403 ``app_player_required`` when it starts a challenge game, and on every route that
shows one's cards (its snapshot, stream, moves, record, positions, hints, review) until the challenge closes: a game
started before the setting changed too. After the close the deal's code is public, and nothing is withheld.
"""

from __future__ import annotations

from pyramide.service.accounts import Player
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.stored_game import StoredGame


class ChallengeAccess:
    """The setting's rule for challenge games; ``any`` (the default) lets every player in."""

    def __init__(self, challenge_players: str = "any") -> None:
        self.app_only = challenge_players == "app"

    def check_start(self, player: Player) -> None:
        """403 ``app_player_required`` for an anonymous player under ``app``."""
        if self.app_only and player.app_id is None:
            raise DomainError(ErrorCode.APP_PLAYER_REQUIRED)

    def check_sees(self, player: Player, stored: StoredGame, now: int) -> None:
        """403 ``app_player_required`` for an anonymous player under ``app`` whose game is of a challenge still
        open (:meth:`StoredGame.sealed`); any other game, or after the close, passes."""
        if stored.sealed(now):
            self.check_start(player)
