"""The operator's key and the apps' server keys on the admin routes (issue 42, item 1), against a real Redis and a
real ``pyramide serve`` with two workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from litestar.testing import TestClient

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.players import new_player
from tests.support.serving import serving


@pytest.fixture
def admin(settings: Settings) -> Any:
    with TestClient(
        create_app(settings.but(secrets={"operator_key": OPERATOR_KEY})), raise_server_exceptions=False
    ) as client:
        yield client


def _create_app(client: Any, name: str = "Kártya Klub", scopes: tuple[str, ...] = ("players",)) -> dict[str, Any]:
    response = client.post("/v1/admin/apps", json={"name": name, "scopes": list(scopes)}, headers=OPERATOR)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def test_without_an_operator_key_every_admin_route_is_404(client: TestClient[Any], player: dict[str, str]) -> None:
    for method, path in (("GET", "/v1/admin/apps"), ("POST", "/v1/admin/apps"), ("GET", "/v1/admin/audit")):
        for headers in ({}, player, OPERATOR):
            response = client.request(method, path, json={"name": "x"}, headers=headers)
            assert response.status_code == 404, (method, path, response.text)
            assert response.headers["content-type"].startswith("application/problem+json")
            assert response.json()["code"] == "not_found"


def test_an_app_key_is_shown_once_kept_hashed_and_listed_without_it(admin: Any, redis_client: redis.Redis) -> None:
    created = _create_app(admin, "Kártya Klub", ("players", "moderation"))
    key = created["key"]
    assert key.startswith("pyrapp_") and created["scopes"] == ["moderation", "players"]
    secret = key.rpartition("_")[2].encode()
    for name in redis_client.scan_iter(match="*"):
        kind = redis_client.type(name)
        values = (
            [redis_client.get(name)]
            if kind == b"string"
            else list(redis_client.hgetall(name).values())
            if kind == b"hash"
            else []
        )
        assert not any(secret in (v or b"") for v in values), name
    listed = admin.get("/v1/admin/apps", headers=OPERATOR).json()["entries"]
    assert [(a["id"], a["name"]) for a in listed] == [(created["id"], "Kártya Klub")]
    assert "key" not in listed[0]


def test_keys_are_not_interchangeable(admin: Any) -> None:
    """A player's token is refused on the admin routes; an app's key is not a player's token; an app may not
    manage apps; a key that merely looks like an app's is refused."""
    player = new_player(admin)
    assert admin.get("/v1/admin/apps", headers=player).status_code == 401
    assert admin.get("/v1/admin/audit", headers=player).status_code == 401
    app_key = {"Authorization": f"Bearer {_create_app(admin)['key']}"}
    assert admin.get("/v1/players/me", headers=app_key).json()["code"] == "player_header_required"
    assert admin.post("/v1/games", json={}, headers=app_key).status_code == 401
    refused = admin.get("/v1/admin/apps", headers=app_key)
    assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
    assert admin.get("/v1/admin/audit", headers=app_key).status_code == 200
    forged = {"Authorization": "Bearer pyrapp_" + "0" * 32 + "_" + "A" * 43}
    assert admin.get("/v1/admin/audit", headers=forged).status_code == 401
    assert admin.get("/v1/admin/audit", headers={"Authorization": f"Bearer {OPERATOR_KEY}x"}).status_code == 401


def test_the_audit_log_keeps_who_did_what_and_an_app_sees_only_its_own(admin: Any) -> None:
    first, second = _create_app(admin, "First"), _create_app(admin, "Second")
    assert admin.delete(f"/v1/admin/apps/{second['id']}", headers=OPERATOR).status_code == 204
    assert admin.delete(f"/v1/admin/apps/{second['id']}", headers=OPERATOR).status_code == 404
    entries = admin.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]
    assert [(e["actor"], e["action"], e["target"]) for e in entries] == [
        ("operator", "revoke_app", f"app:{second['id']}"),
        ("operator", "create_app", f"app:{second['id']}"),
        ("operator", "create_app", f"app:{first['id']}"),
    ]
    page = admin.get("/v1/admin/audit?limit=2", headers=OPERATOR).json()
    rest = admin.get(f"/v1/admin/audit?limit=2&cursor={page['next_cursor']}", headers=OPERATOR).json()
    assert [e["id"] for e in page["entries"] + rest["entries"]] == [e["id"] for e in entries]
    app_key = {"Authorization": f"Bearer {first['key']}"}
    assert admin.get("/v1/admin/audit", headers=app_key).json()["entries"] == []


@pytest.mark.slow
def test_a_revoked_app_key_is_refused_at_once_by_every_worker(tmp_path: Path) -> None:
    env = {"PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY}
    with (
        serving(tmp_path / "data", tmp_path, "--workers", "2", env=env) as served,
        httpx.Client(base_url=served.url, timeout=10) as client,
    ):
        created = _create_app(client)
        app_key = {"Authorization": f"Bearer {created['key']}"}
        assert all(client.get("/v1/admin/audit", headers=app_key).status_code == 200 for _ in range(20))
        assert client.delete(f"/v1/admin/apps/{created['id']}", headers=OPERATOR).status_code == 204
        statuses = set()
        for _ in range(40):  # a new connection each time: either worker answers
            statuses.add(httpx.get(f"{served.url}/v1/admin/audit", headers=app_key, timeout=10).status_code)
        assert statuses == {401}
