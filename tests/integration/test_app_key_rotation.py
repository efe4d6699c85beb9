"""An app's key is replaced without losing its users (issue 59): a leaked key could only be revoked, and revoking and
recreating the app lost every user's history. Now the operator replaces it; the old key works for a grace period,
on every route (a move's remembered key included), then is refused; the change is audited."""

from __future__ import annotations

from typing import Any

from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from tests.support.operators import OPERATOR
from tests.support.webhooks import as_user, bearer, new_app, service

ROTATE_KEY = "5b8e0c1d-2f3a-4b5c-8d7e-9f0a1b2c3d4e"


def _rotate(client: Any, app_id: str, grace_s: int) -> Any:
    headers = {**OPERATOR, "Idempotency-Key": f"{ROTATE_KEY}-{app_id}-{grace_s}"}
    return client.post(f"/v1/admin/apps/{app_id}/key", json={"grace_s": grace_s}, headers=headers)


def test_a_replaced_key_works_through_its_grace_then_is_refused(settings: Settings, clock: FakeClock) -> None:
    with service(settings, clock=clock) as client:
        old = new_app(client)
        app_id = client.get("/v1/apps/me", headers=bearer(old)).json()["id"]
        user = as_user(old, "user-7")
        game = client.post("/v1/games", json={"code": "PY1-N-ROTATES"}, headers=user).json()
        assert client.post(f"/v1/games/{game['id']}/moves", json="D", headers=user).status_code == 200
        rotated = _rotate(client, app_id, 600)
        assert rotated.status_code == 201, rotated.text
        new = rotated.json()["key"]
        assert new != old and rotated.json()["id"] == app_id
        assert _rotate(client, app_id, 600).json()["key"] == new, "a retry answers the same key"
        for key in (old, new):  # both work in the grace, on the same user's game and history
            moved = client.post(f"/v1/games/{game['id']}/moves", json="D", headers=as_user(key, "user-7"))
            assert moved.status_code == 200, moved.text
        clock.advance(601)
        refused = client.post(f"/v1/games/{game['id']}/moves", json="D", headers=as_user(old, "user-7"))
        assert refused.status_code == 401, refused.text
        assert client.get("/v1/apps/me", headers=bearer(old)).status_code == 401
        kept = client.get(f"/v1/games/{game['id']}", headers=as_user(new, "user-7"))
        assert kept.status_code == 200 and kept.json()["moves"] == 3, "the user's game stays the app's"
        audit = client.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]
        assert any(e["action"] == "rotate_app_key" and e["target"] == f"app:{app_id}" for e in audit)


def test_a_key_replaced_without_grace_is_refused_at_once(settings: Settings, clock: FakeClock) -> None:
    with service(settings, clock=clock) as client:
        old = new_app(client)
        app_id = client.get("/v1/apps/me", headers=bearer(old)).json()["id"]
        new = _rotate(client, app_id, 0).json()["key"]
        assert client.get("/v1/apps/me", headers=bearer(old)).status_code == 401
        assert client.get("/v1/apps/me", headers=bearer(new)).status_code == 200
        assert _rotate(client, "00000000-0000-4000-8000-000000000000", 0).status_code == 404
        forbidden = client.post(f"/v1/admin/apps/{app_id}/key", json={}, headers=bearer(new))
        assert forbidden.status_code in (401, 403), forbidden.text
