"""A player's statistics: games played, won and lost, streaks, best time and fewest moves, averages, hints, and the
won games ranked by time, then moves, then the earlier finish.

Keys carry the player's hash tag ``{p:<id>}``. Every game that counts has one field in the player's ``games`` hash
(``playing``, ``won`` or ``lost``); one Lua script moves it forward and updates the counters in the same step, and
refuses to move a game that is already won or lost. That makes recording idempotent: the settlement may record the
same start or result again (a retry, a repair after a crash) and it is counted once.
"""

from __future__ import annotations

import json
from typing import Any, Final, NamedTuple
from uuid import UUID

from pyramide.engine import DealCode
from pyramide.service.deals import ParBook, ParStatus
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.scripts import NoKeys, Result, Script
from pyramide.service.stats.rankings import Page, RankedLists, rank_member
from pyramide.service.stats.results import GameResult
from pyramide.service.status import GameStatus


class StatsKeys(NamedTuple):
    """The keys of the scripts that write the statistics: the statistics, the player, the tombstone."""

    counters: str
    games: str
    wins: str
    win: str
    pending: str
    player: str
    tombstone: str


class RecordArgs(NamedTuple):
    game: str
    outcome: str
    """``start``, ``won`` or ``lost``."""
    elapsed_ms: int
    moves: int
    member: str
    """The win's member in the player's ranked wins."""
    entry: str
    """The win's details (JSON)."""
    par_deal: str
    """A win's deal code, kept until its par is folded in (:meth:`StatsStore.fold_pars`); empty: none."""
    par_from: int
    """From when the win's par may count (a challenge's close; 0: at once)."""
    par_max: int
    """The most wins kept waiting for their par (:data:`PAR_DUE_MAX`)."""


RECORD: Final = Script("stats_record", StatsKeys, RecordArgs)
"""Counts a game once: :attr:`Result.OK`, :attr:`Result.UNCHANGED` when it was counted already,
:attr:`Result.ERASED` when its player is being erased, :attr:`Result.BANNED` for a win of a banned player (counted,
or counted already): the win raced the ban, and its board entry is to be kept with the ban
(``Leaderboards.set_aside``), not shown."""


class ResetArgs(NamedTuple):
    since_ms: int


RESET: Final = Script("stats_reset", StatsKeys, ResetArgs)


class HintKeys(NamedTuple):
    counters: str
    player: str
    tombstone: str


COUNT_HINT: Final = Script("stats_count_hint", HintKeys, NoKeys)


class FoldKeys(NamedTuple):
    counters: str
    tombstone: str


class FoldArgs(NamedTuple):
    game: str
    par: str
    """The deal's par, or empty when it has none (unwinnable, or not decided within the solver's budget)."""


FOLD_PAR: Final = Script("stats_fold_par", FoldKeys, FoldArgs)
"""Folds one win's par into ``par_hits`` and ``best_over_par`` exactly once (:attr:`Result.UNCHANGED` after)."""
PAR_DUE_MAX: Final = 50
"""The most wins a player has waiting for their deal's par: a win past that is never counted at par (the counters
stay bounded however many wins come before the solver answers)."""
PAR_DUE: Final = "par:"


class StatsStore:
    def __init__(self, redis: RedisClient, *, clock: Clock) -> None:
        self.redis = redis
        self.clock = clock
        self._record = RECORD.load(redis)
        self._reset = RESET.load(redis)
        self._count_hint = COUNT_HINT.load(redis)
        self._fold_par = FOLD_PAR.load(redis)
        self._lists = RankedLists(redis)

    @staticmethod
    def _keys(player: UUID) -> StatsKeys:
        stats = keyspace.statistics(player)
        return StatsKeys(
            counters=stats.counters,
            games=stats.games,
            wins=stats.wins,
            win=stats.win,
            pending=stats.pending,
            player=keyspace.player(player),
            tombstone=keyspace.tombstone(player),
        )

    async def record_start(self, player: UUID, game: UUID) -> None:
        """Count a game as played once; it leaves the pending settlements in the same step."""
        start = RecordArgs(
            game=str(game),
            outcome="start",
            elapsed_ms=0,
            moves=0,
            member="",
            entry="",
            par_deal="",
            par_from=0,
            par_max=PAR_DUE_MAX,
        )
        await self._record(self._keys(player), start)

    async def record_result(self, result: GameResult, hints: int) -> Result:
        """Count a won or lost game once (as played too), as :data:`RECORD` answers. It leaves the pending
        settlements in the same step."""
        args = RecordArgs(
            game=str(result.game),
            outcome=(GameStatus.WON if result.won else GameStatus.LOST).value,
            elapsed_ms=result.elapsed_ms,
            moves=result.moves,
            member=rank_member(result.elapsed_ms, result.moves, result.finished_ms, str(result.game)),
            entry=json.dumps(result.entry(hints)),
            par_deal=result.deal or "",
            par_from=result.sealed_until_ms,
            par_max=PAR_DUE_MAX,
        )
        return Result(int(await self._record(self._keys(result.player), args)))

    async def count_hint(self, player: UUID) -> None:
        keys = HintKeys(
            counters=keyspace.statistics(player).counters,
            player=keyspace.player(player),
            tombstone=keyspace.tombstone(player),
        )
        await self._count_hint(keys, NoKeys())

    async def fold_pars(self, player: UUID, pars: ParBook) -> None:
        """Count the player's wins whose deal's par is now known in ``par_hits`` and ``best_over_par``, each once
        (:data:`FOLD_PAR`; a win whose deal has no par leaves without counting). A win whose par is still pending
        stays for the next read (its par is started if nobody works on it), and a challenge's win waits for the
        close, so that the statistics never tell a sealed deal's par."""
        counters = keyspace.statistics(player).counters
        now = now_ms(self.clock)
        for field, value in (await self.redis.hgetall(counters)).items():
            name = field.decode()
            if not name.startswith(PAR_DUE):
                continue
            deal, _moves, since = value.decode().split(" ")
            if int(since) > now:
                continue
            par = await pars.par(DealCode.parse(deal), finished=True)
            if par.status is not ParStatus.PENDING:
                shown = "" if par.moves is None else str(par.moves)
                args = FoldArgs(game=name.removeprefix(PAR_DUE), par=shown)
                await self._fold_par(FoldKeys(counters, keyspace.tombstone(player)), args)

    async def read(self, player: UUID) -> dict[str, Any]:
        stats = keyspace.statistics(player)
        raw = await self.redis.hgetall(stats.counters)
        played = await self.redis.hlen(stats.games)
        counters = {k.decode(): int(v) for k, v in raw.items() if not k.startswith(PAR_DUE.encode())}
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
            par_hits=counters.get("par_hits", 0),
            best_over_par=counters.get("best_over_par"),
            since_ms=counters.get("since_ms"),
        )

    async def reset(self, player: UUID) -> None:
        """Start counting afresh, at once: counters, games, wins and pending settlements go together."""
        await self._reset(self._keys(player), ResetArgs(since_ms=now_ms(self.clock)))

    async def wins(self, player: UUID, cursor: str | None, limit: int) -> Page:
        stats = keyspace.statistics(player)
        return await self._lists.page(stats.wins, stats.win, cursor, limit)
