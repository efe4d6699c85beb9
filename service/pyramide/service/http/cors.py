"""Cross-origin access for browser front ends, with Litestar's own CORS middleware: off unless origins are
configured (``PYRAMIDE_CORS_ORIGINS``).

Litestar keeps that middleware private (``litestar.middleware._internal``) and offers no public way to keep a
response's ``Vary``: litestar is pinned in pyproject.toml; tests/unit/service/test_pinned_internals.py fails when the
middleware changes."""

from __future__ import annotations

from typing import Final

from litestar.config.cors import CORSConfig
from litestar.middleware._internal.cors import CORSMiddleware
from litestar.types import ASGIApp, Message, Send

ALLOWED_HEADERS: Final = [
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "If-Match",
    "If-None-Match",
    "Accept-Language",
    "X-Request-ID",
    "traceparent",
    "tracestate",
    "Last-Event-ID",
]
"""What a front end sends: its token, its JSON, its retry key, the version it acts on, the copy it holds, its
language, its id, the trace it is part of (W3C Trace Context), the last state a live stream it resumes had sent."""
EXPOSED_HEADERS: Final = [
    "ETag",
    "Location",
    "Retry-After",
    "Content-Language",
    "RateLimit-Policy",
    "RateLimit",
    "Idempotent-Replayed",
    "X-Request-ID",
]
"""What a front end reads beyond the safelisted headers."""
MAX_AGE_S: Final = 600


def cors_config(origins: tuple[str, ...]) -> CORSConfig | None:
    """The CORS policy for ``origins``; none (no CORS headers at all) without origins."""
    if not origins:
        return None
    return CORSConfig(
        allow_origins=list(origins),
        allow_methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
        allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS,
        allow_credentials=False,
        max_age=MAX_AGE_S,
    )


def _vary(headers: list[tuple[bytes, bytes]]) -> list[bytes]:
    return [v.strip() for n, v in headers if n.lower() == b"vary" for v in v.split(b",") if v.strip()]


class VaryKeepingCORS(CORSMiddleware):
    """Litestar's CORS middleware, except that its ``Vary: Origin`` joins the ``Vary`` a response carries
    (``Accept-Language`` on every localised answer) instead of replacing it: a shared cache must key a snapshot
    on both."""

    def send_wrapper(self, send: Send, origin: str, has_cookie: bool) -> Send:
        carried: list[bytes] = []

        async def joined(message: Message) -> None:
            if message["type"] == "http.response.start" and carried:
                headers = list(message["headers"])
                values = list(dict.fromkeys([*carried, *_vary(headers)]))
                kept = [(n, v) for n, v in headers if n.lower() != b"vary"]
                message["headers"] = [*kept, (b"vary", b", ".join(values))]
            await send(message)

        cors = super().send_wrapper(joined, origin, has_cookie)

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                carried[:] = _vary(list(message.get("headers", ())))
            await cors(message)

        return wrapped


def keep_vary(handler: ASGIApp) -> ASGIApp:
    """``handler`` (the app's ASGI handler) with Litestar's CORS middleware replaced by :class:`VaryKeepingCORS`;
    as it is without CORS."""
    if type(handler) is CORSMiddleware:
        return VaryKeepingCORS(app=handler.app, config=handler.config)
    return handler
