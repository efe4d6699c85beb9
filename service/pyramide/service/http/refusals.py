"""The answers the server's protocol writes itself, before or without the app: a whole problem+json response,
headers and body, that closes its connection."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Final

from pyramide.engine.messages import DEFAULT_LOCALE
from pyramide.service.http.problems import PROBLEM_JSON, localised, problem_type

_REASONS: Final = {
    400: "Bad Request",
    408: "Request Timeout",
    431: "Request Header Fields Too Large",
    503: "Service Unavailable",
}


@lru_cache(maxsize=32)
def _problem_body(status: int, code: str, locale: str) -> bytes:
    text = localised(code, locale, {})
    body = {"type": problem_type(code), "title": text, "status": status, "detail": text, "code": code}
    return json.dumps(body, ensure_ascii=False).encode()


def problem_bytes(
    status: int, code: str, request: str, locale: str = DEFAULT_LOCALE, retry_after_s: int | None = None
) -> bytes:
    """A whole problem+json response that closes its connection, in ``locale``, with ``request`` as its id."""
    body = _problem_body(status, code, locale)
    reason = _REASONS.get(status, "")
    retry = f"retry-after: {retry_after_s}\r\n" if retry_after_s is not None else ""
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: {PROBLEM_JSON}\r\ncontent-language: {locale}\r\n"
        f"vary: Accept-Language\r\ncontent-length: {len(body)}\r\nx-request-id: {request}\r\n"
        f"{retry}connection: close\r\n\r\n"
    )
    return head.encode() + body
