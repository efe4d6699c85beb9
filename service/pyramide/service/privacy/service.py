"""A player's data across the domains: everything kept about them, as one document, and its complete erasure.

Everything of a player lives under its hash tag ``{p:<id>}`` (settings, token hash, statistics, games, records,
results, lists, kept responses, rate limits), except its entries on the deal leaderboards, which the player's
``boards`` set names. Erasure takes the leaderboard entries off first, then every key under the player's tag.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Final
from uuid import UUID

from pyramide.service.games import GameService
from pyramide.service.infra.ratelimit import Limit, RateLimiter, player_limit_key
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.players import Player, PlayerStore
from pyramide.service.stats import Leaderboards, StatsStore

SCAN_COUNT: Final = 1000
PAGE: Final = 100


def erased_key(token: str) -> str:
    """Where a just-erased player's token is remembered, so that a retried erasure answers the same: named by the
    token's hash, never by the player."""
    return "pyr:erased:" + hashlib.sha256(token.encode()).hexdigest()


class PlayerData:
    def __init__(
        self,
        *,
        redis: RedisClient,
        players: PlayerStore,
        games: GameService,
        stats: StatsStore,
        boards: Leaderboards,
        retry_window_s: int,
        limiter: RateLimiter,
        exports_limit: Limit,
    ) -> None:
        self.redis = redis
        self.players = players
        self.games = games
        self.stats = stats
        self.boards = boards
        self.retry_window_s = retry_window_s
        self.limiter = limiter
        self.exports_limit = exports_limit

    async def export(self, player: Player) -> dict[str, Any]:
        """Everything kept about ``player``: settings, statistics, every game with its record and result, the won
        games as ranked, and the leaderboard entries. Counted against the player's ``exports`` limit: it reads
        every game."""
        await self.limiter.check(self.exports_limit, player_limit_key(player.id, self.exports_limit))
        return {
            "player": {
                "id": str(player.id),
                "locale": player.locale,
                "explain_errors": player.explain_errors,
                "name": player.name,
                "created_at": player.created_at.isoformat(),
            },
            "statistics": await self.stats.read(player.id),
            "games": await self._games(player),
            "wins": await self._wins(player),
            "leaderboard_entries": await self.boards.entries_of(player.id),
        }

    async def _wins(self, player: Player) -> list[dict[str, Any]]:
        """Every won game as ranked, page after page."""
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await self.stats.wins(player.id, cursor, PAGE)
            found += page.entries
            cursor = page.next_cursor
            if cursor is None:
                return found

    async def _games(self, player: Player) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            entries, cursor = await self.games.list_games(player, "all", cursor, PAGE)
            for entry in entries:
                game = UUID(str(entry["id"]))
                _, result, hints = await self.games.store.settled(player.id, game)
                found.append(
                    {
                        **{k: v for k, v in entry.items() if k != "changed_ms"},
                        "record": await self.games.store.record(player.id, game),
                        "hints": hints,
                        "result": None if result is None else json.loads(result),
                    }
                )
            if cursor is None:
                return found

    async def erase(self, player: Player, token: str) -> None:
        """Delete everything kept about ``player``; its token stops working, and a retry with it answers the same."""
        await self.redis.set(erased_key(token), "1", ex=self.retry_window_s)
        await self.boards.remove(player.id)
        pattern = f"pyr:{{p:{player.id}}}:*"
        keys = [(raw(k) or b"").decode() async for k in self.redis.scan_iter(match=pattern, count=SCAN_COUNT)]
        for start in range(0, len(keys), SCAN_COUNT):  # all in the player's slot
            await self.redis.unlink(*keys[start : start + SCAN_COUNT])
        if player.create_record:
            await self.redis.unlink(player.create_record)  # createPlayer's sealed answer, in a slot of its own
        self.players.forget(player.id)

    async def was_erased(self, token: str) -> bool:
        return raw(await self.redis.get(erased_key(token))) is not None
