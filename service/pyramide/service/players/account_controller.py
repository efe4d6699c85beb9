"""The caller's player (``/v1/players``, ``/me``, ``/me/token``): create one anonymously, read and change its
settings, replace its token, erase it and everything kept about it."""

from __future__ import annotations

from litestar import Controller, Request, Response, delete, get, patch, post
from litestar.datastructures import State
from pydantic import TypeAdapter

from pyramide.service.accounts import (
    APP_TOKENS,
    SESSION_PREFIX,
    AppPlayers,
    Player,
    PlayerData,
    PlayerStore,
    bearer_token,
    valid_external_id,
)
from pyramide.service.accounts.schemas import CreatedPlayer, CreatePlayerBody, IssuedToken, PlayerSettingsBody
from pyramide.service.accounts.schemas import Player as PlayerView
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.body import AnyRequest, fingerprint, parse_body
from pyramide.service.http.full import ANYONE, WHILE_FULL
from pyramide.service.http.headers import header_value, replay_header, secret_idempotency_key
from pyramide.service.http.injection import Injected
from pyramide.service.http.limits import AddressLimits, rate_limit_headers
from pyramide.service.http.responses import problems
from pyramide.service.infra.settings import LimitName

_CREATE = TypeAdapter(CreatePlayerBody)
_SETTINGS = TypeAdapter(PlayerSettingsBody)
PlayerRequest = Request[Player, str, State]


def _view(player: Player) -> PlayerView:
    return PlayerView.model_validate(player, from_attributes=True)


class PlayerController(Controller):
    path = "/v1/players"
    tags = ["players"]

    @post(
        "/",
        operation_id="createPlayer",
        secret_idempotency_key=True,
        location=True,
        request_body=CreatePlayerBody,
        summary="Create an anonymous player",
        description="Returns the player's bearer token once; the service keeps only its hash. 429 `rate_limited`"
        " past `PYRAMIDE_LIMIT_PLAYERS` a minute, 429 `quota_exceeded` past `PYRAMIDE_QUOTA_PLAYERS` a day, per"
        " client address.",
        responses=problems(400, 409, 413, 422, 429),
        exclude_from_auth=True,
        rate_limited=True,
        after_request=rate_limit_headers,
    )
    async def create(
        self, request: AnyRequest, players: Injected[PlayerStore], address_limits: Injected[AddressLimits]
    ) -> Response[CreatedPlayer]:
        key = secret_idempotency_key(request)
        body = await parse_body(request, _CREATE)
        await address_limits.check(request, LimitName.PLAYERS)
        player, token, replayed = await players.create(
            body.locale, body.explain_errors, key, await fingerprint(request), body.name
        )
        created = CreatedPlayer(**_view(player).model_dump(), token=token)
        return Response(created, status_code=201, headers={"Location": "/v1/players/me", **replay_header(replayed)})

    @post(
        "/me/token",
        operation_id="rotatePlayerToken",
        secret_idempotency_key=True,
        app_player=False,
        security=[{"bearerAuth": []}],
        summary="Replace the caller's token (when it leaked)",
        description="The bearer token sent stops working at once, in every process; the answer holds the new one."
        " A retry after a lost answer, with the same (old) token and the same Idempotency-Key of at least 32"
        " characters, gets the same new token. 403 `forbidden` for an app's key or a session: an app's player has no"
        " token of its own.",
        responses=problems(400, 401, 403, 409, 413),
        exclude_from_auth=True,
    )
    async def rotate(self, request: AnyRequest, players: Injected[PlayerStore]) -> Response[IssuedToken]:
        key = secret_idempotency_key(request)
        token = bearer_token(request)
        if token is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        if token.startswith(APP_TOKENS):
            raise DomainError(ErrorCode.FORBIDDEN)  # an app's players have no token of their own to replace
        fresh, replayed = await players.rotate(token, key, await fingerprint(request) if key else "")
        return Response(IssuedToken(token=fresh), status_code=201, headers=replay_header(replayed))

    @get(
        "/me",
        operation_id="getCurrentPlayer",
        summary="The caller's player",
        description="Its id, language, whether new games explain refused taps, its leaderboard name and when it was"
        " created.",
        responses=problems(400, 401, 403),
    )
    async def me(self, request: PlayerRequest) -> PlayerView:
        return _view(request.user)

    @patch(
        "/me",
        operation_id="updateCurrentPlayer",
        request_body=PlayerSettingsBody,
        summary="Change the caller's settings",
        description="The language, whether new games explain refused taps, and the name shown on leaderboards;"
        " answers the player as it now is.",
        responses=problems(400, 401, 403, 413, 422),
    )
    async def update(self, request: PlayerRequest, players: Injected[PlayerStore]) -> PlayerView:
        body = await parse_body(request, _SETTINGS)
        return _view(await players.update(request.user, body.locale, body.explain_errors, body.name))

    @delete(
        "/me",
        operation_id="erasePlayer",
        opt={WHILE_FULL: ANYONE},
        security=[{"bearerAuth": []}],
        summary="Erase the caller and everything kept about them",
        description="Settings, token, games, records, results, statistics, kept responses and leaderboard entries"
        " (the boards re-rank). The token stops working; a retry with it answers 204 again. An app erases its"
        " user's player with its key and `Pyramide-Player` (204 also when the user has none), or with a session;"
        " the user's external id then gets a fresh player, unless the player was banned: then the (app, external id)"
        " stays 403 `player_banned` until `unbanPlayer` of the erased player's id.",
        responses=problems(400, 401, 403),
        exclude_from_auth=True,
        status_code=204,
    )
    async def erase(
        self,
        request: AnyRequest,
        privacy: Injected[PlayerData],
        players: Injected[PlayerStore],
        app_players: Injected[AppPlayers],
    ) -> Response[None]:
        token = bearer_token(request)
        if token is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        if token.startswith(APP_TOKENS):
            return await _erase_app_player(request, token, privacy, app_players)
        if header_value(request, b"pyramide-player") is not None:
            raise DomainError(ErrorCode.PLAYER_HEADER_NOT_ALLOWED)  # as on every other player route
        player = await players.authenticate(token)
        if player is None:
            if await privacy.was_erased(token):
                return Response(None, status_code=204)  # a retry of an erasure that was done
            raise DomainError(ErrorCode.UNAUTHORIZED)
        await privacy.erase(player, token)
        return Response(None, status_code=204)


async def _erase_app_player(
    request: AnyRequest, token: str, privacy: PlayerData, app_players: AppPlayers
) -> Response[None]:
    """Erase an app's player, with the app's key and ``Pyramide-Player`` (204 too when the user has no player: none
    is created to be erased) or with a session; its binding goes too, so its external id gets a fresh player (a
    banned player's binding keeps the ban instead: see ``accounts.app_players``)."""
    external = header_value(request, b"pyramide-player")
    if token.startswith(SESSION_PREFIX):
        player = await app_players.session_player(token)
        if player is None:
            if await privacy.was_erased(token):
                return Response(None, status_code=204)
            raise DomainError(ErrorCode.UNAUTHORIZED)
    elif external is None:
        raise DomainError(ErrorCode.UNAUTHORIZED)
    else:
        player = await app_players.bound_player(token, valid_external_id(external))
        if player is None:
            return Response(None, status_code=204)
    await privacy.erase(player, token)
    await app_players.unbind(player)
    return Response(None, status_code=204)
