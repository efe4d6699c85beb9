"""The request body: read once within a size limit, validated strictly against its model, fingerprinted for
Idempotency-Key."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from typing import Any, Final, TypeVar

from litestar import Request
from pydantic import TypeAdapter, ValidationError

from pyramide.engine.codes import Code
from pyramide.service.errors import ErrorCode
from pyramide.service.http.headers import header_value
from pyramide.service.http.problems import Entries, HttpCode, ProblemError
from pyramide.service.http.validation import body_errors

T = TypeVar("T")
AnyRequest = Request[Any, Any, Any]
MAX_BODY_BYTES: Final = 64 * 1024
"""Far above any body the API takes (a layout is about 1 KiB); a longer one is refused with 413 unread."""
_BODY: Final = "pyramide.body"


async def read_body(request: AnyRequest) -> bytes:
    """The request body, read once from the ASGI channel and kept in the scope for the next reader; 413
    ``body_too_large`` past ``MAX_BODY_BYTES``. Litestar's ``Request.body`` first builds the whole header map to
    read Content-Length, which costs more than the rest of reading a move's body."""
    scope: dict[str, Any] = request.scope  # type: ignore[assignment]
    body: bytes | None = scope.get(_BODY)
    if body is None:
        body = scope[_BODY] = await _receive_body(request)
    return body


def _too_large() -> ProblemError:
    """413 with ``Connection: close``: the server stops reading there, so the rest is never received."""
    return ProblemError(413, HttpCode.BODY_TOO_LARGE, headers={"Connection": "close"}, limit=str(MAX_BODY_BYTES))


async def _receive_body(request: AnyRequest) -> bytes:
    declared = header_value(request, b"content-length")
    if declared is not None and (not declared.isascii() or not declared.isdigit() or len(declared) > 12):
        raise ProblemError(400, HttpCode.BAD_REQUEST, headers={"Connection": "close"})
    if declared is not None and int(declared) > MAX_BODY_BYTES:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await request.receive()
        if message["type"] != "http.request":
            raise ProblemError(400, HttpCode.BAD_REQUEST)  # the client went away mid-body
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
        return adapter.validator.validate_json(raw or b"{}", strict=True)  # type: ignore[no-any-return]
    except ValidationError as error:
        if any(e["type"] == "json_invalid" for e in error.errors()):
            if not _is_json(header_value(request, b"content-type")):
                raise ProblemError(415, HttpCode.UNSUPPORTED_MEDIA_TYPE) from None
            raise ProblemError(400, HttpCode.BAD_REQUEST) from None
        if any(e["type"] == "int_type" and isinstance(e.get("input"), float) for e in error.errors()):
            with contextlib.suppress(ValidationError):  # 455.0 is an integer to JSON Schema: read it as one
                return adapter.validator.validate_python(json.loads(raw, parse_float=_number), strict=True)  # type: ignore[no-any-return]
        entries: Entries = functools.partial(body_errors, error, raw)
        raise ProblemError(422, _code_of(entries("hu")), errors=entries) from None


def _is_json(content_type: str | None) -> bool:
    """Whether a body of ``content_type`` is declared JSON (``application/json``, a ``+json`` type, or no type). A
    body that is not JSON is 400 ``bad_request`` when it says it is, 415 when it is of another type (a form, as
    ``curl -d`` sends by default, was 400, which said nothing of why). A JSON body sent under another type is still
    read as JSON, as it always was: clients that send ``curl -d '{...}'`` keep working."""
    if content_type is None:
        return True
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _number(text: str) -> int | float:
    """A JSON number with a fraction or an exponent: an ``int`` when its value is whole (``455.0``, ``1e3``), as JSON
    Schema's ``integer`` counts it, so that a strict ``int`` field takes it; a ``float`` else."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2**63 else value


def _code_of(entries: list[dict[str, str]]) -> ErrorCode | Code:
    """``invalid_deal_code`` when a malformed deal code is all that is wrong (as for a code in a path), else
    ``validation_failed``."""
    codes = all(e["code"] == "invalid_format" and e.get("pointer", "").endswith("/code") for e in entries)
    return Code.INVALID_DEAL_CODE if entries and codes else ErrorCode.VALIDATION_FAILED


async def fingerprint(request: AnyRequest) -> str:
    """What makes two requests the same one, for Idempotency-Key: method, path and body."""
    body = await read_body(request)
    return hashlib.sha256(b"%s %s\n%s" % (request.method.encode(), request.url.path.encode(), body)).hexdigest()
