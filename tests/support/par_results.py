"""Waiting for a deal's par to be kept in Redis, and its key."""

from __future__ import annotations

from typing import Any

import redis
from litestar import Litestar
from litestar.testing import TestClient

from pyramide.service.infra import keyspace
from tests.support.waiting import drain, eventually

POLL_S = 90.0


def _par_key(code: str) -> str:
    return f"pyr:{{analysis:{code}}}:par"


def _until_kept(redis_client: redis.Redis, code: str, app: TestClient[Any] | Litestar | None = None) -> None:
    """Once the par's background work is over (drained from an in-process ``app``, else polled for), Redis keeps the
    deal's par as decided and the boards that show it were told, the deal's last (its shown state written). Watched
    in Redis, never through a route that would itself start the work."""

    def kept() -> bool:
        par = redis_client.get(_par_key(code)) or b'"pending"'
        assert b'"pending"' not in par, f"the par of {code} was not worked out: {par!r}"
        shown = redis_client.get(keyspace.board_shown(code).shown)
        assert shown == par, f"the boards showing the par of {code} were not told"
        return True

    if app is None:
        eventually(kept, POLL_S)
    else:
        drain(app)
        kept()
