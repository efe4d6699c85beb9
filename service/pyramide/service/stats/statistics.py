"""A player's statistics: games played, won and lost, streaks, best time and fewest moves, averages, hints, and the
won games ranked by time, then moves, then the earlier finish.

Keys carry the player's hash tag ``{p:<id>}``. Every game that counts has one field in the player's ``games`` hash
(``playing``, ``won`` or ``lost``); one Lua script moves it forward and updates the counters in the same step, and
refuses to move a game that is already won or lost. That makes recording idempotent: the settlement may record the
same start or result again (a retry, a repair after a crash) and it is counted once.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from typing import Any, Final
from uuid import UUID

from pyramide.service.infra.redis import RedisClient
from pyramide.service.stats.rankings import Page, RankedLists, rank_member
from pyramide.service.stats.results import GameResult
from pyramide.service.status import GameStatus

FOLLOW_PLAYER_LUA: Final = """
local function follow_player(player_key, count)
  local pttl = redis.call('PTTL', player_key)
  for i = 1, count do
    if pttl > 0 then redis.call('PEXPIRE', KEYS[i], pttl) else redis.call('PERSIST', KEYS[i]) end
  end
end
"""
"""The player's keys live as long as the player: an idle player that never finished a game expires with all it
kept; one that did is kept for good. Applied by every script that writes them."""

_RECORD: Final = (
    FOLLOW_PLAYER_LUA
    + """
if redis.call('EXISTS', KEYS[7]) == 1 then return -1 end
local function record()
redis.call('ZREM', KEYS[5], ARGV[1])
local state = redis.call('HGET', KEYS[2], ARGV[1])
if state == 'won' or state == 'lost' then return 0 end
if ARGV[2] == 'start' then
  if state then return 0 end
  redis.call('HSET', KEYS[2], ARGV[1], 'playing')
  return 1
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if ARGV[2] == 'lost' then
  redis.call('HINCRBY', KEYS[1], 'lost', 1)
  redis.call('HSET', KEYS[1], 'current_streak', 0)
  return 1
end
local elapsed, moves = tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('HINCRBY', KEYS[1], 'won', 1)
redis.call('HINCRBY', KEYS[1], 'won_time_ms', elapsed)
redis.call('HINCRBY', KEYS[1], 'won_moves', moves)
local streak = redis.call('HINCRBY', KEYS[1], 'current_streak', 1)
if streak > tonumber(redis.call('HGET', KEYS[1], 'best_streak') or '0') then
  redis.call('HSET', KEYS[1], 'best_streak', streak)
end
local best = redis.call('HGET', KEYS[1], 'best_time_ms')
if not best or elapsed < tonumber(best) then redis.call('HSET', KEYS[1], 'best_time_ms', elapsed) end
local fewest = redis.call('HGET', KEYS[1], 'fewest_moves')
if not fewest or moves < tonumber(fewest) then redis.call('HSET', KEYS[1], 'fewest_moves', moves) end
redis.call('ZADD', KEYS[3], 0, ARGV[5])
redis.call('HSET', KEYS[4], ARGV[1], ARGV[6])
return 1
end
local recorded = record()
if ARGV[2] ~= 'start' then redis.call('PERSIST', KEYS[6]) end
follow_player(KEYS[6], 5)
if ARGV[2] == 'won' and redis.call('HEXISTS', KEYS[6], 'banned_ms') == 1 then return 2 end
return recorded
"""
)

_RESET: Final = (
    FOLLOW_PLAYER_LUA
    + """
