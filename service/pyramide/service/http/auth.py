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


async def bearer_player(connection: AnyConnection, players: PlayerStore) -> Player | None:
    """The player of the request's ``Authorization: Bearer`` token, or ``None`` without a valid one."""
    header = header_value(connection, b"authorization") or ""
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return await players.authenticate(token) if scheme.lower() == "bearer" and token else None


class BearerAuthentication(AbstractAuthenticationMiddleware):
    """``Authorization: Bearer <token>`` → the player; 401 ``unauthorized`` without a valid one. Preflight
    ``OPTIONS`` requests pass unauthenticated, as browsers send them without credentials."""

    def __init__(self, app: ASGIApp, players: Callable[[], PlayerStore]) -> None:
        super().__init__(app, exclude=PUBLIC_PATHS)
        self._players = players

    async def authenticate_request(self, connection: AnyConnection) -> AuthenticationResult:
        player = await bearer_player(connection, self._players())
        if player is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        return AuthenticationResult(user=player, auth=None)
