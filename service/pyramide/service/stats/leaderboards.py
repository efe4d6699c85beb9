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

import bisect
import json
from typing import Any, Final, NamedTuple
from uuid import UUID

from redis.exceptions import ResponseError

from pyramide.service.boards import challenge_board
from pyramide.service.infra import keyspace, outbox
from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.redis import RedisClient, raw, storage_full
from pyramide.service.infra.scripts import Result, Script
from pyramide.service.stats.rankings import Page, RankedLists, rank_member
from pyramide.service.stats.results import GameResult


class PlayerArgs(NamedTuple):
    player: str


class RemoveArgs(NamedTuple):
    player: str
    at_ms: int
    """When, for the ``challenge.entry`` event it may emit."""


REMOVE: Final = Script("board_remove", keyspace.Boards, RemoveArgs)
"""Takes a player's entry off a board for good: :attr:`Result.OK`, or :attr:`Result.MISSING` when it had none. An
app player's entry leaving a challenge's board emits ``challenge.entry`` (``left``) to the board's outbox."""


class EnterArgs(NamedTuple):
    player: str
    member: str
    """The ranked member (see :func:`board_member`)."""
    entry: str
    """The entry's details (JSON)."""
    identity: str
    """``app`` or ``anonymous``: the ranking the entry goes in besides the whole one."""
    ids: str
    """On a challenge's board, an app player's ids for its app's events (JSON: ``app``, ``external_id``,
    ``challenge``); empty for none (a deal's board, an anonymous player: nothing more to pay); :data:`NOTED_IDS`
    for those noted before, if any (an entry a lifted ban puts back)."""
    at_ms: int


ENTER: Final = Script("board_enter", keyspace.Boards, EnterArgs)
"""Enters a win: :attr:`Result.OK` when it is the player's new best, :attr:`Result.UNCHANGED` otherwise. An app
player's new best on a challenge's board emits ``challenge.entry`` (``entered`` or ``improved``; the entry without
the code, sealed until the close) to the board's outbox, in the same script."""


class NoteKeys(NamedTuple):
    boards: str
    tombstone: str


class NoteArgs(NamedTuple):
    board: str


NOTE: Final = Script("board_note", NoteKeys, NoteArgs)
"""Notes a board among the player's, unless the player is being erased (:attr:`Result.ERASED`)."""


class ReadKeys(NamedTuple):
    best: str
    entries: str


READ: Final = Script("board_read", ReadKeys, PlayerArgs)
"""The player's member and entry on a board, read together."""


class KeepKeys(NamedTuple):
    kept: str
    player: str


class KeepArgs(NamedTuple):
    board: str
    member: str
    entry: str


KEEP: Final = Script("board_keep", KeepKeys, KeepArgs)
"""Keeps an entry with the player's ban: :attr:`Result.OK`; :attr:`Result.MISSING` once the ban is lifted."""


class RemoveIfArgs(NamedTuple):
    player: str
    member: str
    at_ms: int


REMOVE_IF: Final = Script("board_remove_if", keyspace.Boards, RemoveIfArgs)
"""Takes the player's entry off a board if it is still the one kept (a better one entered since stays)."""


class TouchArgs(NamedTuple):
    state: str
    """What the board's GET shows besides its entries (JSON)."""
    ttl_s: int
    create: int
    """1: a board with no change counter gets one; 0: it is left as it is (nothing is written)."""


SHOWN_TTL_S: Final = 7 * 86400
"""How long a board's shown state (see :data:`TOUCH`) is kept: it bounds what streams of boards nobody reads leave
behind; once it is gone, the next touch grows the counter again (one event too many, never one too few)."""


TOUCH: Final = Script("board_touch", keyspace.BoardShown, TouchArgs)
"""Grows a board's change counter and tells its live streams when what its GET shows besides its entries changed:
:attr:`Result.OK`, or :attr:`Result.UNCHANGED`."""


AROUND: Final = 5
"""How many entries ``?around=me`` shows above and below the caller's."""

