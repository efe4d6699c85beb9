"""What every operation may answer besides its success, for the OpenAPI schema; and the move routes' response."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from litestar import Response
from litestar.openapi.datastructures import ResponseSpec
from litestar.serialization import encode_json, get_serializer
from litestar.types import ASGIApp, Receive, Scope, Send

from pyramide.service.http.body import MAX_BODY_BYTES, AnyRequest
from pyramide.service.http.headers import if_none_match, none_match
from pyramide.service.http.problems import PROBLEM_JSON
from pyramide.service.http.schemas import Problem

PRECONDITION_FAILED: Final = "If-Match names a version the game has moved on from"
"""The 412's description, which the schema adds to every operation that takes If-Match (``openapi``)."""
_DESCRIPTIONS = {
    400: "Malformed request (not JSON, or a bad header)",
    401: "No valid bearer token (on /v1/admin: no operator key or valid app key)",
    403: "The key may not do this (`forbidden`), or the player is banned (`player_banned`)",
    404: "No such game (or not yours), or no such resource",
    409: "The move is not allowed now (the engine's code), a lost race, an Idempotency-Key reused, a code past the"
    " last deal (52!) or a layout that repeats a card, or no deal proven winnable in time for winnable_only",
    412: PRECONDITION_FAILED,
    413: f"The body is longer than the service reads ({MAX_BODY_BYTES} bytes)",
    422: "The body does not fit the schema, or names no possible deal, layout or rules",
    429: "Over a rate limit (see Retry-After, RateLimit-Policy and RateLimit), or this player's solver search is"
    " still running",
    503: "Redis is unreachable, or every solver worker and its queue are taken, or (storage_unconfirmed) a change"
    " was made but Redis could not write it to disk; retry after Retry-After seconds",
    507: "Redis's memory or disk is full: the change is refused, nothing was written (an operator must free room)",
}


def problems(*statuses: int, redis: bool = True) -> dict[int, ResponseSpec]:
    """Problem+json responses for ``statuses``, and 503 and 507 for operations that need Redis."""
    return {
        status: ResponseSpec(
            data_container=Problem, description=_DESCRIPTIONS[status], media_type=PROBLEM_JSON, generate_examples=False
        )
        for status in sorted({*statuses, *((503, 507) if redis else ())})
    }


def not_modified(etag: str, headers: Mapping[str, str] | None = None) -> Response[Any]:
    """304 for a GET whose ``If-None-Match`` names the current ``etag``: the ETag and the other headers the 200
    would carry for a cache (``headers``), no body and no Content-Length (RFC 9110 15.4.5)."""
    return Response(b"", status_code=304, headers={"ETag": etag, **(headers or {})})


def revalidated(request: AnyRequest, content: Any, headers: Mapping[str, str] | None = None) -> Response[Any]:
    """``content`` as the route's 200, encoded as Litestar would, with a strong ETag that is a hash of those bytes
    (so that any change of the body, and only that, changes it); 304 when ``If-None-Match`` names that ETag. For
    the GET routes whose resource has no version of its own (a record, a board, a deal)."""
    tags = if_none_match(request)
    body = encode_json(content, get_serializer(request.route_handler.resolve_type_encoders()))
    etag = f'"{hashlib.blake2b(body, digest_size=16).hexdigest()}"'
    if not none_match(tags, etag):
        return not_modified(etag, headers)
    return Response(body, media_type="application/json", headers={"ETag": etag, **(headers or {})})


class EncodedJson(Response[Any]):
    """A JSON body already encoded (a game's snapshot), sent as two ASGI messages with its own headers.

    The move routes' response: Litestar's ``Response.to_asgi_response`` builds an ``ASGIResponse`` that merges
    header maps, looks up a serializer and checks cookies and the method on every request; none of that applies to
    a body that is bytes already, with no cookies, no background task and no route-level headers. When the route
    adds any of those (or the request is a HEAD), Litestar's own path is taken. The headers sent are the same:
    ``content-type``, ``content-length`` and the response's own."""

    def to_asgi_response(  # type: ignore[override]
        self,
        app: Any,
        request: Any,
        *,
        background: Any = None,
        cookies: Any = None,
        encoded_headers: Any = None,
        headers: dict[str, str] | None = None,
        is_head_response: bool = False,
        media_type: Any = None,
        status_code: int | None = None,
        type_encoders: Any = None,
    ) -> ASGIApp:
        if background or cookies or encoded_headers or headers or is_head_response or self.cookies:
            return super().to_asgi_response(
                app,
                request,
                background=background,
                cookies=cookies,
                encoded_headers=encoded_headers,
                headers=headers,
                is_head_response=is_head_response,
                media_type=media_type,
                status_code=status_code,
                type_encoders=type_encoders,
            )
        body: bytes = self.content
        encoded = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            *((name.lower().encode(), value.encode()) for name, value in self.headers.items()),
        ]
        return _Sent(self.status_code or 200, encoded, body)


class _Sent:
    """The two messages of a response, sent as they are."""

    __slots__ = ("_body", "_start")

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        self._start = {"type": "http.response.start", "status": status, "headers": headers}
        self._body = {"type": "http.response.body", "body": body, "more_body": False}

    async def __call__(self, _scope: Scope, _receive: Receive, send: Send) -> None:
        await send(self._start)  # type: ignore[arg-type]
        await send(self._body)  # type: ignore[arg-type]
