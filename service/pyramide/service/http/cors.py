"""Cross-origin access for browser front ends, with Litestar's own CORS middleware: off unless origins are
configured (``PYRAMIDE_CORS_ORIGINS``)."""

from __future__ import annotations

from typing import Final

from litestar.config.cors import CORSConfig

ALLOWED_HEADERS: Final = [
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "If-Match",
    "If-None-Match",
    "Accept-Language",
    "X-Request-ID",
]
"""What a front end sends: its token, its JSON, its retry key, the version it acts on, the copy it holds, its
language, its id."""
EXPOSED_HEADERS: Final = [
    "ETag",
    "Location",
    "Retry-After",
    "Content-Language",
    "RateLimit-Policy",
    "RateLimit",
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
