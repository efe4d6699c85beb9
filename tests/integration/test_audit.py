"""The audit log and bans under review (issue 42), through HTTP against the real embedded Redis: a ban belongs to
whoever imposed it (an app cannot lift the operator's), an erased player leaves nothing in the audit log, every
schema-valid cursor answers, an app's read of its own actions costs one read of its own log, and a player's audit
list lives no longer than the player."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from litestar.testing import TestClient

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.audit import OPERATOR, OPERATOR_KEY, _as, _bearer, _me
from tests.support.deals import EASY_CODE, WINNING
from tests.support.players import new_player
from tests.support.redis_commands import client_commands
from tests.support.waiting import eventually


@pytest.fixture
def admin(settings: Settings) -> Iterator[TestClient[Any]]:
    app = create_app(settings.but(secrets={"operator_key": OPERATOR_KEY}))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def _app(client: Any, scopes: tuple[str, ...] = ("players",)) -> tuple[str, str]:
    response = client.post("/v1/admin/apps", json={"name": "Klub", "scopes": list(scopes)}, headers=OPERATOR)
    assert response.status_code == 201, response.text
    return response.json()["id"], response.json()["key"]


def _win_easy(client: Any, headers: dict[str, str]) -> None:
    game = client.post("/v1/games", json={"code": EASY_CODE}, headers=headers)
    assert game.status_code == 201, game.text
    for move in WINNING:
        played = client.post(f"/v1/games/{game.json()['id']}/moves", json=move, headers=headers)
        assert played.status_code == 200, played.text


def _board(client: Any) -> list[str]:
    response = client.get(f"/v1/leaderboards/{EASY_CODE}")
    assert response.status_code == 200, response.text
    return [e["name"] for e in response.json()["entries"]]


def test_an_app_lifts_only_the_bans_it_imposed(admin: Any) -> None:
    """The operator bans an app's user (a bot); the app (scope `moderation`) may not lift it: 403 `forbidden`, in
    Hungarian by default and in English, and the user stays banned and off the board. The operator lifts it; a ban
    the app imposed itself the app lifts. The ban says who imposed it; the export and the audit log show it."""
    app_id, key = _app(admin, ("players", "moderation"))
    user = _as(key, "cheater")
    assert admin.patch("/v1/players/me", json={"name": "Cheater"}, headers=user).status_code == 200
    _win_easy(admin, user)
    player = _me(admin, user)
    ban = admin.post(f"/v1/admin/players/{player}/ban", json={"reason": "operator: bot"}, headers=OPERATOR)
    assert ban.status_code == 200 and ban.json()["banned_by"] == "operator", ban.text
    again = admin.post(f"/v1/admin/players/{player}/ban", json={"reason": "mine now"}, headers=_bearer(key))
    assert again.json()["banned_by"] == "operator", "an app's repeated ban does not take the operator's over"
    for language in ("hu", "en"):
        lifted = admin.post(
            f"/v1/admin/players/{player}/unban",
            json={"reason": "nah"},
            headers={**_bearer(key), "Accept-Language": language},
        )
        assert lifted.status_code == 403, "an app lifted the operator's ban: " + lifted.text
        assert lifted.headers["content-type"].startswith("application/problem+json")
        assert lifted.json()["code"] == "forbidden" and lifted.headers["content-language"] == language
    assert admin.get("/v1/players/me", headers=user).status_code == 403
    assert _board(admin) == []
    export = admin.get("/v1/players/me/export", headers=user).json()
    assert export["player"]["banned_by"] == "operator"
    assert admin.post(f"/v1/admin/players/{player}/unban", json={}, headers=OPERATOR).json()["banned"] is False
    assert _board(admin) == ["Cheater"]
    own = admin.post(f"/v1/admin/players/{player}/ban", json={"reason": "app: bot"}, headers=_bearer(key))
    assert own.json()["banned_by"] == f"app:{app_id}"
    lifted = admin.post(f"/v1/admin/players/{player}/unban", json={"reason": "appeal"}, headers=_bearer(key))
    assert lifted.status_code == 200 and lifted.json()["banned"] is False, lifted.text
    assert _board(admin) == ["Cheater"]
    log = admin.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]
    owners = [(e["action"], e["detail"].get("banned_by")) for e in log if e["target"] == f"player:{player}"]
    assert owners == [
        ("unban", f"app:{app_id}"),
        ("ban", f"app:{app_id}"),
        ("unban", "operator"),
        ("ban", "operator"),
        ("ban", "operator"),
    ]


def _holding(redis_client: redis.Redis, player_id: str, name: str) -> list[str]:
    """The keys (but the player's tombstone) whose name or value holds the player's id or ``name``."""
    holding = []
    for found in redis_client.scan_iter():
        key = found.decode()
        if key == f"pyr:{{p:{player_id}}}:erased":
            continue
        kind = redis_client.type(found)
        dump = repr(redis_client.xrange(found)) if kind == b"stream" else repr(redis_client.dump(found))
        if player_id in key or player_id in dump or name in dump:
            holding.append(key)
    return holding


def test_erasing_a_moderated_player_leaves_nothing_of_it_in_the_audit_log(
    admin: Any, redis_client: redis.Redis
) -> None:
    """docs/security.md: after erasure (and the delivery of its events to the app, here none: the app has no
    endpoint) a scan of the whole keyspace finds the player's id only in its tombstone. A
    banned, unbanned, annulled app user is erased: its id and the moderators' reasons leave the global audit stream
    and the app's own; the app's other actions stay."""
    _, key = _app(admin, ("players", "moderation"))
    user = _as(key, "erin")
    player_id = _me(admin, user)
    _win_easy(admin, user)
    assert admin.post(f"/v1/admin/players/{player_id}/ban", json={"reason": "Erin is a bot"}, headers=OPERATOR)
    assert admin.post(f"/v1/admin/players/{player_id}/unban", json={}, headers=OPERATOR).status_code == 200
    assert admin.post(f"/v1/admin/players/{player_id}/ban", json={"reason": "app: bot"}, headers=_bearer(key))
    assert admin.post(f"/v1/admin/players/{player_id}/unban", json={}, headers=_bearer(key)).status_code == 200
    annulled = admin.delete(f"/v1/admin/leaderboards/{EASY_CODE}/entries/{player_id}", headers=_bearer(key))
    assert annulled.status_code == 204
    other = _me(admin, _as(key, "someone-else"))
    assert admin.post(f"/v1/admin/players/{other}/ban", json={"reason": "other"}, headers=_bearer(key))
    assert admin.delete("/v1/players/me", headers=user).status_code == 204
    # the app's outbox holds player.erased (with the id) until its delivery
    with contextlib.suppress(AssertionError):
        eventually(lambda: not _holding(redis_client, player_id, "Erin"), 5)
    holding = _holding(redis_client, player_id, "Erin")
    assert holding == [], f"the erased player's id is still kept in {holding}"
    mine = admin.get("/v1/admin/audit", headers=_bearer(key)).json()["entries"]
    assert [(e["action"], e["target"]) for e in mine] == [("ban", f"player:{other}")]


@pytest.mark.parametrize("cursor", ["0-0", "0-1", "000000000000000-0", "999999999999999-9999999999"])
def test_every_schema_valid_audit_cursor_answers(admin: Any, cursor: str) -> None:
    """A cursor at the stream's very start (0-0) is an empty last page, not a 500."""
    _app(admin)
    response = admin.get("/v1/admin/audit", params={"cursor": cursor}, headers=OPERATOR)
    assert response.status_code == 200, response.text
    expected = 1 if cursor.startswith("9") else 0
    assert len(response.json()["entries"]) == expected and response.json()["next_cursor"] is None


def test_an_apps_audit_read_is_one_read_of_its_own_log(settings: Settings, admin: Any) -> None:
    """Any app key may read its own actions. With 200 operator actions newer than the app's only one, `limit=1`
    answers the app's action in one XREVRANGE (before: 4 entries a round trip through everyone's, 25,000 round trips
    at the log's cap); the next page is empty, and no other app's action shows."""
    _, key = _app(admin, ("players", "moderation"))
    player = _me(admin, _as(key, "u"))
    assert admin.post(f"/v1/admin/players/{player}/ban", json={"reason": "x"}, headers=_bearer(key))
    for _ in range(200):
        admin.post("/v1/admin/apps", json={"name": "x", "scopes": []}, headers=OPERATOR)
    with client_commands(str(settings.redis.url)) as seen:
        response = admin.get("/v1/admin/audit", params={"limit": 1}, headers=_bearer(key))
    assert response.status_code == 200, response.text
    assert [(e["action"], e["target"]) for e in response.json()["entries"]] == [("ban", f"player:{player}")]
    assert response.json()["next_cursor"] is None
    assert seen.count("XREVRANGE") == 1, f"one audit read of an app made {seen.count('XREVRANGE')} XREVRANGE calls"
    _, other_key = _app(admin)
    assert admin.get("/v1/admin/audit", headers=_bearer(other_key)).json()["entries"] == []


def test_a_players_audit_list_lives_as_long_as_the_player(admin: Any, redis_client: redis.Redis) -> None:
    """An anonymous player that never finished a game expires (PYRAMIDE_PLAYER_IDLE_TTL_S); what moderators did to
    it expires with it, and is renewed with it; once it finishes a game both are kept (the list from the
    player's next request on)."""
    player = new_player(admin)
    player_id = _me(admin, player)
    assert admin.post(f"/v1/admin/players/{player_id}/ban", json={"reason": "x"}, headers=OPERATOR).status_code == 200
    assert admin.post(f"/v1/admin/players/{player_id}/unban", json={}, headers=OPERATOR).status_code == 200
    player_ttl = redis_client.pttl(f"pyr:{{p:{player_id}}}:player")
    audit_ttl = redis_client.pttl(f"pyr:{{p:{player_id}}}:audit")
    assert player_ttl > 0, "the player expires"
    assert 0 < audit_ttl <= player_ttl, f"its audit list: {audit_ttl} ms, the player: {player_ttl} ms"
    redis_client.pexpire(f"pyr:{{p:{player_id}}}:audit", 5_000)
    assert admin.get("/v1/players/me/stats", headers=player).status_code == 200  # renews the player's idle time
    assert redis_client.pttl(f"pyr:{{p:{player_id}}}:audit") > 5_000, "renewed with the player"
    _win_easy(admin, player)
    assert redis_client.pttl(f"pyr:{{p:{player_id}}}:player") == -1
    assert admin.get("/v1/players/me/stats", headers=player).status_code == 200  # its next request
    assert redis_client.pttl(f"pyr:{{p:{player_id}}}:audit") == -1, "kept for good with the player"
