"""Bearer-token authentication as Litestar middleware: every route is the player's unless its handler is marked
``exclude_from_auth``; a handler reads its player as ``request.user``. The admin routes (under ``/v1/admin``) are
the operator's and the apps': there ``request.user`` is the :class:`~pyramide.service.accounts.Principal`, a player's
token is never accepted, and while no operator key is set every admin route answers 404."""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable

from litestar.middleware.authentication import AbstractAuthenticationMiddleware, AuthenticationResult
from litestar.types import ASGIApp

from pyramide.service.accounts.app_players import SESSION_PREFIX, AppPlayers, valid_external_id
from pyramide.service.accounts.apps import APP_KEY_PREFIX, App, AppStore, is_app_key
from pyramide.service.accounts.player import Player
from pyramide.service.accounts.players import PlayerStore
from pyramide.service.accounts.principal import Principal
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.headers import AnyConnection, header_value
from pyramide.service.http.limits import AddressLimits, MoveAllowance
from pyramide.service.http.problems import HttpCode, ProblemError
from pyramide.service.infra.settings import LimitName

PUBLIC_PATHS = ["^/schema(/|$)", "^/metrics$"]
"""Anchored: Litestar searches these patterns anywhere in the path, and a path naming an app's user (its external id)
may hold `/schema`. ``/metrics`` is routed only with ``PYRAMIDE_METRICS_ON_API_PORT`` and checks the operator's key
itself (``app.metrics_route``)."""
ADMIN_PATH = "/v1/admin"
APPS_PATH = "/v1/apps/"
APP_TOKENS = (APP_KEY_PREFIX, SESSION_PREFIX)
"""The bearer tokens that are not a player's own: an app's key, a session (a player's token is ``<uuid>.<secret>``,
never starting with ``p``)."""
PLAYER_HEADER = b"pyramide-player"
STORE_CHECKS_TOKEN = "store_checks_token"
"""A route's opt: its store checks the token on every access, so the player this process authenticated a moment
ago may be taken as it was (the move route's saving; see ``keyspace.auth``). Every other route reads
the player and its token from Redis on each request."""
OPEN_TO_BANNED = "open_to_banned"
"""A route's opt: a banned player may still use it (its data's export: the right of access outlasts a ban). Every
other player route answers a banned player 403 ``player_banned``."""


