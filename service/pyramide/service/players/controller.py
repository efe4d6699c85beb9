"""Players: create one anonymously, read and change its settings."""

from __future__ import annotations

from litestar import Controller, Response, get, patch, post
from pydantic import TypeAdapter

from pyramide.service.http.requests import (
    AnyRequest,
    check_address_limit,
    current_player,
    fingerprint,
    parse_body,
    secret_idempotency_key,
)
from pyramide.service.http.responses import problems
from pyramide.service.http.schemas import CreatedPlayer, CreatePlayerBody, Player, PlayerSettingsBody
from pyramide.service.players.service import PlayerStore

_CREATE = TypeAdapter(CreatePlayerBody)
_SETTINGS = TypeAdapter(PlayerSettingsBody)


def _view(player: object) -> Player:
    return Player.model_validate(player, from_attributes=True)


class PlayerController(Controller):
    path = "/v1/players"
    tags = ["players"]

    @post(
        "/",
        operation_id="createPlayer",
        summary="Create an anonymous player",
        description="Returns the player's bearer token once; the service keeps only its hash.",
        responses=problems(400, 409, 413, 422, 429),
    )
    async def create(self, request: AnyRequest) -> Response[CreatedPlayer]:
        key = secret_idempotency_key(request)
        body = await parse_body(request, _CREATE)
        await check_address_limit(request, "players")
        players: PlayerStore = request.app.state.players
        player, token = await players.create(
            body.locale, body.explain_errors, key, await fingerprint(request), body.name
        )
        created = CreatedPlayer(**_view(player).model_dump(), token=token)
        return Response(created, status_code=201, headers={"Location": "/v1/players/me"})

    @get("/me", operation_id="getCurrentPlayer", summary="The caller's player", responses=problems(401))
    async def me(self, request: AnyRequest) -> Player:
        return _view(await current_player(request))

    @patch(
        "/me",
        operation_id="updateCurrentPlayer",
        summary="Change the caller's settings",
        responses=problems(400, 401, 413, 422),
    )
    async def update(self, request: AnyRequest) -> Player:
        player = await current_player(request)
        body = await parse_body(request, _SETTINGS)
        players: PlayerStore = request.app.state.players
        return _view(await players.update(player, body.locale, body.explain_errors, body.name))
