"""Bearer-token authentication as Litestar middleware: every route is the player's unless its handler is marked
``exclude_from_auth``; a handler reads its player as ``request.user``."""

from __future__ import annotations

from collections.abc import Callable

from litestar.middleware.authentication import AbstractAuthenticationMiddleware, AuthenticationResult
from litestar.types import ASGIApp

from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.headers import AnyConnection, header_value
from pyramide.service.players import Player, PlayerStore

PUBLIC_PATHS = ["/schema", "/metrics"]
STORE_CHECKS_TOKEN = "store_checks_token"
"""A route's opt: its store checks the token on every access, so the player this process authenticated a moment
ago may be taken as it was (the move route's saving; see ``players.service.auth_key``). Every other route reads
the player and its token from Redis on each request."""


def bearer_token(connection: AnyConnection) -> str | None:
    """The request's ``Authorization: Bearer`` token, if it has one."""
    scheme, _, token = (header_value(connection, b"authorization") or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def bearer_player(connection: AnyConnection, players: PlayerStore, *, remembered: bool = False) -> Player | None:
    """The player of the request's bearer token, or ``None`` without a valid one."""
    token = bearer_token(connection)
    return None if token is None else await players.authenticate(token, remembered=remembered)


class BearerAuthentication(AbstractAuthenticationMiddleware):
    """``Authorization: Bearer <token>`` → the player; 401 ``unauthorized`` without a valid one. Preflight
    ``OPTIONS`` requests pass unauthenticated, as browsers send them without credentials."""

    def __init__(self, app: ASGIApp, players: Callable[[], PlayerStore]) -> None:
        super().__init__(app, exclude=PUBLIC_PATHS)
        self._players = players

    async def authenticate_request(self, connection: AnyConnection) -> AuthenticationResult:
        handler = connection.scope.get("route_handler")
        remembered = handler is not None and bool(handler.opt.get(STORE_CHECKS_TOKEN))
        player = await bearer_player(connection, self._players(), remembered=remembered)
        if player is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        return AuthenticationResult(user=player, auth=None)
