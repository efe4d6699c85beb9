"""The caller's statistics and won games; a reset of them."""

from __future__ import annotations

from datetime import UTC, datetime

from litestar import Controller, delete, get

from pyramide.service.games.settlement import Settlement
from pyramide.service.http.paging import DEFAULT_LIMIT, Cursor, Limit, check_paging_query
from pyramide.service.http.requests import AnyRequest, current_player
from pyramide.service.http.responses import problems
from pyramide.service.http.schemas import PlayerStats, WonGame, WonGamesPage
from pyramide.service.stats.statistics import PlayerStats as StatsStore


def _view(counters: dict[str, object]) -> PlayerStats:
    since = counters.pop("since_ms")
    moment = None if since is None else datetime.fromtimestamp(int(str(since)) / 1000, UTC)
    return PlayerStats.model_validate({**counters, "since": moment})


class StatsController(Controller):
    path = "/v1/players/me"
    tags = ["statistics"]

    @get("/stats", operation_id="getPlayerStats", summary="The caller's statistics", responses=problems(401))
    async def stats(self, request: AnyRequest) -> PlayerStats:
        player = await current_player(request)
        settlement: Settlement = request.app.state.settlement
        await settlement.reconcile(player.id)
        store: StatsStore = request.app.state.stats
        return _view(await store.read(player.id))

    @delete(
        "/stats",
        operation_id="resetPlayerStats",
        summary="Reset the caller's statistics",
        description="Counting starts afresh; games already counted are not counted again. Leaderboards keep"
        " their entries.",
        responses=problems(401),
        status_code=200,
    )
    async def reset(self, request: AnyRequest) -> PlayerStats:
        player = await current_player(request)
        store: StatsStore = request.app.state.stats
        await store.reset(player.id)
        return _view(await store.read(player.id))

    @get(
        "/wins",
        operation_id="listPlayerWins",
        summary="The caller's won games, fastest first (then fewest moves, then the earlier finish)",
        responses=problems(400, 401),
    )
    async def wins(self, request: AnyRequest, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> WonGamesPage:
        check_paging_query(request)
        player = await current_player(request)
        settlement: Settlement = request.app.state.settlement
        await settlement.reconcile(player.id)
        store: StatsStore = request.app.state.stats
        page = await store.wins(player.id, cursor, limit)
        return WonGamesPage(entries=[WonGame.model_validate(e) for e in page.entries], next_cursor=page.next_cursor)
