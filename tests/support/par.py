"""Waiting for a deal's par to be decided, through the API."""

from __future__ import annotations

from typing import Any

import httpx
from litestar import Litestar
from litestar.testing import TestClient

from tests.support.waiting import drain, eventually

POLL_S = 20.0


def _until_decided(client: httpx.Client, code: str, app: TestClient[Any] | Litestar | None = None) -> dict[str, Any]:
    """The deal as served once its par is no longer pending: once the background work a read starts is over (an
    in-process ``app``), or polled for (a server in a subprocess)."""

    def decided() -> dict[str, Any]:
        body: dict[str, Any] = client.get(f"/v1/deals/{code}").json()
        assert body["par_status"] != "pending", f"the par of {code} was still pending"
        return body

    if app is None:
        return eventually(decided, POLL_S)
    client.get(f"/v1/deals/{code}")
    drain(app)
    return decided()
