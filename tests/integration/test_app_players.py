"""App players, their sessions and the apps' own limits (issue 42, item 2), through HTTP against a real Redis and a
real ``pyramide serve`` with two workers."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import redis
from litestar.testing import TestClient

from pyramide.service.app import create_app
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from tests.support.challenges import _deal, _win
from tests.support.deals import EASY_CODE, WINNING
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.players import new_player
from tests.support.serving import serve_in_thread, serving


def _client(settings: Settings, **changes: Any) -> Iterator[Any]:
    app = create_app(settings.but(secrets={"operator_key": OPERATOR_KEY}).but(**changes))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def admin(settings: Settings) -> Iterator[Any]:
    yield from _client(settings)


def _app(client: Any, name: str = "Kártya Klub", scopes: tuple[str, ...] = ("players",), **body: Any) -> str:
    """A new app's key."""
    response = client.post("/v1/admin/apps", json={"name": name, "scopes": list(scopes), **body}, headers=OPERATOR)
    assert response.status_code == 201, response.text
    key: str = response.json()["key"]
    return key


def _as(key: str, external_id: str, **headers: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Pyramide-Player": external_id, **headers}


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _problem(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code, response.text


def _session(client: Any, key: str, external_id: str) -> dict[str, Any]:
    response = client.post(f"/v1/apps/me/players/{external_id}/sessions", headers=_bearer(key))
    assert response.status_code == 201, response.text
    issued: dict[str, Any] = response.json()
    return issued


def test_an_app_player_is_created_on_first_use_plays_and_is_the_same_next_time(admin: Any) -> None:
    key = _app(admin)
    first = admin.get("/v1/players/me", headers=_as(key, "user-1"))
    assert first.status_code == 200, first.text
    assert first.json()["locale"] == "hu" and first.json()["explain_errors"] is False  # createPlayer's defaults
    game = admin.post("/v1/games", json={"code": EASY_CODE}, headers=_as(key, "user-1")).json()["id"]
    for move in WINNING:
        assert admin.post(f"/v1/games/{game}/moves", json=move, headers=_as(key, "user-1")).status_code == 200
    assert admin.get("/v1/players/me", headers=_as(key, "user-1")).json()["id"] == first.json()["id"]
    assert admin.get(f"/v1/games/{game}", headers=_as(key, "user-1")).json()["status"] == "won"
    stats = admin.get("/v1/players/me/stats", headers=_as(key, "user-1")).json()
    assert stats["played"] == 1 and stats["won"] == 1, stats
    other = admin.get("/v1/players/me", headers=_as(key, "user-2")).json()["id"]
    assert other != first.json()["id"]
    assert admin.get(f"/v1/games/{game}", headers=_as(key, "user-2")).status_code == 404


def test_the_same_external_id_in_two_apps_is_two_players(admin: Any) -> None:
    first, second = _app(admin, "Első"), _app(admin, "Második")
    mine = admin.get("/v1/players/me", headers=_as(first, "same")).json()["id"]
    theirs = admin.get("/v1/players/me", headers=_as(second, "same")).json()["id"]
    assert mine != theirs
    game = admin.post("/v1/games", json={"code": EASY_CODE}, headers=_as(first, "same")).json()["id"]
    assert admin.get(f"/v1/games/{game}", headers=_as(second, "same")).status_code == 404
    assert admin.post(f"/v1/games/{game}/moves", json=WINNING[0], headers=_as(second, "same")).status_code == 404
    assert admin.get(f"/v1/games/{game}", headers=_as(first, "same")).json()["version"] == 0


def test_scopes_headers_and_tokens_are_checked(admin: Any) -> None:
    players_app, moderation_app = _app(admin), _app(admin, "Moderátor", ("moderation",))
    _problem(admin.get("/v1/players/me", headers=_as(moderation_app, "u")), 403, "forbidden")
    _problem(admin.get("/v1/players/me", headers=_bearer(players_app)), 401, "player_header_required")
    _problem(admin.post("/v1/games", json={}, headers=_bearer(players_app)), 401, "player_header_required")
    player = new_player(admin)
    _problem(admin.get("/v1/players/me", headers={**player, "Pyramide-Player": "u"}), 403, "player_header_not_allowed")
    for bad in ("", "a b", "x" * 129, "é".encode(), "caf\x7f", "tab\there"):
        headers = {"Authorization": f"Bearer {players_app}", "Pyramide-Player": bad, "Accept-Language": "en"}
        refused = admin.get("/v1/players/me", headers=headers)
        _problem(refused, 400, "invalid_player_header")
        assert "128 visible ASCII" in refused.json()["detail"], refused.text
    hungarian = admin.get("/v1/players/me", headers=_as(players_app, "a b"))
    assert "látható ASCII" in hungarian.json()["detail"]
    assert admin.get("/v1/players/me", headers=_as(players_app, "x" * 128)).status_code == 200
    forged = "pyrapp_" + "0" * 32 + "_" + "A" * 43
    _problem(admin.get("/v1/players/me", headers=_as(forged, "u")), 401, "unauthorized")
    _problem(admin.post("/v1/players/me/token", headers=_as(players_app, "u")), 403, "forbidden")
    session = _session(admin, players_app, "u")["token"]
    _problem(admin.post("/v1/players/me/token", headers=_bearer(session)), 403, "forbidden")
    _problem(admin.post("/v1/apps/me/players/u/sessions", headers=_bearer(moderation_app)), 403, "forbidden")
    _problem(admin.post("/v1/apps/me/players/u/sessions", headers=player), 401, "unauthorized")


def test_concurrent_first_uses_of_one_external_id_make_one_player_and_no_orphans(
    live_url: str, admin: Any, redis_client: redis.Redis
) -> None:
    key = _app(admin)

    def me(_: int) -> str:
        with httpx.Client(base_url=live_url, timeout=10) as http:
            response = http.get("/v1/players/me", headers=_as(key, "racer"))
            assert response.status_code == 200, response.text
            return str(response.json()["id"])

    with ThreadPoolExecutor(16) as pool:
        ids = set(pool.map(me, range(32)))
    assert len(ids) == 1
    players = list(redis_client.scan_iter(match="pyr:{p:*}:player"))
    auths = list(redis_client.scan_iter(match="pyr:{p:*}:auth"))
    assert len(players) == 1 and len(auths) == 1, (players, auths)


def test_sessions_work_several_at_once_and_expire(settings: Settings, clock: FakeClock) -> None:
    """Sessions of 60 s: used at once (however slow the machine), then the service's clock is moved past their
    end."""
    for client in _client(settings, retention={"session_ttl_s": 60}):
        key = _app(client)
        player = client.get("/v1/players/me", headers=_as(key, "s")).json()["id"]
        first, second = _session(client, key, "s"), _session(client, key, "s")
        assert first["token"].startswith("pyrses_") and first["token"] != second["token"]
        for session in (first, second):
            assert client.get("/v1/players/me", headers=_bearer(session["token"])).json()["id"] == player
        game = client.post("/v1/games", json={"code": EASY_CODE}, headers=_bearer(first["token"])).json()["id"]
        moved = client.post(f"/v1/games/{game}/moves", json=WINNING[0], headers=_bearer(second["token"]))
        assert moved.status_code == 200, moved.text
        _problem(
            client.get("/v1/players/me", headers={**_bearer(first["token"]), "Pyramide-Player": "other"}),
            403,
            "player_header_not_allowed",
        )
        clock.advance(61)
        _problem(client.get("/v1/players/me", headers=_bearer(first["token"])), 401, "unauthorized")
        assert client.get("/v1/players/me", headers=_as(key, "s")).json()["id"] == player


def test_a_session_is_refused_after_its_app_is_revoked_and_after_erasure(admin: Any) -> None:
    key = _app(admin)
    session = _session(admin, key, "gone")["token"]
    assert admin.get("/v1/players/me", headers=_bearer(session)).status_code == 200
    app_id = admin.get("/v1/admin/apps", headers=OPERATOR).json()["entries"][0]["id"]
    assert admin.delete(f"/v1/admin/apps/{app_id}", headers=OPERATOR).status_code == 204
    _problem(admin.get("/v1/players/me", headers=_bearer(session)), 401, "unauthorized")
    _problem(admin.get("/v1/players/me", headers=_as(key, "gone")), 401, "unauthorized")

    key = _app(admin, "Új")
    session = _session(admin, key, "erased")["token"]
    assert admin.delete("/v1/players/me", headers=_bearer(session)).status_code == 204
    _problem(admin.get("/v1/players/me", headers=_bearer(session)), 401, "unauthorized")


def test_an_app_player_is_exported_and_erased_with_its_binding(admin: Any, redis_client: redis.Redis) -> None:
    key = _app(admin, "Export Kft")
    me = admin.get("/v1/players/me", headers=_as(key, "user-42")).json()["id"]
    game = admin.post("/v1/games", json={"code": EASY_CODE}, headers=_as(key, "user-42")).json()["id"]
    assert admin.post(f"/v1/games/{game}/moves", json=WINNING[0], headers=_as(key, "user-42")).status_code == 200
    exported = admin.get("/v1/players/me/export", headers=_as(key, "user-42")).json()
    assert exported["player"]["external_id"] == "user-42"
    assert exported["player"]["app"]["name"] == "Export Kft"
    assert [g["id"] for g in exported["games"]] == [game]
    assert admin.delete("/v1/players/me", headers=_as(key, "user-42")).status_code == 204
    assert list(redis_client.scan_iter(match=f"pyr:{{p:{me}}}:*")) in ([], [f"pyr:{{p:{me}}}:erased".encode()])
    assert list(redis_client.scan_iter(match="pyr:{app:*}:player:*")) == []
    fresh = admin.get("/v1/players/me", headers=_as(key, "user-42")).json()["id"]
    assert fresh != me
    assert admin.get(f"/v1/games/{game}", headers=_as(key, "user-42")).status_code == 404


def test_an_app_player_plays_a_daily_challenge_and_ranks(admin: Any, redis_client: redis.Redis) -> None:
    key = _app(admin)
    user = _as(key, "challenger")
    admin.patch("/v1/players/me", json={"name": "Appos"}, headers=user)
    challenge = admin.get("/v1/challenges/current").json()["id"]
    game = admin.post("/v1/games", json={"challenge": challenge}, headers=user)
    assert game.status_code == 201, game.text
    _win(admin, user, game.json(), _deal(redis_client, challenge))
    board = admin.get(f"/v1/challenges/{challenge}/leaderboard").json()
    assert [e["name"] for e in board["entries"]] == ["Appos"]
    assert admin.get(f"/v1/challenges/{challenge}", headers=user).json()["you"]["rank"] == 1
    session = _bearer(_session(admin, key, "challenger")["token"])
    assert admin.get(f"/v1/challenges/{challenge}", headers=session).json()["you"]["rank"] == 1
    assert admin.get(f"/v1/challenges/{challenge}", headers=_as(key, "stranger")).json()["you"] is None
    again = admin.post("/v1/games", json={"challenge": challenge}, headers=user)
    _problem(again, 409, "challenge_already_played")


def test_an_app_has_its_own_limits_and_names_its_users_addresses(settings: Settings) -> None:
    """One address may create 2 players a minute; the app, for its users it names no address of, 50 (or what
    createApp set); a user it names counts as one address does (the app's bucket of that address, see
    test_attributed_quotas); a player token's Pyramide-Client-IP is ignored."""
    for client in _client(
        settings, limits={"per_minute": {"players": 2, "address_games": 2}, "app_per_minute": {"players": 50}}
    ):
        key = _app(client)
        for n in range(6):  # three times one address's allowance, all from the app's one server
            assert client.get("/v1/players/me", headers=_as(key, f"bulk-{n}")).status_code == 200
        person = {"Pyramide-Client-IP": "203.0.113.7"}
        for n in range(2):
            assert client.get("/v1/players/me", headers=_as(key, f"p-{n}", **person)).status_code == 200
        _problem(client.get("/v1/players/me", headers=_as(key, "p-2", **person)), 429, "rate_limited")
        other = {"Pyramide-Client-IP": "2001:db8::7"}
        assert client.get("/v1/players/me", headers=_as(key, "p-2", **other)).status_code == 200
        _problem(
            client.get("/v1/players/me", headers=_as(key, "p-3", **{"Pyramide-Client-IP": "x"})),
            400,
            "invalid_client_ip",
        )
        forged = "pyrapp_" + "0" * 32 + "_" + "A" * 43
        _problem(
            client.get("/v1/players/me", headers=_as(forged, "p", **{"Pyramide-Client-IP": "x"})), 401, "unauthorized"
        )

        small = _app(client, "Kicsi", limits={"players": 1})
        assert client.get("/v1/players/me", headers=_as(small, "a")).status_code == 200
        _problem(client.get("/v1/players/me", headers=_as(small, "b")), 429, "rate_limited")
        fresh = {"Pyramide-Client-IP": "203.0.113.50"}  # a new address does not lift the app's own limit
        _problem(client.get("/v1/players/me", headers=_as(small, "c", **fresh)), 429, "rate_limited")

        player = new_player(client)
        for n in range(2):
            spoof = {**player, "Pyramide-Client-IP": f"198.51.100.{n}"}
            assert client.post("/v1/games", json={}, headers=spoof).status_code == 201
        spoof = {**player, "Pyramide-Client-IP": "198.51.100.9"}
        _problem(client.post("/v1/games", json={}, headers=spoof), 429, "rate_limited")
        for n in range(4):  # the app's players' games count against the app's own, not the server's address
            assert client.post("/v1/games", json={}, headers=_as(key, f"bulk-{n}")).status_code == 201
        assert client.post("/v1/players", json={}, headers={"Pyramide-Client-IP": "192.0.2.1"}).status_code == 201
        _problem(client.post("/v1/players", json={}, headers={"Pyramide-Client-IP": "192.0.2.2"}), 429, "rate_limited")


@pytest.mark.slow
def test_a_revoked_apps_players_and_sessions_are_refused_at_once_by_both_workers(tmp_path: Path) -> None:
    env = {"PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY}
    with serving(tmp_path / "data", tmp_path, "--workers", "2", env=env) as served:
        with httpx.Client(base_url=served.url, timeout=10) as client:
            key = _app(client)
            session = _session(client, key, "w")["token"]
            app_id = client.get("/v1/admin/apps", headers=OPERATOR).json()["entries"][0]["id"]
            game = client.post("/v1/games", json={"code": EASY_CODE}, headers=_as(key, "w")).json()["id"]
        moves = f"{served.url}/v1/games/{game}/moves"
        draw_undo = [{"type": "draw"}, {"type": "undo"}]
        for _ in range(16):  # a new connection each time: either worker answers
            for headers, move in zip((_as(key, "w"), _bearer(session)), draw_undo, strict=True):
                answer = httpx.get(f"{served.url}/v1/players/me", headers=headers, timeout=10)
                assert answer.status_code == 200, answer.text
                assert httpx.post(moves, json=move, headers=headers, timeout=10).status_code == 200
        assert httpx.delete(f"{served.url}/v1/admin/apps/{app_id}", headers=OPERATOR, timeout=10).status_code == 204
        statuses = set()
        for _ in range(16):
            for headers, move in zip((_as(key, "w"), _bearer(session)), draw_undo, strict=True):
                statuses.add(httpx.get(f"{served.url}/v1/players/me", headers=headers, timeout=10).status_code)
                statuses.add(httpx.post(moves, json=move, headers=headers, timeout=10).status_code)
        assert statuses == {401}


def test_an_apps_moves_count_against_its_own_allowance_or_the_named_users(settings: Settings) -> None:
    """One address may make 3 moves a minute; the app's users it names no address of share the app's 50; a user it
    names counts as one address (the app's bucket of it); a player's Pyramide-Client-IP does not move it to another
    bucket."""
    for client in _client(
        settings, limits={"per_minute": {"address_moves": 3}, "app_per_minute": {"address_moves": 50}}
    ):
        key = _app(client)
        game = client.post("/v1/games", json={"code": EASY_CODE}, headers=_as(key, "mover")).json()["id"]
        draws = [{"type": "draw"}, {"type": "undo"}] * 4
        for move in draws:  # 8 moves: past one address's 3, from the app's one server
            assert client.post(f"/v1/games/{game}/moves", json=move, headers=_as(key, "mover")).status_code == 200
        person = _as(key, "mover", **{"Pyramide-Client-IP": "203.0.113.9"})
        for move in draws[:3]:
            assert client.post(f"/v1/games/{game}/moves", json=move, headers=person).status_code == 200
        _problem(client.post(f"/v1/games/{game}/moves", json=draws[3], headers=person), 429, "rate_limited")

        small = _app(client, "Kicsi", limits={"address_moves": 3})
        game = client.post("/v1/games", json={"code": EASY_CODE}, headers=_as(small, "m")).json()["id"]
        for n, move in enumerate(draws[:3]):  # a fresh address named on every move: the app's own 3 still hold
            named = _as(small, "m", **{"Pyramide-Client-IP": f"203.0.113.{100 + n}"})
            assert client.post(f"/v1/games/{game}/moves", json=move, headers=named).status_code == 200
        named = _as(small, "m", **{"Pyramide-Client-IP": "203.0.113.200"})
        _problem(client.post(f"/v1/games/{game}/moves", json=draws[3], headers=named), 429, "rate_limited")

        player = new_player(client)
        own = client.post("/v1/games", json={"code": EASY_CODE}, headers=player).json()["id"]
        for n, move in enumerate(draws[:3]):
            spoof = {**player, "Pyramide-Client-IP": f"198.51.100.{n}"}
            assert client.post(f"/v1/games/{own}/moves", json=move, headers=spoof).status_code == 200
        spoof = {**player, "Pyramide-Client-IP": "198.51.100.77"}
        _problem(client.post(f"/v1/games/{own}/moves", json=draws[3], headers=spoof), 429, "rate_limited")


def test_an_app_moderates_its_own_players_only_and_a_ban_holds_for_its_key_and_sessions(admin: Any) -> None:
    """An app with the ``moderation`` scope bans and unbans its own user's player (refused then on every route it
    uses for that user: its key with ``Pyramide-Player``, and the user's session), never another app's."""
    ours = _app(admin, "Ours", ("players", "moderation"))
    theirs = _app(admin, "Theirs", ("players", "moderation"))
    game = admin.post("/v1/games", json={"code": EASY_CODE}, headers=_as(ours, "cheater")).json()["id"]
    session = _bearer(_session(admin, ours, "cheater")["token"])
    player = admin.get("/v1/players/me", headers=_as(ours, "cheater")).json()["id"]
    other = admin.get("/v1/players/me", headers=_as(theirs, "cheater")).json()["id"]
    _problem(
        admin.post(f"/v1/admin/players/{other}/ban", json={"reason": "x"}, headers=_bearer(ours)), 403, "forbidden"
    )
    banned = admin.post(f"/v1/admin/players/{player}/ban", json={"reason": "bot"}, headers=_bearer(ours))
    assert banned.status_code == 200, banned.text
    for headers in (_as(ours, "cheater"), session):
        _problem(admin.get("/v1/players/me", headers=headers), 403, "player_banned")
        _problem(admin.post(f"/v1/games/{game}/moves", json=WINNING[0], headers=headers), 403, "player_banned")
    assert admin.get("/v1/players/me", headers=_as(theirs, "cheater")).status_code == 200  # the other app's user
    assert admin.post(f"/v1/admin/players/{player}/unban", headers=_bearer(ours)).status_code == 200
    for headers in (_as(ours, "cheater"), session):
        assert admin.get("/v1/players/me", headers=headers).status_code == 200
    assert admin.post(f"/v1/games/{game}/moves", json=WINNING[0], headers=session).status_code == 200
    actions = [(e["actor"], e["action"]) for e in admin.get("/v1/admin/audit", headers=_bearer(ours)).json()["entries"]]
    assert [a for _, a in actions] == ["unban", "ban"] and all(actor.startswith("app:") for actor, _ in actions)


@pytest.mark.parametrize("external_id", ["schemas", "metrics"])
def test_an_external_id_that_looks_like_a_public_path_is_still_authenticated(admin: Any, external_id: str) -> None:
    """The public paths (``/schema``, ``/metrics``) are skipped by the authentication only where the path starts
    with them: a session route naming a user ``schemas`` once answered 500 (no one authenticated it)."""
    url = f"/v1/apps/me/players/{external_id}/sessions"
    _problem(admin.post(url), 401, "unauthorized")
    _problem(admin.post(url, headers=new_player(admin)), 401, "unauthorized")
    assert admin.post(url, headers=_bearer(_app(admin))).status_code == 201


def test_the_operator_erases_a_revoked_apps_user_that_no_route_reaches_any_more(
    admin: Any, redis_client: redis.Redis
) -> None:
    """Once its app is revoked, an app user's data (kept for good after a win) is out of reach of the user's own
    routes: the operator erases it on the user's request, and it is audited; an app's key may not."""
    app_id = admin.post("/v1/admin/apps", json={"name": "Gone", "scopes": ["players"]}, headers=OPERATOR).json()
    key, user = app_id["key"], _as(app_id["key"], "person")
    game = admin.post("/v1/games", json={"code": EASY_CODE}, headers=user).json()["id"]
    for move in WINNING:
        assert admin.post(f"/v1/games/{game}/moves", json=move, headers=user).status_code == 200
    session = _bearer(_session(admin, key, "person")["token"])
    player = admin.get("/v1/players/me", headers=user).json()["id"]
    assert admin.delete(f"/v1/admin/apps/{app_id['id']}", headers=OPERATOR).status_code == 204
    assert admin.delete("/v1/players/me", headers=session).status_code == 401
    other = _app(admin, "Other", ("players", "moderation"))
    _problem(admin.delete(f"/v1/admin/players/{player}", headers=_bearer(other)), 403, "forbidden")
    erased = admin.delete(f"/v1/admin/players/{player}", params={"reason": "asked by mail"}, headers=OPERATOR)
    assert erased.status_code == 204, erased.text
    assert [k for k in redis_client.scan_iter(match=f"pyr:{{p:{player}}}:*") if not k.endswith(b":erased")] == []
    bindings = [k for k in redis_client.scan_iter(match="pyr:{app:*") if redis_client.type(k) == b"string"]
    assert not any(player.encode() in (redis_client.get(k) or b"") for k in bindings), "its binding went too"
    _problem(admin.delete(f"/v1/admin/players/{player}", headers=OPERATOR), 404, "not_found")
    entry = admin.get("/v1/admin/audit", headers=OPERATOR).json()["entries"][0]
    assert (entry["action"], entry["target"], entry["reason"]) == ("erase", "erased-player", "asked by mail")
    assert player not in str(admin.get("/v1/admin/audit", headers=OPERATOR).json()), "its id left the log too"


def _live(settings: Settings, **changes: Any) -> Iterator[httpx.Client]:
    """A real uvicorn server on loopback (in a thread), the operator key set, and a client of it."""
    app = create_app(settings.but(secrets={"operator_key": OPERATOR_KEY}).but(**changes))
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def test_a_banned_app_user_stays_banned_after_erasing_itself_until_a_moderator_lifts_it(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """A banned user erases itself through its session (erasure stays open to banned players): the same (app,
    external id) is still 403 ``player_banned`` (no fresh player, no second attempt at the challenge), and all that
    is kept is the ban under the external id's hash. The operator's unban of the erased player's id lifts it
    (audited, without the id); only then does the user get a fresh player, which may attempt the challenge again
    (the documented limit)."""
    for client in _live(settings):
        key = _app(client, "Klub", ("players", "moderation"))
        other = _app(client, "Más", ("players", "moderation"))
        session = _bearer(_session(client, key, "alice")["token"])
        challenge = client.get("/v1/challenges/current").json()["id"]
        assert client.post("/v1/games", json={"challenge": challenge}, headers=session).status_code == 201
        player = client.get("/v1/players/me", headers=session).json()["id"]
        ban = client.post(f"/v1/admin/players/{player}/ban", json={"reason": "bot"}, headers=OPERATOR)
        assert ban.status_code == 200, ban.text
        assert client.delete("/v1/players/me", headers=session).status_code == 204
        _problem(client.get("/v1/players/me", headers=_as(key, "alice")), 403, "player_banned")
        second = client.post("/v1/games", json={"challenge": challenge}, headers=_as(key, "alice"))
        _problem(second, 403, "player_banned")
        url = "/v1/apps/me/players/alice/sessions"
        _problem(client.post(url, headers=_bearer(key)), 403, "player_banned")
        assert client.get("/v1/players/me", headers=_as(other, "alice")).status_code == 200  # another app's user
        kept = {k.decode(): redis_client.dump(k) or b"" for k in redis_client.scan_iter(match="pyr:{app:*}:*")}
        outbox = [k for k in kept if k.endswith(":outbox")]  # player.erased, for the app, until it is delivered
        assert not [k for k, v in kept.items() if k not in outbox and (player.encode() in v or b"alice" in v)]
        assert not [k for k in kept if player in k]
        for app in (key, other):  # who imposed the ban went with the player: only the operator lifts it
            _problem(client.post(f"/v1/admin/players/{player}/unban", json={}, headers=_bearer(app)), 403, "forbidden")
        lifted = client.post(f"/v1/admin/players/{player}/unban", json={"reason": "appeal"}, headers=OPERATOR)
        assert lifted.status_code == 200 and lifted.json()["banned"] is False, lifted.text
        audit = client.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]
        assert (audit[0]["action"], audit[0]["target"], audit[0]["reason"]) == ("unban", "erased-player", "appeal")
        assert player not in str(audit), "the erasure took the player's id out of the log (the ban's entry too)"
        fresh = client.get("/v1/players/me", headers=_as(key, "alice"))
        assert fresh.status_code == 200 and fresh.json()["id"] != player
        again = client.post("/v1/games", json={"challenge": challenge}, headers=_as(key, "alice"))
        assert again.status_code == 201, again.text  # one attempt per player: see docs/fair-play.md


def test_a_user_keeps_at_most_ten_sessions_and_issuing_counts_against_the_apps_limits(settings: Settings) -> None:
    """Every session issued counts against the app's own ``players`` rate limit (a new user's player also takes
    one of its daily ``quota_players``), and a player has at most 10 live sessions: the 11th ends the oldest."""
    for client in _live(settings):
        slow = _app(client, "Lassú", limits={"players": 1})
        _session(client, slow, "u")
        _problem(client.post("/v1/apps/me/players/u/sessions", headers=_bearer(slow)), 429, "rate_limited")
        few = _app(client, "Kevés", limits={"quota_players": 1})
        issued = [_session(client, few, "u")["token"] for _ in range(12)]
        _problem(client.post("/v1/apps/me/players/v/sessions", headers=_bearer(few)), 429, "quota_exceeded")
        working = [client.get("/v1/players/me", headers=_bearer(t)).status_code for t in issued]
        assert working == [401, 401] + [200] * 10, working


@pytest.mark.parametrize("external_id", ["a%b", "a?b", "a#b", "x" * 128])
def test_every_valid_external_id_can_get_a_session(admin: Any, external_id: str) -> None:
    """Pyramide-Player takes 1-128 visible ASCII characters but ``/``: the session route reaches the same user."""
    key = _app(admin)
    player = admin.get("/v1/players/me", headers=_as(key, external_id)).json()["id"]
    issued = admin.post(f"/v1/apps/me/players/{quote(external_id, safe='')}/sessions", headers=_bearer(key))
    assert issued.status_code == 201, issued.text
    assert admin.get("/v1/players/me", headers=_bearer(issued.json()["token"])).json()["id"] == player


def test_an_external_id_with_a_slash_is_refused_everywhere(admin: Any) -> None:
    """A ``/`` cannot travel in the session route's path segment, so no route accepts it: an app cannot create a
    user it could never issue a session for."""
    key = _app(admin)
    refused = admin.get("/v1/players/me", headers=_as(key, "user/1", **{"Accept-Language": "en"}))
    _problem(refused, 400, "invalid_player_header")
    assert "/" in refused.json()["detail"] or "/" in refused.json()["title"], refused.text
    _problem(admin.get("/v1/players/me", headers=_as(key, "user/1")), 400, "invalid_player_header")
    issued = admin.post(f"/v1/apps/me/players/{quote('user/1', safe='')}/sessions", headers=_bearer(key))
    _problem(issued, 404, "not_found")  # the router splits the decoded path; no such user can exist anyway
