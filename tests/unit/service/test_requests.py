"""Reading a request body straight from the ASGI channel: however it is split, once, and never past the limit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from litestar import Request

from pyramide.service.http.body import MAX_BODY_BYTES, fingerprint, read_body
from pyramide.service.http.problems import ProblemError


def _request(*messages: dict[str, Any]) -> tuple[Request[Any, Any, Any], list[dict[str, Any]]]:
    """A request whose channel hands out ``messages`` in turn, and the list of those not yet taken."""
    pending = list(messages)

    async def receive() -> dict[str, Any]:
        return pending.pop(0)

    scope = {"type": "http", "method": "POST", "path": "/v1/x", "raw_path": b"/v1/x", "query_string": b"",
             "headers": [], "server": ("x", 80), "scheme": "http", "root_path": "", "state": {}}  # fmt: skip
    return Request(scope, receive), pending  # type: ignore[arg-type]


def _piece(body: bytes, more: bool = True) -> dict[str, Any]:
    return {"type": "http.request", "body": body, "more_body": more}


def test_a_body_in_pieces_is_joined_and_read_only_once() -> None:
    request, pending = _request(_piece(b'{"type"'), _piece(b""), _piece(b': "draw"}', more=False))
    assert asyncio.run(read_body(request)) == b'{"type": "draw"}'
    assert not pending
    assert asyncio.run(read_body(request)) == b'{"type": "draw"}', "a second reader gets the kept body"
    asyncio.run(fingerprint(request))


@pytest.mark.parametrize("split", [1, 3])
def test_a_body_past_the_limit_is_refused_without_reading_on(split: int) -> None:
    size = MAX_BODY_BYTES // split + 1
    request, pending = _request(*(_piece(b"x" * size) for _ in range(split)), _piece(b"x", more=False))
    with pytest.raises(ProblemError) as refused:
        asyncio.run(read_body(request))
    assert refused.value.status_code == 413 and refused.value.code == "body_too_large"
    assert len(pending) == 1, "nothing is read after the limit is passed"


def test_exactly_the_limit_is_read() -> None:
    request, _ = _request(_piece(b"x" * (MAX_BODY_BYTES - 1)), _piece(b"x", more=False))
    assert len(asyncio.run(read_body(request))) == MAX_BODY_BYTES


def test_a_client_gone_mid_body_is_a_bad_request() -> None:
    request, _ = _request(_piece(b"{"), {"type": "http.disconnect"})
    with pytest.raises(ProblemError) as refused:
        asyncio.run(read_body(request))
    assert refused.value.status_code == 400
