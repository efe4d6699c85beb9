"""Reading stored games: a game, its record, its result, the player's lists of games. Plain reads, no script
and no rate limit; :class:`store.GameStore` adds the writes."""

from __future__ import annotations

import enum
from typing import Final
from uuid import UUID

from pyramide.service.games.stored_game import StoredGame
from pyramide.service.infra import keyspace
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.status import GameStatus

LIST_TIES: Final = 64
"""Entries read beyond a page, for games changed in the same millisecond as the previous page's last one."""


class Listed(enum.IntEnum):
    """The list a game is in besides all games: its position in the lists the save script keeps (open, won,
    abandoned)."""

    OPEN = 1
    """In progress, or stuck (which undo may still turn back into play)."""
    WON = 2
    ABANDONED = 3


_OPEN, _WON, _ABANDONED = int(Listed.OPEN), int(Listed.WON), int(Listed.ABANDONED)


def listed(stored: StoredGame) -> int:
    """The list (a :class:`Listed` value) a game belongs in besides all games."""
    status = stored.status
    if status is GameStatus.ABANDONED:
        return _ABANDONED
    return _WON if status is GameStatus.WON else _OPEN


class GameReads:
    """The reads of the game store."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis

    async def read(self, player: UUID, game_id: UUID) -> bytes | None:
        """The stored game, for reading only (no rate limit)."""
        return raw(await self.redis.get(keyspace.game_state(player, game_id)))

    async def attempt(self, player: UUID, challenge: str) -> UUID | None:
        """The player's game at ``challenge``, if the player took part."""
        game = raw(await self.redis.get(keyspace.attempt(player, challenge)))
        return None if game is None else UUID(game.decode())

    async def settled(self, player: UUID, game_id: UUID) -> tuple[bytes | None, bytes | None, int]:
        """The stored game, its result and its hints, read together (one slot)."""
        state, result, hints = await self.redis.mget(
            [
                keyspace.game_state(player, game_id),
                keyspace.game_result(player, game_id),
                keyspace.game_hints(player, game_id),
            ]
        )
        return raw(state), raw(result), int(hints or 0)

    async def record(self, player: UUID, game_id: UUID) -> list[str]:
        return [
            m.decode() if isinstance(m, bytes) else m
            for m in await self.redis.lrange(keyspace.game_record(player, game_id), 0, -1)
        ]

    async def listed(
        self, player: UUID, kind: Listed | None, before: tuple[int, str] | None, count: int
    ) -> list[tuple[str, int]]:
        """Up to ``count`` of the player's game ids with the moment of their last change, newest first, in the list
        ``kind`` (``None``: all games), after ``before`` (the last entry of the previous page)."""
        lists = keyspace.game_lists(player)
        key = {None: lists.all, Listed.OPEN: lists.open, Listed.WON: lists.won, Listed.ABANDONED: lists.abandoned}[kind]
        high: float | str = "+inf" if before is None else before[0]
        rows = await self.redis.zrevrangebyscore(key, high, "-inf", start=0, num=count + LIST_TIES, withscores=True)
        found: list[tuple[str, int]] = []
        for member, score in rows:
            game = member.decode() if isinstance(member, bytes) else str(member)
            if before is not None and int(score) == before[0] and game >= before[1]:
                continue  # on the previous page: equal moments come in descending id order
            found.append((game, int(score)))
        return found[:count]

    async def states(self, player: UUID, games: list[str]) -> list[bytes | None]:
        """The stored games named, ``None`` for each that has expired."""
        if not games:
            return []
        return [raw(s) for s in await self.redis.mget([keyspace.game_state_text(player, g) for g in games])]

    async def unlist(self, player: UUID, games: list[str]) -> None:
        """Take expired games out of the player's lists."""
        for key in keyspace.game_lists(player):
            await self.redis.zrem(key, *games)
