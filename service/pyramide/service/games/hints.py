"""Hints: the next move of the best line from where a game stands, from the solver."""

from __future__ import annotations

from uuid import UUID

from pyramide.engine import IllegalMoveError
from pyramide.engine.codes import Code
from pyramide.service.accounts import Player
from pyramide.service.deals import Solver
from pyramide.service.deals.schemas import Analysis
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.reading import GameReading
from pyramide.service.games.settlement import Settlement
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.ratelimit import RateLimiter, per_minute
from pyramide.service.infra.settings import LimitName


class GameHints:
    """Hints, at most one search at a time per player and within the player's hint allowance."""

    def __init__(self, reading: GameReading, solver: Solver, settlement: Settlement, limiter: RateLimiter) -> None:
        self.reading = reading
        self.store = reading.store
        self.clock = reading.clock
        self.limiter = limiter
        self.solver = solver
        self.settlement = settlement
        self.hints_limit = per_minute(LimitName.HINTS, reading.store.limits[LimitName.HINTS])

    async def hint(self, player: Player, game_id: UUID) -> Analysis:
        """The best line from here, and whether the game can still be won."""
        stored = await self.reading.load(player, game_id)
        if stored.sealed(now_ms(self.clock)):
            raise DomainError(ErrorCode.HINTS_NOT_ALLOWED)
        if stored.status.final:
            raise IllegalMoveError(Code.GAME_OVER)
        await self.limiter.check(self.hints_limit, keyspace.player_limit(player.id, self.hints_limit.name))
        analysis = await self.solver.for_player(player.id, stored.game)
        if await self.store.count_hint(player.id, game_id, stored.version):
            await self.settlement.stats.count_hint(player.id)
        return analysis
