"""What every handler needs from a request: its player, its language, its body, its retry and version headers."""

from __future__ import annotations

import hashlib
import re
from typing import Any, TypeVar

from litestar import Request
from pydantic import TypeAdapter, ValidationError

from pyramide.engine.messages import Locale
from pyramide.service.players import Player, PlayerStore
from pyramide.service.problems import ServiceError, negotiate_locale
from pyramide.service.schemas import IDEMPOTENCY_KEY_PATTERN

T = TypeVar("T")
AnyRequest = Request[Any, Any, Any]
_IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)


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


async def parse_body(request: AnyRequest, adapter: TypeAdapter[T]) -> T:
    """The JSON body validated strictly against its model: 400 when it is not JSON, 422 when it does not fit."""
    raw = await request.body()
    try:
        return adapter.validate_json(raw or b"{}", strict=True)
    except ValidationError as error:
        if any(e["type"] == "json_invalid" for e in error.errors()):
            raise ServiceError(400, "bad_request") from None
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in error.errors()[:5])
        raise ServiceError(422, "validation_failed", explanation=problems) from error


async def fingerprint(request: AnyRequest) -> str:
    """What makes two requests the same one, for Idempotency-Key: method, path and body."""
    body = await request.body()
    return hashlib.sha256(b"%s %s\n%s" % (request.method.encode(), request.url.path.encode(), body)).hexdigest()


def idempotency_key(request: AnyRequest) -> str | None:
    """The ``Idempotency-Key`` header; 400 ``invalid_idempotency_key`` when it is not 1-200 visible ASCII
    characters. Read here, not declared as a handler parameter: Litestar's extraction of that one optional header
    cost a few per cent of a move request. The schema documents it on every POST (see ``openapi``)."""
    key = header_value(request, b"idempotency-key")
    if key is not None and not _IDEMPOTENCY_KEY.fullmatch(key):
        raise ServiceError(400, "invalid_idempotency_key")
    return key