def bearer_token(connection: AnyConnection) -> str | None:
    """The request's ``Authorization: Bearer`` token, if it has one."""
    scheme, _, token = (header_value(connection, b"authorization") or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def bearer_player(
    connection: AnyConnection, players: PlayerStore, app_players: AppPlayers | None = None
) -> Player | None:
    """The player of the request's bearer token, or ``None`` without a valid one, for the public routes that show
    a caller more. With ``app_players``, also an app's user's player (app key and ``Pyramide-Player``; none is
    created) or a session's, and ``Pyramide-Player`` with anything but an app's key is 403
    ``player_header_not_allowed``, as on the player routes."""
    token = bearer_token(connection)
    external = header_value(connection, PLAYER_HEADER)
    if app_players is not None and external is not None and (token is None or not is_app_key(token)):
        raise DomainError(ErrorCode.PLAYER_HEADER_NOT_ALLOWED)  # only an app's key names its user
    if token is None:
        return None
    if not token.startswith(APP_TOKENS):
        return await players.authenticate(token)
    if app_players is None:
        return None
    if token.startswith(SESSION_PREFIX):
        return await app_players.session_player(token)
    return None if external is None else await app_players.bound_player(token, valid_external_id(external))


async def admin_principal(connection: AnyConnection, apps: AppStore, operator_key: str | None) -> Principal:
    """The operator or the app calling an admin route: 404 ``not_found`` while no operator key is set, 401
    ``unauthorized`` without the operator key or a valid (unrevoked) app key."""
    if operator_key is None:
        raise DomainError(ErrorCode.NOT_FOUND)
    token = bearer_token(connection)
    if token is None:
        raise DomainError(ErrorCode.UNAUTHORIZED)
    if hmac.compare_digest(token.encode(), operator_key.encode()):
        return Principal.operator()
    app = await apps.authenticate(token) if is_app_key(token) else None
    if app is None:
        raise DomainError(ErrorCode.UNAUTHORIZED)
    return Principal("app", app.id, app.name, app.scopes)


def app_client_address(connection: AnyConnection, app: App) -> None:
    """Put the address an app's request counts under in the connection's place (``scope["client"]``), where every
    per-address limit, quota and stream cap reads it: the app's bucket of the end user's address named in
    ``Pyramide-Client-IP`` (400 ``invalid_client_ip`` for one that is not an IP address), with the per-address
    limits, else the app's own bucket, with the app's own limits. An app's bucket of an address is its alone: what
    it spends there never locks out the clients that connect from that address, nor another app's users (issue
    57). Called only once the app's key is found valid: the header of anyone else is never read. The app goes in
    ``scope["auth"]``, where the limits find its own, which its requests naming an address spend too."""
    connection.scope["auth"] = app
    named = header_value(connection, b"pyramide-client-ip")
    if named is None:
        connection.scope["client"] = (app.bucket, 0)
        return
    try:
        address = ipaddress.ip_address(named.strip())
    except ValueError:
        raise ProblemError(400, HttpCode.INVALID_CLIENT_IP) from None
    connection.scope["client"] = (app.bucket_of(str(address)), 0)


async def app_of_key(connection: AnyConnection, apps: AppStore) -> App:
    """The app calling an app route (``/v1/apps/me…``): 401 ``unauthorized`` without a valid app key, 403
    ``forbidden`` for one without the ``players`` scope."""
    token = bearer_token(connection)
    app = await apps.authenticate(token) if token is not None and is_app_key(token) else None
    if app is None:
        raise DomainError(ErrorCode.UNAUTHORIZED)
    if "players" not in app.scopes:
        raise DomainError(ErrorCode.FORBIDDEN)
    app_client_address(connection, app)
    return app


def refuse_banned(player: Player, remembered: bool, handler: object) -> None:
    """403 ``player_banned`` for a banned player, but on the routes whose store checks the token itself (it refuses
    a banned player whatever this process remembers: a ban lifted in another process is not refused here from
    memory) and on those open to banned players."""
    opt = getattr(handler, "opt", None) or {}
    if player.banned and not remembered and not opt.get(OPEN_TO_BANNED):
        raise DomainError(ErrorCode.PLAYER_BANNED)


class BearerAuthentication(AbstractAuthenticationMiddleware):
    """``Authorization: Bearer <token>`` → the player (or, on an admin route, the principal); 401
    ``unauthorized`` without a valid one. Preflight ``OPTIONS`` requests pass unauthenticated, as browsers send them
    without credentials. A banned player is 403 ``player_banned`` here, except on the routes whose store checks the
    token (the store refuses it, whatever this process remembers of the player: a ban lifted in another process is
    not refused here from memory) and on those open to banned players."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        players: Callable[[], PlayerStore],
        apps: Callable[[], AppStore],
        operator_key: str | None,
        app_players: Callable[[], AppPlayers],
        allowance: Callable[[], MoveAllowance],
        limits: Callable[[], AddressLimits],
    ) -> None:
        super().__init__(app, exclude=PUBLIC_PATHS)
        self._players = players
        self._apps = apps
        self._operator_key = operator_key
        self._app_players = app_players
        self._allowance = allowance
        self._limits = limits

    async def authenticate_request(self, connection: AnyConnection) -> AuthenticationResult:
        path = connection.scope["path"]
        if path == ADMIN_PATH or path.startswith(ADMIN_PATH + "/"):
            principal = await admin_principal(connection, self._apps(), self._operator_key)
            return AuthenticationResult(user=principal, auth=None)
        if path.startswith(APPS_PATH):
            app = await app_of_key(connection, self._apps())
            return AuthenticationResult(user=app, auth=app)
        handler = connection.scope.get("route_handler")
        remembered = handler is not None and bool(handler.opt.get(STORE_CHECKS_TOKEN))
        token = bearer_token(connection)
        if token is not None and token.startswith(APP_TOKENS):
            return await self._app_request(connection, token, remembered)
        player = None if token is None else await self._players().authenticate(token, remembered=remembered)
        if player is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        if header_value(connection, PLAYER_HEADER) is not None:
            raise DomainError(ErrorCode.PLAYER_HEADER_NOT_ALLOWED)
        refuse_banned(player, remembered, handler)
        return AuthenticationResult(user=player, auth=None)

    async def _app_request(self, connection: AnyConnection, token: str, remembered: bool) -> AuthenticationResult:
        """A player route called with an app's key and ``Pyramide-Player`` (the app's user's player; the app is
        the result's ``auth``), or with a session (its player)."""
        external = header_value(connection, PLAYER_HEADER)
        if token.startswith(SESSION_PREFIX):
            player = await self._app_players().session_player(token)
            if player is None:
                raise DomainError(ErrorCode.UNAUTHORIZED)
            if external is not None:
                raise DomainError(ErrorCode.PLAYER_HEADER_NOT_ALLOWED)
            refuse_banned(player, remembered, connection.scope.get("route_handler"))
            return AuthenticationResult(user=player, auth=None)
        if external is None:  # a valid key alone was told "invalid token" and sent to createPlayer (issue 59)
            valid = is_app_key(token) and await self._apps().authenticate(token) is not None
            raise DomainError(ErrorCode.PLAYER_HEADER_REQUIRED if valid else ErrorCode.UNAUTHORIZED)
        limits = self._limits()

        async def creating(app: App) -> None:  # a new player counts against the user's address (or the app's)
            app_client_address(connection, app)
            await limits.check(connection, LimitName.PLAYERS)

        app, player = await self._app_players().act_as(
            token, valid_external_id(external), remembered=remembered, creating=creating
        )
        refuse_banned(player, remembered, connection.scope.get("route_handler"))
        app_client_address(connection, app)
        self._allowance().allow(app)
        return AuthenticationResult(user=player, auth=app)
