"""The challenge wins waiting for their screening, across every process (``keyspace.SCREENS``).

A win the cheap fair-play rules would enter is taken here before its screen starts, due when its lease runs out;
a win another process holds (or that waits to be tried again) is not taken, so no two processes screen it at once.
A screen that ends (held or entered) takes it off; one the solver refused (503 ``solver_busy``: its queue was full
or a worker died) makes it due again after :data:`RETRY_S`; one whose process died lets its lease run out. A
periodic sweep in every process claims the due ones (``lua/screen_claim.lua``: one process at a time) and screens
them again, so an honest win ranks as soon as the solver has room, not at its player's next statistics read.
"""

from __future__ import annotations

from typing import Final, NamedTuple
from uuid import UUID

from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.scripts import Script

RETRY_S: Final = 10.0
"""How soon a win the solver refused is screened again (and how often every process sweeps for such wins)."""
CLAIM_LIMIT: Final = 8
"""The most wins one sweep takes: as many as the solver's default queue holds, so a backlog drains in turns."""


class ClaimKeys(NamedTuple):
    due: str


class ClaimArgs(NamedTuple):
    now: int
    lease_ms: int
    limit: int


CLAIM: Final = Script("screen_claim", ClaimKeys, ClaimArgs)


class TakeArgs(NamedTuple):
    member: str
    now: int
    lease_ms: int


TAKE: Final = Script("screen_take", ClaimKeys, TakeArgs)


def _member(player: UUID, game: UUID) -> str:
    return f"{player}:{game}"


class ScreenQueue:
    """The wins to screen: noted with a lease of ``lease_s`` (longer than a screen may take, queue included)."""

    def __init__(self, redis: RedisClient, clock: Clock, lease_s: float) -> None:
        self.redis = redis
        self.clock = clock
        self.lease_ms = int(lease_s * 1000)
        self._claim = CLAIM.load(redis)
        self._take = TAKE.load(redis)

    async def take(self, player: UUID, game: UUID) -> bool:
        """Whether this process is to screen the win now (leased to it: due again only if the lease runs out);
        false while another holds it or it waits to be tried again."""
        args = TakeArgs(_member(player, game), now_ms(self.clock), self.lease_ms)
        return bool(await self._take(ClaimKeys(keyspace.SCREENS), args))

    async def retry(self, player: UUID, game: UUID) -> None:
        """The solver refused the win's screen: due again in :data:`RETRY_S` (unless it was settled meanwhile)."""
        due = now_ms(self.clock) + int(RETRY_S * 1000)
        await self.redis.zadd(keyspace.SCREENS, {_member(player, game): due}, xx=True)

    async def done(self, player: UUID, game: UUID) -> None:
        """The win is settled (or no longer to screen): off the queue."""
        await self.redis.zrem(keyspace.SCREENS, _member(player, game))

    async def claim(self) -> list[tuple[UUID, UUID]]:
        """The wins due now (at most :data:`CLAIM_LIMIT`), each leased to this process."""
        args = ClaimArgs(now=now_ms(self.clock), lease_ms=self.lease_ms, limit=CLAIM_LIMIT)
        claimed: list[bytes] = await self._claim(ClaimKeys(keyspace.SCREENS), args)
        return [_parse(raw.decode()) for raw in claimed]


def _parse(member: str) -> tuple[UUID, UUID]:
    player, game = member.split(":")
    return UUID(player), UUID(game)
