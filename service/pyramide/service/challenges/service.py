"""Daily challenges as players see them: the current one per preset, one by id, and its leaderboard."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from pyramide.service.challenges.calendar import ChallengeId, day_of, moment, now_ms
from pyramide.service.challenges.deals import ChallengeDeals
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games import GameReading, summary
from pyramide.service.players import Player
from pyramide.service.stats import Leaderboards, challenge_board


class ChallengeService:
    def __init__(self, deals: ChallengeDeals, games: GameReading, boards: Leaderboards) -> None:
        self.deals = deals
        self.games = games
        self.boards = boards

    async def current(self, preset: str, player: Player | None) -> dict[str, Any]:
        """Today's challenge under ``preset`` (404 ``challenge_not_found`` for a preset without challenges)."""
        now = now_ms()
        return await self._describe(self.deals.named(f"{day_of(now).isoformat()}-{preset}", now), player, now)

    async def read(self, challenge: str, player: Player | None) -> dict[str, Any]:
        now = now_ms()
        return await self._describe(self.deals.named(challenge, now), player, now)

    async def _describe(self, challenge: ChallengeId, player: Player | None, now: int) -> dict[str, Any]:
        chosen = await self.deals.chosen(challenge, now)
        closed = now >= challenge.closes_ms
        return {
            "id": str(challenge),
            "rules": challenge.rules.to_json(),
            "opens_at": moment(challenge.opens_ms),
            "closes_at": moment(challenge.closes_ms),
            "open": not closed,
            "players": await self.deals.players(challenge),
            "code": str(chosen.code) if closed else None,
            "you": None if player is None else await self._attempt(challenge, player),
        }

    async def _attempt(self, challenge: ChallengeId, player: Player) -> dict[str, Any] | None:
        attempt = await self.games.attempt(player, str(challenge))
        if attempt is None:
            return None
        game_id, stored = attempt
        rank = await self.boards.standing(challenge_board(str(challenge)), player.id)
        if stored is None:
            return {"game_id": game_id, "status": None, "moves": None, "elapsed_ms": None, "score": None, "rank": rank}
        shown = summary(stored, stored.created_ms)
        keys = ("status", "moves", "elapsed_ms", "score")
        return {"game_id": game_id, **{k: shown[k] for k in keys}, "rank": rank}

    async def leaderboard(
        self,
        challenge: str,
        cursor: str | None,
        limit: int,
        identity: str | None = None,
        around: UUID | None = None,
    ) -> dict[str, Any]:
        """A page of the challenge's board (with ``identity``, only those players' entries); with ``around``, that
        player's entry and its neighbours instead, and the player's rank and percentile."""
        now = now_ms()
        named = self.deals.named(challenge, now)
        if await self.deals.kept(named) is None and not named.is_open(now):
            raise DomainError(ErrorCode.CHALLENGE_NOT_FOUND)
        board = challenge_board(str(named))
        rank, percentile = None, None
        if around is None:
            page = await self.boards.page(board, cursor, limit, identity)
        else:
            page, rank, percentile = await self.boards.around(board, around, identity)
        return {
            "rank": rank,
            "percentile": percentile,
            "challenge": str(named),
            "rules": named.rules.to_json(),
            "final": now >= named.closes_ms,
            "entries": [{**entry, "par": None, "over_par": None} for entry in page.entries],  # never while sealed
            "next_cursor": page.next_cursor,
        }
