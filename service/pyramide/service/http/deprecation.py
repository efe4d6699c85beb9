"""How an operation is deprecated within ``/v1`` (``docs/api.md``, Versioning and deprecation): ``deprecated: true``
in the schema, and on every answer the ``Deprecation`` header (RFC 9745: when it was deprecated) and the ``Sunset``
header (RFC 8594: from when it may stop working). Nothing is deprecated today; this is the one way to do it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

from litestar import Response

from pyramide.service.http.limits import rate_limit_headers

MIN_NOTICE_DAYS = 183
"""The least time between a deprecation and its sunset: six months."""


def deprecated(since: datetime, sunset: datetime) -> dict[str, Any]:
    """The route decorator's keywords that deprecate its operation (``@get(..., **deprecated(since, sunset))``):
    ``deprecated=True`` for the schema, the dates for the schema's headers (``deprecation``), and the
    ``after_request`` hook that sends them (with a rate-limited route's RateLimit headers, declare
    ``rate_limited=True`` as usual). A sunset less than :data:`MIN_NOTICE_DAYS` after ``since`` is refused."""
    if (sunset - since).days < MIN_NOTICE_DAYS:
        raise ValueError(f"a sunset at least {MIN_NOTICE_DAYS} days after the deprecation")
    headers = {
        "Deprecation": f"@{int(since.timestamp())}",
        "Sunset": format_datetime(sunset.astimezone(UTC), usegmt=True),
    }

    async def announce(response: Response[object]) -> Response[object]:
        response.headers.update(headers)
        return await rate_limit_headers(response)

    hook: Callable[[Response[object]], Awaitable[Response[object]]] = announce
    return {"deprecated": True, "deprecation": headers, "after_request": hook}
