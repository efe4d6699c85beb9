"""What every handler needs from a request: its player, its language, its body, its retry and version headers."""

from __future__ import annotations

import hashlib
import re
from typing import Any, Final, TypeVar

from litestar import Request
from pydantic import TypeAdapter, ValidationError

from pyramide.engine.messages import Locale
from pyramide.service.http.problems import ServiceError, negotiate_locale
from pyramide.service.http.schemas import CREATE_PLAYER_KEY_PATTERN, IDEMPOTENCY_KEY_PATTERN
from pyramide.service.infra.ratelimit import address_key
from pyramide.service.players.service import Player, PlayerStore

T = TypeVar("T")
AnyRequest = Request[Any, Any, Any]
_IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)
_SECRET_KEY = re.compile(CREATE_PLAYER_KEY_PATTERN)
MAX_BODY_BYTES: Final = 64 * 1024
"""Far above any body the API takes (a layout is about 1 KiB); a longer one is refused with 413 unread."""
_BODY: Final = "pyramide.body"


def header_value(request: AnyRequest, name: bytes) -> str | None:
    """The first value of the header ``name`` (lower case), read from the ASGI scope as it came: building
    Litestar's ``Headers`` for the three or four headers a move reads cost more than the rest of reading them."""
    for key, value in request.scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


async def current_player(request: AnyRequest) -> Player:
    """The player of the ``Authorization: Bearer`` token; 401 without a valid one."""
    header = header_value(request, b"authorization") or ""
    scheme, _, token = header.partition(" ")
    players: PlayerStore = request.app.state.players
    player = await players.authenticate(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
    if player is None:
        raise ServiceError(401, "unauthorized", headers={"WWW-Authenticate": 'Bearer realm="pyramide"'})
    return player


def locale_of(request: AnyRequest, player: Player | None = None) -> Locale:
    """``Accept-Language`` first, then the player's setting, then Hungarian."""
    return negotiate_locale(header_value(request, b"accept-language"), player.locale if player else "hu")


async def read_body(request: AnyRequest) -> bytes:
    """The request body, read once from the ASGI channel and kept in the scope for the next reader; 413
    ``body_too_large`` past ``MAX_BODY_BYTES``. Litestar's ``Request.body`` first builds the whole header map to
    read Content-Length: that was a third of reading a move's body."""
    scope: dict[str, Any] = request.scope  # type: ignore[assignment]
    body: bytes | None = scope.get(_BODY)
    if body is None:
        body = scope[_BODY] = await _receive_body(request)
    return body


def _too_large() -> ServiceError:
    """413 with ``Connection: close``: the server stops reading there, so the rest is never received."""
    return ServiceError(413, "body_too_large", headers={"Connection": "close"}, limit=str(MAX_BODY_BYTES))


async def _receive_body(request: AnyRequest) -> bytes:
    declared = header_value(request, b"content-length")
    if declared is not None and (not declared.isascii() or not declared.isdigit() or len(declared) > 12):
        raise ServiceError(400, "bad_request", headers={"Connection": "close"})
    if declared is not None and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await request.receive()
        if message["type"] != "http.request":
            raise ServiceError(400, "bad_request")  # the client went away mid-body
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _too_large()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def parse_body(request: AnyRequest, adapter: TypeAdapter[T]) -> T:
    """The JSON body validated strictly against its model: 400 when it is not JSON, 422 when it does not fit."""
    raw = await read_body(request)
    try:
        return adapter.validate_json(raw or b"{}", strict=True)
    except ValidationError as error:
        if any(e["type"] == "json_invalid" for e in error.errors()):
            raise ServiceError(400, "bad_request") from None
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in error.errors()[:5])
        raise ServiceError(422, "validation_failed", explanation=problems) from error


async def fingerprint(request: AnyRequest) -> str:
    """What makes two requests the same one, for Idempotency-Key: method, path and body."""
    body = await read_body(request)
    return hashlib.sha256(b"%s %s\n%s" % (request.method.encode(), request.url.path.encode(), body)).hexdigest()


def idempotency_key(request: AnyRequest) -> str | None:
    """The ``Idempotency-Key`` header; 400 ``invalid_idempotency_key`` when it is not 1-200 visible ASCII
    characters. Read here, not declared as a handler parameter: Litestar's extraction of that one optional header
    cost a few per cent of a move request. The schema documents it on every POST (see ``openapi``)."""
    key = header_value(request, b"idempotency-key")
    if key is not None and not _IDEMPOTENCY_KEY.fullmatch(key):
        raise ServiceError(400, "invalid_idempotency_key")
    return key


def secret_idempotency_key(request: AnyRequest) -> str | None:
    """The ``Idempotency-Key`` of a request whose kept response holds a secret (``createPlayer``): 400
    ``weak_idempotency_key`` when it is shorter than 32 characters."""
    key = idempotency_key(request)
    if key is not None and not _SECRET_KEY.fullmatch(key):
        raise ServiceError(400, "weak_idempotency_key")
    return key


async def check_address_limit(request: AnyRequest, name: str) -> None:
    """Count the request against the per-address limit ``name`` (``players`` or ``analyses``)."""
    settings = request.app.state.settings
    limit = settings.limits.limit(name)
    address = client_address(request, settings.trusted_proxy_header)
    await request.app.state.limiter.check(limit, address_key(limit, address))


def client_address(request: AnyRequest, trusted_header: str | None) -> str:
    """The client's address for per-address limits: the peer's, or with ``trusted_header`` configured (a proxy in
    front that writes it), the last address in that header."""
    if trusted_header is not None:
        forwarded = header_value(request, trusted_header.lower().encode("latin-1"))
        if forwarded and forwarded.strip(", "):
            return forwarded.rsplit(",", 1)[-1].strip() or "unknown"
    client = request.scope.get("client")
    return client[0] if client else "unknown"
