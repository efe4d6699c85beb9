"""The served schema (``/schema/openapi.json``, ``.yaml``) with an ETag and, where the client takes it, gzip.

The document is over a megabyte and changes only with a new release; it was sent whole and uncompressed on every
request, with no validator, so a client that polls it (an SDK generator's CI, a docs site) fetched it all each time
(issue 59). This middleware of the docs router keeps, per document body, its strong ETag (a hash of the body) and
its gzip: a GET whose ``If-None-Match`` names the ETag is 304, and one that accepts gzip gets the compressed body
(``Content-Encoding: gzip``, ``Vary: Accept-Encoding``). Everything else the router serves passes through."""

from __future__ import annotations

import gzip
import hashlib
from typing import Any, Final

from litestar import Request
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from pyramide.service.http.headers import header_value, if_none_match, none_match

DOCUMENTS: Final = ("/schema/openapi.json", "/schema/openapi.yaml")
_LEVEL: Final = 6


class _Encoded:
    """One body's ETag and gzip, worked out once."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.etag = f'"{hashlib.blake2b(body, digest_size=16).hexdigest()}"'.encode()
        self.gzipped = gzip.compress(body, compresslevel=_LEVEL, mtime=0)


class SchemaDelivery:
    """ASGI middleware for the docs router (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._encoded: dict[str, _Encoded] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP or scope["method"] not in ("GET", "HEAD") or scope["path"] not in DOCUMENTS:
            await self.app(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def held(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, held)
        if start.get("status") != 200:
            await _send(send, start, b"".join(chunks))
            return
        encoded = self._of(scope["path"], b"".join(chunks))
        request: Request[Any, Any, Any] = Request(scope, receive)
        headers = [(k, v) for k, v in start.get("headers", ()) if k.lower() not in (b"content-length", b"etag")]
        headers += [(b"etag", encoded.etag), (b"vary", b"Accept-Encoding"), (b"cache-control", b"no-cache")]
        if not none_match(if_none_match(request), encoded.etag.decode()):
            await _send(send, {**start, "status": 304, "headers": _without_body(headers)}, b"")
            return
        accepts = "gzip" in (header_value(request, b"accept-encoding") or "").lower()
        body = encoded.gzipped if accepts else encoded.body
        if accepts:
            headers.append((b"content-encoding", b"gzip"))
        headers.append((b"content-length", str(len(body)).encode()))
        await _send(send, {**start, "headers": headers}, b"" if scope["method"] == "HEAD" else body)

    def _of(self, path: str, body: bytes) -> _Encoded:
        kept = self._encoded.get(path)
        if kept is None or kept.body != body:
            kept = self._encoded[path] = _Encoded(body)
        return kept


def _without_body(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    return [(k, v) for k, v in headers if k.lower() not in (b"content-type", b"content-length")]


async def _send(send: Send, start: dict[str, Any], body: bytes) -> None:
    await send({"type": "http.response.start", "status": start.get("status", 500), "headers": start.get("headers", [])})
    await send({"type": "http.response.body", "body": body, "more_body": False})