ASSISTED: Final = "a:"
"""The start of an assisted win's ranked member (see the module)."""


def board_member(result: GameResult, hints: int) -> str:
    """The member that ranks a win on a board: its tier, then time, moves and the earlier finish."""
    member = rank_member(result.elapsed_ms, result.moves, result.finished_ms, str(result.player))
    return member if result.clean(hints) else ASSISTED + member


def percentile_of(rank: int, size: int) -> float:
    """The share of a board's entries, in percent, that the entry at ``rank`` ranks level with or above."""
    return round(100 * (size - rank + 1) / size, 1)


def _moves_of(member: str) -> int:
    """The moves a ranked member records (see :func:`rank_member`)."""
    return int(member.removeprefix(ASSISTED).split(":")[1])


NOTED_IDS: Final = "noted"
"""``EnterArgs.ids`` for an entry put back: the ids noted when it was first entered."""

CHALLENGE_BOARD: Final = challenge_board("")
"""How the name of every challenge's board begins."""


def _event_ids(result: GameResult) -> str:
    """What a challenge's board keeps of an app player for its app's events (JSON), or '' (a deal's board, or a
    player of no app: no event)."""
    if result.challenge is None or result.app_id is None:
        return ""
    return json.dumps({"app": result.app_id, "external_id": result.external_id or "", "challenge": result.challenge})


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class Leaderboards:
    def __init__(self, redis: RedisClient, *, clock: Clock) -> None:
        self.redis = redis
        self.clock = clock
        self._enter = ENTER.load(redis)
        self._remove = REMOVE.load(redis)
        self._note = NOTE.load(redis)
        self._read = READ.load(redis)
        self._keep = KEEP.load(redis)
        self._remove_if = REMOVE_IF.load(redis)
        self._touch = TOUCH.load(redis)
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
        note = NoteKeys(boards=keyspace.boards(result.player), tombstone=keyspace.tombstone(result.player))
        if await self._note(note, NoteArgs(board=result.board)) != Result.OK:
            return False
        ids = _event_ids(result)
        args = EnterArgs(player, member, json.dumps(entry), result.identity, ids, now_ms(self.clock))
        keys = keyspace.boards_of_deal(result.board)
        entered = bool(await self._enter(keys, args) == Result.OK)
        if entered and ids:
            await outbox.mark_due(self.redis, keys.outbox, now_ms(self.clock))
        return entered

    async def withdraw(self, result: GameResult) -> None:
        """Take the player of ``result`` off its board again: it was erased while the win was being entered."""
        if result.board is not None:
            await self._remove_for_good(result.board, result.player)

    async def _codes(self, player: UUID) -> list[str]:
        """The codes of the boards the player is on."""
        return [
            c.decode() if isinstance(c, bytes) else str(c) for c in await self.redis.smembers(keyspace.boards(player))
        ]

    async def entries_of(self, player: UUID) -> dict[str, Any]:
        """The player's entry on each board it is on, by code."""
        found: dict[str, Any] = {}
        for code in await self._codes(player):
            entry = await self.redis.hget(keyspace.boards_of_deal(code).entries, str(player))
            if entry is not None:
                found[code] = json.loads(entry)
        return found

    async def kept_of(self, player: UUID) -> dict[str, Any]:
        """The player's entries a ban keeps off the boards, by board (see :meth:`set_aside`)."""
        kept = await self.redis.hgetall(keyspace.ban_kept(player))
        return {_text(code): json.loads(_text(value).partition("\n")[2]) for code, value in kept.items()}

    async def remove(self, player: UUID, codes: list[str] | None = None) -> int:
        """Take the player's entries off every board it is on, or off the boards ``codes`` (the boards re-rank); how
        many there were. Deletions only: Redis allows them when it is full."""
        removed = 0
        for code in await self._codes(player) if codes is None else codes:
            removed += await self._remove_for_good(code, player)
        return removed

    async def _remove_for_good(self, code: str, player: UUID) -> bool:
        """Take the player's entry off the board named ``code``; whether it was there. A challenge's board may have
        emitted ``challenge.entry`` (``left``): its outbox is marked due then."""
        keys = keyspace.boards_of_deal(code)
        removed = bool(await self._remove(keys, RemoveArgs(str(player), now_ms(self.clock))) == Result.OK)
        if removed and code.startswith(CHALLENGE_BOARD):
            await outbox.mark_due(self.redis, keys.outbox, now_ms(self.clock))
        return removed

    async def set_aside(self, player: UUID, codes: list[str] | None = None) -> list[str]:
        """Take a banned player's entries off every board it is on (or off ``codes``) and keep them with the ban;
        the boards it was taken off. Each is kept (player's slot) before it leaves its board (the board's slot), so
        a crash in between loses nothing, and it leaves only if it is still the entry kept. Nothing is kept once the
        ban is lifted (the entry stays)."""
        moved: list[str] = []
        for code in await self._codes(player) if codes is None else codes:
            keys, who = keyspace.boards_of_deal(code), str(player)
            found = await self._read(ReadKeys(best=keys.best, entries=keys.entries), PlayerArgs(player=who))
            if not found:
                continue
            member, entry = found
            kept = KeepKeys(kept=keyspace.ban_kept(player), player=keyspace.player(player))
            if await self._keep(kept, KeepArgs(board=code, member=member, entry=entry)) != Result.OK:
                break
            if await self._remove_if(keys, RemoveIfArgs(who, member, now_ms(self.clock))) == Result.OK:
                moved.append(code)
                if code.startswith(CHALLENGE_BOARD):
                    await outbox.mark_due(self.redis, keys.outbox, now_ms(self.clock))
        return moved

    async def restore(self, player: UUID) -> list[str]:
        """Put the entries kept with a lifted ban back on their boards (each keeps the player's better entry); the
        boards they went back to."""
        restored: list[str] = []
        for code, kept in (await self.redis.hgetall(keyspace.ban_kept(player))).items():
            board = _text(code)
            member, _, entry = _text(kept).partition("\n")
            identity = json.loads(entry).get("identity", "anonymous")
            args = EnterArgs(str(player), member, entry, identity, NOTED_IDS, now_ms(self.clock))
            keys = keyspace.boards_of_deal(board)
            if await self._enter(keys, args) == Result.OK and board.startswith(CHALLENGE_BOARD):
                await outbox.mark_due(self.redis, keys.outbox, now_ms(self.clock))
            await self.redis.hdel(keyspace.ban_kept(player), board)
            restored.append(board)
        return sorted(restored)

    async def annul(self, code: str, player: UUID) -> bool:
        """Take the player's entry off the board named ``code`` for good, or out of what a ban keeps of it;
        whether there was one."""
        on_board = await self._remove_for_good(code, player)
        kept = bool(await self.redis.hdel(keyspace.ban_kept(player), code))
        return on_board or kept

    @staticmethod
    def channel(code: str) -> str:
        """Where a change of the board named ``code`` is announced (the board scripts publish on it)."""
        return keyspace.boards_of_deal(code).ranked

    async def changes(self, code: str) -> int:
        """The board's change counter: the id of its live stream's events (0 before its first change)."""
        return int(raw(await self.redis.get(keyspace.boards_of_deal(code).changes)) or 0)

    async def touch(self, code: str, state: str, *, create: bool = True) -> bool:
        """The board named ``code`` now shows ``state`` besides its entries (its par; a challenge's close): when that
        is news, its change counter grows and its live streams get the board again (whether it did). The scripts
        that change entries do this themselves; this is for what changes elsewhere (the par is saved in another
        slot, a challenge closes with the clock), so it runs after that change, and again on every read of the
        board's live stream: a process that dies in between leaves it to the next read (see ``streams``). Not
        ``create``: a board without a counter is left alone (a read of a code nobody has played or worked out).
        A full Redis leaves the board as it was (false): its streams catch up at a later touch."""
        args = TouchArgs(state, SHOWN_TTL_S, int(create))
        try:
            return bool(await self._touch(keyspace.board_shown(code), args) == Result.OK)
        except ResponseError as error:
            if storage_full(error):
                return False
            raise

    async def page(self, code: str, cursor: str | None, limit: int, identity: str | None = None) -> Page:
        """A page of the board named ``code`` (a deal code, or :func:`challenge_board`); with ``identity``
        (``app`` or ``anonymous``) only those players' entries, ranked among themselves. Entries entered before
        tiers and identities existed read as clean and anonymous (their members rank them so)."""
        keys = keyspace.boards_of_deal(code)
        ranking = {None: keys.ranked, "app": keys.apps, "anonymous": keys.anonymous}[identity]
        page = await self._lists.page(ranking, keys.entries, cursor, limit)
        for entry in page.entries:
            entry.setdefault("tier", "clean")
            entry.setdefault("identity", "anonymous")
        return page

    async def page_by_moves(self, code: str, cursor: str | None, limit: int, identity: str | None = None) -> Page:
        """A page of the deal board named ``code`` by moves, fewest first, ties in the board's own order: the order
        of ``over_par``, since every entry of one deal shares its par. Reads the whole ranking (one sorted set) to
        sort it; the cursor is the last member of the previous page, as with :meth:`page`."""
        keys = keyspace.boards_of_deal(code)
        ranking = {None: keys.ranked, "app": keys.apps, "anonymous": keys.anonymous}[identity]
        ordered = sorted((_moves_of(m), m) for m in map(_text, await self.redis.zrange(ranking, 0, -1)))
        start = 0 if cursor is None else bisect.bisect_right(ordered, (_moves_of(cursor), cursor))
        chosen = ordered[start : start + limit]
        entries = []
        for offset, (_, member) in enumerate(chosen):
            details = await self.redis.hget(keys.entries, member.rpartition(":")[2])
            if details is not None:
                entry = {**json.loads(details), "rank": start + offset + 1}
                entry.setdefault("tier", "clean")
                entry.setdefault("identity", "anonymous")
                entries.append(entry)
        next_cursor = chosen[-1][1] if chosen and start + limit < len(ordered) else None
        return Page(entries, next_cursor)

    async def around(
        self, code: str, player: UUID, identity: str | None = None
    ) -> tuple[Page, int | None, float | None]:
        """The player's entry on the board named ``code`` with up to :data:`AROUND` entries above and below, in the
        board's own order; the player's rank and percentile (``None`` and no entries when not on it)."""
        keys = keyspace.boards_of_deal(code)
        ranking = {None: keys.ranked, "app": keys.apps, "anonymous": keys.anonymous}[identity]
        member, size = await self.redis.hget(keys.best, str(player)), int(await self.redis.zcard(ranking))
        mine = None if member is None else _text(member)
        if mine is None or not await self.redis.zlexcount(ranking, "[" + mine, "[" + mine):
            return Page([], None), None, None  # not on the board (or not in the identity's ranking)
        rank = int(await self.redis.zlexcount(ranking, "-", "(" + mine)) + 1
        first = max(0, rank - 1 - AROUND)
        entries = []
        for offset, near in enumerate(map(_text, await self.redis.zrange(ranking, first, rank - 1 + AROUND))):
            details = await self.redis.hget(keys.entries, near.rpartition(":")[2])
            if details is not None:
                entry = {**json.loads(details), "rank": first + offset + 1}
                entry.setdefault("tier", "clean")
                entry.setdefault("identity", "anonymous")
                entries.append(entry)
        return Page(entries, None), rank, percentile_of(rank, size)

    async def standing(self, code: str, player: UUID) -> int | None:
        """The player's rank on the board named ``code``; ``None`` when not on it."""
        keys = keyspace.boards_of_deal(code)
        member = await self.redis.hget(keys.best, str(player))
        if member is None:
            return None
        text = member.decode() if isinstance(member, bytes) else str(member)
        return int(await self.redis.zlexcount(keys.ranked, "-", "(" + text)) + 1
