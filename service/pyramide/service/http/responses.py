"""What every operation may answer besides its success, for the OpenAPI schema."""

from __future__ import annotations

from litestar.openapi.datastructures import ResponseSpec

from pyramide.service.http.body import MAX_BODY_BYTES
from pyramide.service.http.problems import PROBLEM_JSON
from pyramide.service.http.schemas import Problem

_DESCRIPTIONS = {
    400: "Malformed request (not JSON, or a bad header)",
    401: "No valid bearer token (on /v1/admin: no operator key or valid app key)",
    403: "The key may not do this (`forbidden`), or the player is banned (`player_banned`)",
    404: "No such game (or not yours), or no such resource",
    409: "The move is not allowed now (the engine's code), a lost race, an Idempotency-Key reused, or no deal"
    " proven winnable in time for winnable_only",
    412: "If-Match names a version the game has moved on from",
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
