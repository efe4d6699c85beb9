"""Per deal code and per daily challenge, a leaderboard of wins: each player's best entry once, best first.

The keys carry the hash tag ``{d:<code>}`` (the canonical code, which names the rules too), so one deal's board
lives in one Redis Cluster slot. Entering a win keeps the better of the player's old and new entry, so entering the
same win again changes nothing: the settlement may repeat it safely.

Tiers: a win without an undo and without a hint (``clean``) ranks before every win that used either (``assisted``),
and a player's clean win beats their assisted one whatever the times. The tier is the start of the ranked member:
a clean member is :func:`rank_member` as it always was, an assisted one carries the prefix ``a:``, which sorts after
every digit. Each entry also says who won (``identity``: ``app``, with the app's name, or ``anonymous``), and each
board keeps a ranking per identity beside its whole one, so a filtered board pages and ranks like the whole one.
"""

from __future__ import annotations

import json
from typing import Any, Final
from uuid import UUID

from pyramide.service.infra.redis import RedisClient
from pyramide.service.stats.rankings import Page, RankedLists, rank_member
from pyramide.service.stats.results import GameResult
from pyramide.service.stats.statistics import player_key, tombstone_key

_REMOVE: Final = """
local member = redis.call('HGET', KEYS[2], ARGV[1])
if member then
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[4], member)
  redis.call('ZREM', KEYS[5], member)
end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return member and 1 or 0
"""

_ENTER: Final = """
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old and old <= ARGV[2] then return 0 end
if old then
  redis.call('ZREM', KEYS[1], old)
  redis.call('ZREM', KEYS[4], old)
  redis.call('ZREM', KEYS[5], old)
end
redis.call('ZADD', KEYS[1], 0, ARGV[2])
if ARGV[4] == 'app' then redis.call('ZADD', KEYS[4], 0, ARGV[2]) else redis.call('ZADD', KEYS[5], 0, ARGV[2]) end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
return 1
"""

_NOTE: Final = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
"""
"""Notes a board among the player's, unless the player is being erased (then the win is entered nowhere)."""

_READ: Final = """
local member = redis.call('HGET', KEYS[2], ARGV[1])
if not member then return false end
return {member, redis.call('HGET', KEYS[3], ARGV[1]) or '{}'}
"""
"""The player's member and entry on a board, read together."""

_KEEP: Final = """
if redis.call('HEXISTS', KEYS[2], 'banned_ms') == 0 then return 0 end
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old and string.sub(old, 1, string.find(old, '\\n', 1, true) - 1) <= ARGV[2] then return 1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '\\n' .. ARGV[3])
return 1
"""
"""Keeps an entry with the player's ban (the better of two on one board), in the player's slot; refused (0) once the
player is no longer banned, so an entry is never kept away by a ban that was lifted meanwhile."""

_REMOVE_IF: Final = """
if redis.call('HGET', KEYS[2], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('ZREM', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
"""
"""Takes the player's entry off a board if it is still the one kept (a better one entered since stays)."""


ASSISTED: Final = "a:"
"""The start of an assisted win's ranked member (see the module)."""
IDENTITIES: Final = ("app", "anonymous")


def board_keys(code: str) -> list[str]:
    """The ranking, each player's best member, the entries' details, and the rankings of app players' and of
    anonymous players' entries."""
    tag = f"pyr:{{d:{code}}}:"
    return [tag + "board", tag + "best", tag + "entries", tag + "board:app", tag + "board:anonymous"]


def board_member(result: GameResult, hints: int) -> str:
    """The member that ranks a win on a board: its tier, then time, moves and the earlier finish."""
    member = rank_member(result.elapsed_ms, result.moves, result.finished_ms, str(result.player))
    return member if result.clean(hints) else ASSISTED + member


def kept_key(player: UUID) -> str:
    """The entries a ban took off the boards, by board (``<member>\\n<entry>``), in the player's slot: lifting the
    ban puts them back; an erasure deletes them with every key under the player's tag."""
    return f"pyr:{{p:{player}}}:ban:kept"


