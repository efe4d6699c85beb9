"""A leaked token replaced: the old one stops working at once in every process, the new one works, and a retry
after a lost answer gets the same new token."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from litestar.testing import TestClient

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.players import new_player

Client = TestClient[Any]


def _rotate(client: Client, auth: dict[str, str], key: str | None = None) -> Any:
    headers = auth if key is None else {**auth, "Idempotency-Key": key}
    return client.post("/v1/players/me/token", headers=headers)


def test_the_old_token_stops_working_at_once_in_every_process(settings: Settings) -> None:
    with TestClient(create_app(settings)) as one, TestClient(create_app(settings)) as other:
        old = new_player(one)
        game = one.post("/v1/games", json={}, headers=old).json()["id"]
        for client in (one, other):  # each process has just authenticated the player, and remembers it
            assert client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=old).status_code == 200
        rotated = _rotate(one, old)
        assert rotated.status_code == 201
        new = {"Authorization": f"Bearer {rotated.json()['token']}"}
        for client in (one, other):
            for response in (
                client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=old),
                client.post(f"/v1/games/{game}/taps", json={"target": "stock"}, headers=old),
                client.post("/v1/games", json={}, headers=old),
                client.get(f"/v1/games/{game}", headers=old),
                client.get("/v1/players/me/stats", headers=old),
                _rotate(client, old),
            ):
                assert response.status_code == 401, response.text
            moved = client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=new)
            assert moved.status_code == 200
        assert one.get(f"/v1/games/{game}", headers=new).json()["moves"] == 4


def test_a_retry_with_the_old_token_and_the_same_key_gets_the_same_new_token(client: Client) -> None:
    old = new_player(client)
    key = str(uuid.uuid4())
    first, retry = _rotate(client, old, key), _rotate(client, old, key)
    assert first.status_code == retry.status_code == 201 and first.json() == retry.json()
    new = {"Authorization": f"Bearer {first.json()['token']}"}
    assert client.get("/v1/players/me", headers=new).status_code == 200
    assert _rotate(client, old, str(uuid.uuid4())).status_code == 401, "another key finds nothing: 401"
    other = client.post("/v1/players/me/token", headers={**old, "Idempotency-Key": key}, json={"x": 1})
    assert other.status_code == 409 and other.json()["code"] == "idempotency_key_reused"


@pytest.mark.parametrize("language", ["hu", "en"])
def test_rotation_errors_read_as_the_rest(client: Client, language: str) -> None:
    auth = {**new_player(client), "Accept-Language": language}
    weak = _rotate(client, auth, "short")
    assert weak.status_code == 400 and weak.json()["code"] == "weak_idempotency_key"
    missing = client.post("/v1/players/me/token", headers={"Accept-Language": language})
    assert missing.status_code == 401 and missing.headers["content-language"] == language
    assert missing.headers["www-authenticate"].startswith("Bearer")


def test_only_the_latest_rotations_answer_is_kept(client: Client, redis_client: Any) -> None:
    """Rotating in a loop with fresh keys kept every sealed answer for 24 hours (issue 41): now only the latest,
    which its retry still gets."""
    created = client.post("/v1/players", json={}).json()
    auth = {"Authorization": f"Bearer {created['token']}"}
    for _ in range(5):
        key = str(uuid.uuid4())
        rotated = _rotate(client, auth, key)
        assert rotated.status_code == 201
        old, auth = auth, {"Authorization": f"Bearer {rotated.json()['token']}"}
    assert len(redis_client.keys(f"pyr:{{p:{created['id']}}}:sealed:*")) == 1
    assert _rotate(client, old, key).json() == rotated.json(), "the latest retry still gets its answer"
