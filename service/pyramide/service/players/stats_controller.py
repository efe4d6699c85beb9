"""The caller's statistics and won games (``/v1/players/me/stats``, ``/me/wins``); a reset of them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol
from uuid import UUID

from litestar import Controller, Request, delete, get
from litestar.datastructures import State

from pyramide.service.accounts import Player
from pyramide.service.deals import ParBook
from pyramide.service.http.injection import Injected
from pyramide.service.http.paging import DEFAULT_LIMIT, Cursor, Limit, check_paging_query
from pyramide.service.http.responses import problems
from pyramide.service.stats import StatsStore
from pyramide.service.stats.schemas import PlayerStats, WonGame, WonGamesPage

PlayerRequest = Request[Player, str, State]


class PendingResults(Protocol):
    """What settles a player's finished games that a crash left uncounted (the games domain's settlement): called
    before the statistics are read, so that they are complete."""

    async def reconcile(self, player: UUID) -> None: ...


def _view(counters: dict[str, object]) -> PlayerStats:
    since = counters.pop("since_ms")
    moment = None if since is None else datetime.fromtimestamp(int(str(since)) / 1000, UTC)
    return PlayerStats.model_validate({**counters, "since": moment})


class StatsController(Controller):
    path = "/v1/players/me"
    tags = ["statistics"]

    @get(
        "/stats",
        operation_id="getPlayerStats",
        summary="The caller's statistics",
        description="Games played, won and lost, streaks, best and average times and moves, hints used, wins at"
        " par and the best `over_par`; since the last reset.",
        responses=problems(400, 401, 403),
    )
    async def stats(
        self,
        request: PlayerRequest,
        stats: Injected[StatsStore],
        settlement: Injected[PendingResults],
        pars: Injected[ParBook],
    ) -> PlayerStats:
        await settlement.reconcile(request.user.id)
        await stats.fold_pars(request.user.id, pars)
        return _view(await stats.read(request.user.id))

    @delete(
        "/stats",
        operation_id="resetPlayerStats",
        summary="Reset the caller's statistics",
        description="Counting starts afresh; games already counted are not counted again. Leaderboards keep"
        " their entries.",
        responses=problems(400, 401, 403),
        status_code=200,
    )
    async def reset(self, request: PlayerRequest, stats: Injected[StatsStore]) -> PlayerStats:
        await stats.reset(request.user.id)
        return _view(await stats.read(request.user.id))

    @get(
        "/wins",
        operation_id="listPlayerWins",
        summary="The caller's won games, fastest first (then fewest moves, then the earlier finish)",
        description="A page of them; pass `next_cursor` as `cursor` for the next page (null at the end).",
        responses=problems(400, 401, 403),
    )
    async def wins(
        self,
        request: PlayerRequest,
        stats: Injected[StatsStore],
        settlement: Injected[PendingResults],
        limit: Limit = DEFAULT_LIMIT,
        cursor: Cursor = None,
    ) -> WonGamesPage:
        check_paging_query(request)
        await settlement.reconcile(request.user.id)
        page = await stats.wins(request.user.id, cursor, limit)
        return WonGamesPage(entries=[WonGame.model_validate(e) for e in page.entries], next_cursor=page.next_cursor)