def boards_key(player: UUID) -> str:
    """The codes of the boards a player has an entry on, in the player's slot: for export and erasure."""
    return f"pyr:{{p:{player}}}:boards"


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Leaderboards:
    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._enter = redis.register_script(_ENTER)
        self._remove = redis.register_script(_REMOVE)
        self._note = redis.register_script(_NOTE)
        self._read = redis.register_script(_READ)
        self._keep = redis.register_script(_KEEP)
        self._remove_if = redis.register_script(_REMOVE_IF)
        self._lists = RankedLists(redis)

    async def enter(self, result: GameResult, hints: int) -> bool:
        """Enter a win on its board (the deal's or the challenge's); true when it is the player's new best there.
        The board is noted among the player's (a second step: the board and the player live in different cluster
        slots). A win with no board (a challenge game finished after the close) is entered nowhere.

        An erasure may run in between (see ``privacy``): it sets the player's tombstone, then takes the player off
        every board noted. So the board is noted only while there is no tombstone, and the caller looks at the
        tombstone again after the entry (recording the result does, in the player's slot) and calls
        :meth:`withdraw` when it is there: an erasure that began before the note enters nothing; one that began
        after it finds the board noted, or its tombstone is seen after the entry and the entry comes off again."""
        if result.board is None:
            return False
        player = str(result.player)
        member = board_member(result, hints)
        entry = result.entry(hints)
        del entry["game_id"]  # other players cannot open it
        entry["tier"] = "clean" if result.clean(hints) else "assisted"
        entry["identity"] = result.identity
        entry["app"] = result.app_name if result.app_id is not None else None
        tombstone = tombstone_key(result.player)
        if not await self._note(keys=[boards_key(result.player), tombstone], args=[result.board]):
            return False
        args = [player, member, json.dumps(entry), result.identity]
        return bool(await self._enter(keys=board_keys(result.board), args=args))

    async def withdraw(self, result: GameResult) -> None:
        """Take the player of ``result`` off its board again: it was erased while the win was being entered."""
        if result.board is not None:
            await self._remove(keys=board_keys(result.board), args=[str(result.player)])

    async def _codes(self, player: UUID) -> list[str]:
        """The codes of the boards the player is on."""
        return [c.decode() if isinstance(c, bytes) else str(c) for c in await self.redis.smembers(boards_key(player))]

    async def entries_of(self, player: UUID) -> dict[str, Any]:
        """The player's entry on each board it is on, by code."""
        found: dict[str, Any] = {}
        for code in await self._codes(player):
            entry = await self.redis.hget(board_keys(code)[2], str(player))
            if entry is not None:
                found[code] = json.loads(entry)
        return found

    async def kept_of(self, player: UUID) -> dict[str, Any]:
        """The player's entries a ban keeps off the boards, by board (see :meth:`set_aside`)."""
        kept = await self.redis.hgetall(kept_key(player))
        return {_text(code): json.loads(_text(value).partition("\n")[2]) for code, value in kept.items()}

    async def remove(self, player: UUID, codes: list[str] | None = None) -> int:
        """Take the player's entries off every board it is on, or off the boards ``codes`` (the boards re-rank); how
        many there were. Deletions only: Redis allows them when it is full."""
        removed = 0
        for code in await self._codes(player) if codes is None else codes:
            removed += int(await self._remove(keys=board_keys(code), args=[str(player)]))
        return removed

    async def set_aside(self, player: UUID, codes: list[str] | None = None) -> list[str]:
        """Take a banned player's entries off every board it is on (or off ``codes``) and keep them with the ban;
        the boards it was taken off. Each is kept (player's slot) before it leaves its board (the board's slot), so
        a crash in between loses nothing, and it leaves only if it is still the entry kept. Nothing is kept once the
        ban is lifted (the entry stays)."""
        moved: list[str] = []
        for code in await self._codes(player) if codes is None else codes:
            keys, who = board_keys(code), str(player)
            found = await self._read(keys=keys, args=[who])
            if not found:
                continue
            member, entry = found
            if not await self._keep(keys=[kept_key(player), player_key(player)], args=[code, member, entry]):
                break
            if await self._remove_if(keys=keys, args=[who, member]):
                moved.append(code)
        return moved

    async def restore(self, player: UUID) -> list[str]:
        """Put the entries kept with a lifted ban back on their boards (each keeps the player's better entry); the
        boards they went back to."""
        restored: list[str] = []
        for code, kept in (await self.redis.hgetall(kept_key(player))).items():
            board = _text(code)
            member, _, entry = _text(kept).partition("\n")
            identity = json.loads(entry).get("identity", "anonymous")
            await self._enter(keys=board_keys(board), args=[str(player), member, entry, identity])
            await self.redis.hdel(kept_key(player), board)
            restored.append(board)
        return sorted(restored)

    async def annul(self, code: str, player: UUID) -> bool:
        """Take the player's entry off the board named ``code`` for good, or out of what a ban keeps of it;
        whether there was one."""
        on_board = bool(await self._remove(keys=board_keys(code), args=[str(player)]))
        kept = bool(await self.redis.hdel(kept_key(player), code))
        return on_board or kept

    async def page(self, code: str, cursor: str | None, limit: int, identity: str | None = None) -> Page:
        """A page of the board named ``code`` (a deal code, or :func:`challenge_board`); with ``identity``
        (``app`` or ``anonymous``) only those players' entries, ranked among themselves. Entries entered before
        tiers and identities existed read as clean and anonymous (their members rank them so)."""
        keys = board_keys(code)
        ranking = keys[0] if identity is None else keys[3 + IDENTITIES.index(identity)]
        page = await self._lists.page(ranking, keys[2], cursor, limit)
        for entry in page.entries:
            entry.setdefault("tier", "clean")
            entry.setdefault("identity", "anonymous")
        return page

    async def standing(self, code: str, player: UUID) -> int | None:
        """The player's rank on the board named ``code``; ``None`` when not on it."""
        board, best = board_keys(code)[:2]
        member = await self.redis.hget(best, str(player))
        if member is None:
            return None
        text = member.decode() if isinstance(member, bytes) else str(member)
        return int(await self.redis.zlexcount(board, "-", "(" + text)) + 1
