"""Bearer-token authentication as Litestar middleware: every route is the player's unless its handler is marked
``exclude_from_auth``; a handler reads its player as ``request.user``. The admin routes (under ``/v1/admin``) are
the operator's and the apps': there ``request.user`` is the :class:`~pyramide.service.apps.Principal`, a player's
token is never accepted, and while no operator key is set every admin route answers 404."""

from __future__ import annotations

import hmac
from collections.abc import Callable

from litestar.middleware.authentication import AbstractAuthenticationMiddleware, AuthenticationResult
from litestar.types import ASGIApp

from pyramide.service.apps import AppStore, Principal, is_app_key
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.headers import AnyConnection, header_value
from pyramide.service.players import Player, PlayerStore

PUBLIC_PATHS = ["/schema", "/metrics"]
ADMIN_PATH = "/v1/admin"
STORE_CHECKS_TOKEN = "store_checks_token"
"""A route's opt: its store checks the token on every access, so the player this process authenticated a moment
ago may be taken as it was (the move route's saving; see ``players.service.auth_key``). Every other route reads
the player and its token from Redis on each request."""


def bearer_token(connection: AnyConnection) -> str | None:
    """The request's ``Authorization: Bearer`` token, if it has one."""
    scheme, _, token = (header_value(connection, b"authorization") or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def bearer_player(connection: AnyConnection, players: PlayerStore, *, remembered: bool = False) -> Player | None:
    """The player of the request's bearer token, or ``None`` without a valid one (an app key is not a player's)."""
    token = bearer_token(connection)
    if token is None or is_app_key(token):
        return None
    return await players.authenticate(token, remembered=remembered)


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


class BearerAuthentication(AbstractAuthenticationMiddleware):
    """``Authorization: Bearer <token>`` → the player (or, on an admin route, the principal); 401
    ``unauthorized`` without a valid one. Preflight ``OPTIONS`` requests pass unauthenticated, as browsers send them
    without credentials."""

    def __init__(
        self,
        app: ASGIApp,
        players: Callable[[], PlayerStore],
        apps: Callable[[], AppStore],
        operator_key: str | None,
    ) -> None:
        super().__init__(app, exclude=PUBLIC_PATHS)
        self._players = players
        self._apps = apps
        self._operator_key = operator_key

    async def authenticate_request(self, connection: AnyConnection) -> AuthenticationResult:
        path = connection.scope["path"]
        if path == ADMIN_PATH or path.startswith(ADMIN_PATH + "/"):
            principal = await admin_principal(connection, self._apps(), self._operator_key)
            return AuthenticationResult(user=principal, auth=None)
        handler = connection.scope.get("route_handler")
        remembered = handler is not None and bool(handler.opt.get(STORE_CHECKS_TOKEN))
        player = await bearer_player(connection, self._players(), remembered=remembered)
        if player is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        return AuthenticationResult(user=player, auth=None)
