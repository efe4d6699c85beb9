"""A change is acknowledged only once Redis could write it to its append-only file.

Redis answers a write before it knows whether its append-only file took it: with ``appendfsync everysec`` it
writes the file just before it sends the replies of an event-loop turn, and when that write fails (a full disk)
it keeps the change in memory, retries the file once a second, and refuses every further write, and ``PING``,
with ``MISCONF`` until one succeeds. A change answered in that turn lives in memory only: killed then, Redis
loses it. So after a request that may have written answers 2xx, one ``PING`` asks Redis whether its last write
reached the file; if not, the answer becomes 503 ``storage_unconfirmed`` with ``Retry-After``: the change may not
be kept, and the client reloads before going on. The cost is one round trip per write request (see
``docs/operations.md``, "Durability"), so with ``PYRAMIDE_CONFIRM_WRITES=auto`` it is paid only while the disk runs
low (``infra/disk.py``); reads are never probed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from litestar import Request
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from redis.exceptions import RedisError

from pyramide.service.http.problems import RETRY_AFTER_S, HttpCode, problem_response
from pyramide.service.infra.metrics import STORAGE_FULL
from pyramide.service.infra.redis import RedisClient

log = logging.getLogger("pyramide.service")
READ_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})


class ConfirmWrites:
    """ASGI middleware: a 2xx answer to a request that may have written (any method but GET, HEAD and OPTIONS) is
    sent only after Redis confirms it can persist writes; otherwise 503 ``storage_unconfirmed`` replaces it. Only
    while ``must_confirm()`` says so."""

    def __init__(self, app: ASGIApp, redis: Callable[[], RedisClient], must_confirm: Callable[[], bool]) -> None:
        self.app = app
        self._redis = redis
        self._must_confirm = must_confirm

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope["method"] in READ_METHODS or not self._must_confirm():
            await self.app(scope, receive, send)
            return
        replaced = False

        async def confirming(message: Message) -> None:
            nonlocal replaced
            if replaced:
                return  # the body of the answer that was replaced
            if message["type"] == "http.response.start" and message["status"] < 300 and not await self._persisted():
                replaced = True
                await self._unconfirmed(scope, receive, send)
                return
            await send(message)

        await self.app(scope, receive, confirming)

    async def _persisted(self) -> bool:
        """Whether Redis writes its append-only file again (``PING`` is refused with ``MISCONF`` while it cannot)."""
        try:
            await self._redis().ping()
        except RedisError as error:
            log.error("a change was made but Redis cannot confirm it is on disk: %s", error)
            return False
        return True

    @staticmethod
    async def _unconfirmed(scope: Scope, receive: Receive, send: Send) -> None:
        STORAGE_FULL.inc()
        request: Request = Request(scope, receive)  # type: ignore[type-arg]
        headers = {"Retry-After": str(RETRY_AFTER_S)}
        response = problem_response(request, 503, HttpCode.STORAGE_UNCONFIRMED, headers=headers)
        await response.to_asgi_response(None, request)(scope, receive, send)
