"""A decided review stays decided (issue 42, found by an adversarial review): accepting it again enters nothing, so an
entry a moderator annulled after accepting its win stays off the board, whoever accepts again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis
from litestar.testing import TestClient

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.audit import OPERATOR, OPERATOR_KEY, _as, _bearer
from tests.support.challenges import held_challenge_win
from tests.support.players import new_player


def _client(settings: Settings, **changes: Any) -> Iterator[TestClient[Any]]:
    app = create_app(settings.but(secrets={"operator_key": OPERATOR_KEY}).but(**changes))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def admin(settings: Settings) -> Iterator[TestClient[Any]]:
    """Operator key set; the cadence floor at its default (150 ms): a solver-speed challenge win is held."""
    yield from _client(settings, challenges={"min_move_ms": 150})


def _app(client: Any, scopes: tuple[str, ...] = ("players",), name: str = "Klub", **body: Any) -> tuple[str, str]:
    response = client.post("/v1/admin/apps", json={"name": name, "scopes": list(scopes), **body}, headers=OPERATOR)
    assert response.status_code == 201, response.text
    return response.json()["id"], response.json()["key"]


def _board(client: Any, challenge: str, **params: str) -> list[dict[str, Any]]:
    response = client.get(f"/v1/challenges/{challenge}/leaderboard", params=params)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["entries"]
    return entries


def test_accepting_a_review_again_does_not_bring_an_annulled_entry_back(admin: Any, redis_client: redis.Redis) -> None:
    """Accepting again 'changes nothing'; annulment takes an entry off 'for good' (docs/api.md): the accept route
    once entered the held win on every call."""
    player = new_player(admin, name="Fast")
    review = held_challenge_win(admin, redis_client, player, OPERATOR)
    challenge = review["challenge"]
    accepted = admin.post(f"/v1/admin/reviews/{review['id']}/accept", json={"reason": "ok"}, headers=OPERATOR)
    assert accepted.status_code == 200, accepted.text
    assert [e["name"] for e in _board(admin, challenge)] == ["Fast"]
    annulled = admin.delete(
        f"/v1/admin/leaderboards/challenge:{challenge}/entries/{review['player']}",
        params={"reason": "cheat found later"},
        headers=OPERATOR,
    )
    assert annulled.status_code == 204, annulled.text
    assert _board(admin, challenge) == []
    again = admin.post(f"/v1/admin/reviews/{review['id']}/accept", json={"reason": "again"}, headers=OPERATOR)
    assert again.status_code == 200
    assert _board(admin, challenge) == [], "an annulled entry came back through a repeated (no-op) accept"


def test_an_app_cannot_bring_back_its_players_entry_the_operator_annulled(
    admin: Any, redis_client: redis.Redis
) -> None:
    """The same by a hostile app with `moderation`: the operator accepts its user's win, then annuls the entry; the
    app's accept is no way back (it may not accept at all: 403 ``operator_only``, issue 57)."""
    _, key = _app(admin, ("players", "moderation"))
    user = _as(key, "bot-1")
    review = held_challenge_win(admin, redis_client, user, OPERATOR)
    app_admin = _bearer(key)
    assert admin.post(f"/v1/admin/reviews/{review['id']}/accept", json={}, headers=OPERATOR).status_code == 200
    board = f"challenge:{review['challenge']}"
    annul = admin.delete(f"/v1/admin/leaderboards/{board}/entries/{review['player']}", headers=OPERATOR)
    assert annul.status_code == 204
    again = admin.post(f"/v1/admin/reviews/{review['id']}/accept", json={}, headers=app_admin)
    assert again.status_code == 403 and again.json()["code"] == "operator_only", again.text
    assert _board(admin, review["challenge"]) == [], "the app brought back an entry the operator annulled"


def test_an_app_rejects_its_own_players_held_win_but_may_not_accept_it(admin: Any, redis_client: redis.Redis) -> None:
    """Nobody approves their own (issue 57): an app with `moderation` is refused accepting its own user's held win
    (403 ``operator_only``, in the caller's language; nothing written, nothing audited, the review still pending),
    rejects another of its users' (audited as the app), and the operator accepts the first, which then ranks."""
    _, key = _app(admin, ("players", "moderation"))
    app_admin = _bearer(key)
    review = held_challenge_win(admin, redis_client, _as(key, "bot-1"), OPERATOR)
    url = f"/v1/admin/reviews/{review['id']}/accept"
    refused = admin.post(url, json={"reason": "mine"}, headers={**app_admin, "Accept-Language": "en"})
    assert refused.status_code == 403 and refused.json()["code"] == "operator_only", refused.text
    assert refused.headers["content-type"].startswith("application/problem+json")
    assert refused.json()["title"] == "Only the operator's key may do this"
    hungarian = admin.post(url, json={"reason": "mine"}, headers=app_admin)
    assert hungarian.status_code == 403 and hungarian.json()["title"] != refused.json()["title"]
    assert _board(admin, review["challenge"]) == []
    assert admin.get("/v1/admin/audit", headers=OPERATOR).json()["entries"][0]["action"] == "create_app"
    (pending,) = admin.get("/v1/admin/reviews", headers=app_admin).json()["entries"]
    assert pending["status"] == "pending" and pending["decided_by"] is None

    other = held_challenge_win(admin, redis_client, _as(key, "bot-2"), OPERATOR)
    rejected = admin.post(f"/v1/admin/reviews/{other['id']}/reject", json={"reason": "a bot"}, headers=app_admin)
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected", rejected.text

    accepted = admin.post(url, json={"reason": "looked at it"}, headers=OPERATOR)
    assert accepted.status_code == 200 and accepted.json()["decided_by"] == "operator", accepted.text
    assert [e["player"] for e in _board(admin, review["challenge"])] == [review["player"]]
    audit = admin.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]
    assert [(e["action"], e["actor"].split(":")[0]) for e in audit[:2]] == [
        ("accept_review", "operator"),
        ("reject_review", "app"),
    ]
