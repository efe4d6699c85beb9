"""What one send wrapper sees of a response, for every layer that needs it: its status and when its body went out.

A request used to pass each ASGI message through three wrappers of ``send`` (Litestar's exception middleware, the
metrics' and the request log's), 12.7 % of a move's time in py-spy's samples (issue 58). The request log's wrapper
(:class:`~pyramide.service.infra.logs.RequestLog`, the outermost layer) is now the service's only one: it keeps the
status and the body's time in a :class:`ResponseSpan` under :data:`SPAN` in the request's scope, and the metrics
middleware reads them there once the route has answered."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from litestar.types import Message, Scope

SPAN: Final = "pyramide.response"
"""The scope key of the request's :class:`ResponseSpan` (an ASGI extension key: servers and Litestar ignore it)."""


class ResponseSpan:
    """The response's status (500 until a start message is sent: an exception that escapes is a 500) and the
    ``time.perf_counter()`` of its last body message (``None`` before one is sent); ``finishers`` run once the request
    log's wrapper has seen the whole answer: an error raised in a middleware is answered by Litestar's exception
    handler only after the layers inside it have returned, so a layer that records the status waits for them."""

    __slots__ = ("body_at", "finishers", "status")

    def __init__(self) -> None:
        self.status = 500
        self.body_at: float | None = None
        self.finishers: list[Callable[[], None]] = []

    def finish(self) -> None:
        """Run the finishers (the request log's wrapper calls this when the answer is complete)."""
        for finisher in self.finishers:
            finisher()

    def see(self, message: Message) -> None:
        """Note ``message`` as it is sent."""
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body":
            self.body_at = time.perf_counter()


def span_of(scope: Scope) -> ResponseSpan | None:
    """The request's span, when the request log's wrapper runs outside the caller."""
    return scope.get(SPAN)  # type: ignore[return-value]
