"""What works while storage is full: the operator's moderation and erasure, the routes marked :data:`WHILE_FULL`.

Their writes may spend Redis's memory reserve (``infra/reserve.py``), so that an app's key that filled Redis can
still be revoked, its players banned and erased, and the audit log written. While the embedded Redis's disk is
short (``infra/disk.py``, ``PYRAMIDE_DISK_RESERVE_MB``), every other request that may write (any method but GET,
HEAD and OPTIONS) is refused here, 507 ``storage_full`` before it reaches Redis: the room left on disk is theirs.
Moderation by an app (``moderation`` scope) is an ordinary write: a leaked key must not spend the operator's room.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol

from litestar import Request
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from pyramide.service.http.durability import READ_METHODS
from pyramide.service.http.problems import HttpCode, problem_response
from pyramide.service.infra.metrics import STORAGE_FULL
from pyramide.service.infra.reserve import MemoryReserve

WHILE_FULL: Final = "while_full"
"""A route's opt: whose requests work on it while storage is full, :data:`OPERATOR` (moderation) or :data:`ANYONE`
(erasure): their writes may spend the memory reserve, and they are not refused while the disk is short."""
OPERATOR: Final = "operator"
"""The operator's requests only, not an app's."""
ANYONE: Final = "anyone"


class Caller(Protocol):
    """Who calls an admin route (``accounts.Principal``, the authentication's ``scope["user"]``)."""

    @property
    def is_operator(self) -> bool: ...


class WhileFull:
    """ASGI middleware: a request that works while storage is full (:data:`WHILE_FULL`) runs within the memory
    reserve's :meth:`~MemoryReserve.spending`; any other write is 507 ``storage_full`` while ``disk_short()``."""

    def __init__(
        self, app: ASGIApp, reserve: Callable[[], MemoryReserve | None], disk_short: Callable[[], bool]
    ) -> None:
        self.app = app
        self._reserve = reserve
        self._disk_short = disk_short

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope["method"] in READ_METHODS:
            await self.app(scope, receive, send)
            return
        if not _while_full(scope):
            if self._disk_short():
                await _refused(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        reserve = self._reserve()
        if reserve is None:
            await self.app(scope, receive, send)
            return
        async with reserve.spending():
            await self.app(scope, receive, send)


def _while_full(scope: Scope) -> bool:
    """Whether the request works while storage is full: its route is marked, for anyone or for the operator and
    the caller is the operator."""
    handler = scope.get("route_handler")
    marked = None if handler is None else handler.opt.get(WHILE_FULL)
    if marked == OPERATOR:
        caller: Caller | None = scope.get("user")
        return caller is not None and caller.is_operator is True
    return marked == ANYONE


async def _refused(scope: Scope, receive: Receive, send: Send) -> None:
    STORAGE_FULL.inc()
    request: Request = Request(scope, receive)  # type: ignore[type-arg]
    response = problem_response(request, 507, HttpCode.STORAGE_FULL)
    await response.to_asgi_response(None, request)(scope, receive, send)
