"""An app reads itself, and a creation says where the created thing is (issue 59): an app could not read itself (no
``GET /v1/apps/me``), and ``createApp``/``createWebhook`` sent no ``Location``."""

from __future__ import annotations

from pyramide.service.infra.settings import Settings
from tests.support.operators import OPERATOR
from tests.support.webhooks import bearer, service

APP = {"name": "Kártya Klub", "scopes": ["players"]}


def test_a_created_app_is_where_location_says_and_reads_itself(settings: Settings) -> None:
    with service(settings) as client:
        created = client.post("/v1/admin/apps", json=APP, headers=OPERATOR)
        assert created.status_code == 201, created.text
        view = {k: v for k, v in created.json().items() if k != "key"}
        located = client.get(created.headers["Location"], headers=OPERATOR)
        assert located.status_code == 200 and located.json() == view
        me = client.get("/v1/apps/me", headers=bearer(created.json()["key"]))
        assert me.status_code == 200 and me.json() == view
        assert "key" not in me.json()


def test_a_revoked_or_unknown_app_is_not_found_and_its_key_reads_nothing(settings: Settings) -> None:
    with service(settings) as client:
        created = client.post("/v1/admin/apps", json=APP, headers=OPERATOR).json()
        assert client.delete(f"/v1/admin/apps/{created['id']}", headers=OPERATOR).status_code == 204
        gone = client.get(f"/v1/admin/apps/{created['id']}", headers=OPERATOR)
        assert gone.status_code == 404 and gone.json()["code"] == "not_found"
        assert client.get("/v1/apps/me", headers=bearer(created["key"])).status_code == 401
        unknown = client.get("/v1/admin/apps/00000000-0000-4000-8000-000000000000", headers=OPERATOR)
        assert unknown.status_code == 404


def test_a_created_webhook_is_where_location_says(settings: Settings) -> None:
    with service(settings) as client:
        key = client.post("/v1/admin/apps", json=APP, headers=OPERATOR).json()["key"]
        body = {"url": "http://127.0.0.1:9/hook", "events": ["game.won"]}
        created = client.post("/v1/apps/me/webhooks", json=body, headers=bearer(key))
        assert created.status_code == 201, created.text
        located = client.get(created.headers["Location"], headers=bearer(key))
        assert located.status_code == 200 and located.json()["id"] == created.json()["id"]


def test_an_app_key_without_pyramide_player_is_told_what_it_missed(settings: Settings) -> None:
    """A valid app key without ``Pyramide-Player`` got 401 "Missing or invalid access token", whose page advises the
    token ``createPlayer`` gives: an app back end is told the header it missed. A wrong key is still
    ``unauthorized``."""
    with service(settings) as client:
        key = client.post("/v1/admin/apps", json=APP, headers={**OPERATOR, "Accept-Language": "en"}).json()["key"]
        missed = client.post("/v1/games", json={}, headers={**bearer(key), "Accept-Language": "en"})
        assert missed.status_code == 401, missed.text
        assert missed.json()["code"] == "player_header_required"
        assert "Pyramide-Player" in missed.json()["detail"]
        wrong = client.post("/v1/games", json={}, headers=bearer(key[:-4] + "AAAA"))
        assert wrong.status_code == 401 and wrong.json()["code"] == "unauthorized"