if redis.call('EXISTS', KEYS[7]) == 1 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
redis.call('HSET', KEYS[1], 'since_ms', ARGV[1])
follow_player(KEYS[6], 1)
return 1
"""
)

_COUNT_HINT: Final = (
    FOLLOW_PLAYER_LUA
    + """
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('HINCRBY', KEYS[1], 'hints', 1)
follow_player(KEYS[2], 1)
return 1
"""
)


def stats_keys(player: UUID) -> list[str]:
    """Counters, the games that count, the ranked wins and their details, and the games awaiting settlement."""
    tag = f"pyr:{{p:{player}}}"
    return [f"{tag}:stats", f"{tag}:games", f"{tag}:wins", f"{tag}:win", f"{tag}:pending"]


@lru_cache(maxsize=4096)
def pending_key(player: UUID) -> str:
    """The player's games awaiting settlement (the last of :func:`stats_keys`), kept for the players in play: the move
    route names it on every save."""
    return f"pyr:{{p:{player}}}:pending"


def tombstone_key(player: UUID) -> str:
    """Set by an erasure, before anything of the player is deleted, for longer than any request may still be in
    flight: every script that writes a key of the player checks it first and writes nothing once it is there, so a
    request that loses the race to an erasure cannot bring a key of the erased player back (see ``privacy``)."""
    return f"pyr:{{p:{player}}}:erased"


def player_key(player: UUID) -> str:
    """The player's settings and token hash (see ``players``)."""
    return f"pyr:{{p:{player}}}:player"


ERASED: Final = -1
"""What recording answers for a player being erased: nothing was recorded."""
BANNED: Final = 2
"""What recording a win answers for a banned player (see ``moderation``): the win raced the ban, and its board
entry is to be kept with the ban (``Leaderboards.set_aside``), not shown."""


class StatsStore:
    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._record = redis.register_script(_RECORD)
        self._reset = redis.register_script(_RESET)
        self._count_hint = redis.register_script(_COUNT_HINT)
        self._lists = RankedLists(redis)

    @staticmethod
    def _keys(player: UUID) -> list[str]:
        """The keys of the scripts that write the statistics: the statistics, the player, the tombstone."""
        return [*stats_keys(player), player_key(player), tombstone_key(player)]

    async def record_start(self, player: UUID, game: UUID) -> None:
        """Count a game as played once; it leaves the pending settlements in the same step."""
        await self._record(keys=[*self._keys(player)], args=[str(game), "start"])

    async def record_result(self, result: GameResult, hints: int) -> int:
        """Count a won or lost game once (as played too): 1; 0 when it was counted already; :data:`ERASED` when its
        player is being erased; :data:`BANNED` for a win of a banned player (counted, or counted already). It
        leaves the pending settlements in the same step."""
        member = rank_member(result.elapsed_ms, result.moves, result.finished_ms, str(result.game))
        outcome = GameStatus.WON if result.won else GameStatus.LOST
        args: list[str | int] = [str(result.game), outcome, result.elapsed_ms, result.moves, member]
        return int(await self._record(keys=self._keys(result.player), args=[*args, json.dumps(result.entry(hints))]))

    async def count_hint(self, player: UUID) -> None:
        await self._count_hint(keys=[stats_keys(player)[0], player_key(player), tombstone_key(player)])

    async def read(self, player: UUID) -> dict[str, Any]:
        counters_key, games_key = stats_keys(player)[:2]
        raw = await self.redis.hgetall(counters_key)
        played = await self.redis.hlen(games_key)
        counters = {k.decode(): int(v) for k, v in raw.items()}
        won, lost = counters.get(GameStatus.WON, 0), counters.get(GameStatus.LOST, 0)
        return dict(  # noqa: C408 (the fields of stats.schemas.Statistics by name: they are no status values)
            played=played,
            won=won,
            lost=lost,
            in_progress=max(0, played - won - lost),
            win_rate=won / played if played else 0.0,
            current_streak=counters.get("current_streak", 0),
            best_streak=counters.get("best_streak", 0),
            best_time_ms=counters.get("best_time_ms"),
            fewest_moves=counters.get("fewest_moves"),
            average_time_ms=round(counters["won_time_ms"] / won) if won else None,
            average_moves=round(counters["won_moves"] / won, 2) if won else None,
            hints_used=counters.get("hints", 0),
            since_ms=counters.get("since_ms"),
        )

    async def reset(self, player: UUID) -> None:
        """Start counting afresh, at once: counters, games, wins and pending settlements go together."""
        await self._reset(keys=self._keys(player), args=[int(time.time() * 1000)])

    async def wins(self, player: UUID, cursor: str | None, limit: int) -> Page:
        _, _, wins_key, win_key, _ = stats_keys(player)
        return await self._lists.page(wins_key, win_key, cursor, limit)
