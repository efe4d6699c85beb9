"""The caller's games (``/v1/players/me/games``), to resume one on another device or after a reinstall."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, get
from litestar.datastructures import State
from litestar.params import QueryParameter

from pyramide.service.accounts import Player
from pyramide.service.games import GameReading
from pyramide.service.games.schemas import GamesPage, GameSummary
from pyramide.service.http.injection import Injected
from pyramide.service.http.paging import DEFAULT_LIMIT, GamesCursor, Limit, check_paging_query
from pyramide.service.http.responses import problems
from pyramide.service.status import ListFilter

PlayerRequest = Request[Player, str, State]


class MyGamesController(Controller):
    """The caller's games, to resume one on another device or after a reinstall."""

    path = "/v1/players/me"
    tags = ["games"]

    @get(
        "/games",
        operation_id="listPlayerGames",
        summary="The caller's games, the latest changed first",
        description="Served from lists kept in the same writes that change a game; expired games drop out.",
        responses=problems(400, 401, 403),
    )
    async def games(
        self,
        request: PlayerRequest,
        games: Injected[GameReading],
        status: Annotated[ListFilter, QueryParameter(description="Which games; default: all.")] = "all",
        limit: Limit = DEFAULT_LIMIT,
        cursor: GamesCursor = None,
    ) -> GamesPage:
        check_paging_query(request, "status")
        changed, _, game = (cursor or "").partition(":")
        after = None if cursor is None else (int(changed), game)
        entries, following = await games.list_games(request.user, status, after, limit)
        next_cursor = None if following is None else f"{following[0]}:{following[1]}"
        return GamesPage(entries=[GameSummary.model_validate(e) for e in entries], next_cursor=next_cursor)
