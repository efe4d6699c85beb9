"""The HTTP server: uvicorn with its httptools protocol, plus a deadline for request headers.

uvicorn closes idle keep-alive connections but sets no limit on how long a client may take to send a request's
headers, so a client trickling them a byte at a time holds a connection for ever (slowloris). Here a connection
whose request headers are not complete ``header_timeout_s`` after they began (or after the connection opened) is
answered 408 (problem+json ``request_timeout``) and closed. The body is limited elsewhere (``requests.read_body``:
413 and the connection closed).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from pyramide.engine.messages import DEFAULT_LOCALE
from pyramide.service.http.problems import PROBLEM_JSON, localised


def _timeout_response() -> bytes:
    """408 as problem+json, in Hungarian (the request's Accept-Language never arrived)."""
    body = json.dumps(
        {
            "type": "urn:pyramide:problem:request_timeout",
            "title": localised("request_timeout", DEFAULT_LOCALE, {}),
            "status": 408,
            "detail": localised("request_timeout", DEFAULT_LOCALE, {}),
            "code": "request_timeout",
        },
        ensure_ascii=False,
    ).encode()
    head = (
        f"HTTP/1.1 408 Request Timeout\r\ncontent-type: {PROBLEM_JSON}\r\ncontent-language: {DEFAULT_LOCALE}\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


_TIMEOUT_RESPONSE = _timeout_response()


class HeaderDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, closing connections whose request headers come too slowly."""

    header_timeout_s: float = float(os.environ.get("PYRAMIDE_HEADER_TIMEOUT_S", "10"))
    """From the environment for the workers of ``pyramide serve --workers`` (uvicorn builds the class by name);
    :func:`protocol` makes one with a deadline of its own."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._header_timer is None:
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        if self.cycle is None or self.cycle.response_complete:  # never in the middle of another response
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def protocol(header_timeout_s: float) -> type[HeaderDeadlineProtocol]:
    """The protocol class with its deadline (uvicorn takes a class, and builds one per connection)."""
    return type("HeaderDeadline", (HeaderDeadlineProtocol,), {"header_timeout_s": header_timeout_s})


def server_config(app: Any, host: str, port: int, header_timeout_s: float, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration for the service: the guarded protocol, no access log of its own, and no reading of
    ``X-Forwarded-For`` by uvicorn (by default it believes it from 127.0.0.1: any local client could name itself
    any address); the service reads it only as configured (``headers.client_address``)."""
    options["proxy_headers"] = False
    options.setdefault("log_config", None)
    options.setdefault("access_log", False)
    return uvicorn.Config(app, host=host, port=port, http=protocol(header_timeout_s), **options)
