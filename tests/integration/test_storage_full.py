"""Full storage, played for real: a Redis at its ``maxmemory``. Every request that would write answers 507
``storage_full``, never 500; reads go on."""

from __future__ import annotations

import uuid
from typing import Any

import redis
from litestar.testing import TestClient

from tests.integration.conftest import new_player

Client = TestClient[Any]
REFUSED = {507, 503}
FREEING = {"reset stats", "erase"}
"""Deletions: Redis takes them past ``maxmemory`` (they free memory). Erasure on a full Redis is issue 41's erasure
part; here it only must not be a 500."""


def _writes(client: Client, auth: dict[str, str], fresh: str, played: str) -> dict[str, Any]:
    """Every route that writes, each sent once: its response by name."""
    key = {"Idempotency-Key": str(uuid.uuid4())}
    return {
        "create player": client.post("/v1/players", json={}, headers={**key}),
        "create game": client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth),
        "first move": client.post(f"/v1/games/{fresh}/moves", json={"type": "draw"}, headers=auth),
        "move": client.post(f"/v1/games/{played}/moves", json={"type": "draw"}, headers=auth),
        "undo": client.post(f"/v1/games/{played}/moves", json={"type": "undo"}, headers=auth),
        "tap": client.post(f"/v1/games/{played}/taps", json={"target": "stock"}, headers=auth),
        "hint": client.get(f"/v1/games/{played}/hint", headers=auth),
        "abandon": client.post(f"/v1/games/{fresh}/abandon", headers=auth),
        "settings": client.patch("/v1/players/me", json={"explain_errors": True}, headers=auth),
        "rename": client.patch("/v1/players/me", json={"name": "Teli Tár"}, headers=auth),
        "token rotation": client.post("/v1/players/me/token", headers={**auth, **key}),
        "reset stats": client.delete("/v1/players/me/stats", headers=auth),
        "erase": client.delete("/v1/players/me", headers=auth),
    }


def _reads(client: Client, auth: dict[str, str], played: str) -> dict[str, Any]:
    return {
        "game": client.get(f"/v1/games/{played}", headers=auth),
        "record": client.get(f"/v1/games/{played}/record", headers=auth),
        "me": client.get("/v1/players/me", headers=auth),
        "stats": client.get("/v1/players/me/stats", headers=auth),
        "wins": client.get("/v1/players/me/wins", headers=auth),
        "my games": client.get("/v1/players/me/games", headers=auth),
        "export": client.get("/v1/players/me/export", headers=auth),
        "leaderboard": client.get("/v1/leaderboards/PY1-N-AAAAAAS"),
        "deal": client.get("/v1/deals/PY1-N-AAAAAAS"),
        "live": client.get("/health/live"),
    }


def test_a_full_redis_refuses_every_write_with_507_never_500(client: Client, redis_client: redis.Redis) -> None:
    auth = new_player(client)
    fresh = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
    played = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
    assert client.post(f"/v1/games/{played}/moves", json={"type": "draw"}, headers=auth).status_code == 200
    redis_client.config_set("maxmemory", "1")
    try:
        writes = _writes(client, auth, fresh, played)
        reads = _reads(client, auth, played)
    finally:
        redis_client.config_set("maxmemory", "0")
    for name, response in writes.items():
        if name in FREEING and response.status_code in (200, 204):
            continue  # a deletion frees memory: a full Redis may take it
        assert response.status_code in REFUSED, (name, response.status_code, response.text)
        assert response.headers["content-type"] == "application/problem+json", name
        assert response.json()["code"] in ("storage_full", "storage_unconfirmed"), name
    for name, response in reads.items():
        assert response.status_code == 200, (name, response.status_code, response.text)
