"""Identity on the verified board (issue 57, items 1, 4 and 7), played through HTTP.

Against one real ``pyramide serve`` for the module (the test's fake clock, ``PYRAMIDE_CHALLENGE_PLAYERS=app``, the
default floor of 150 ms, an operator key): an anonymous throwaway can no longer start the challenge to reveal its
stock for an app player, while an app player's honest human-paced win ranks; an app with ``moderation`` may not
accept its own bot's held win (the operator does); an app cannot get a session for a banned user. In process: a
challenge game an anonymous player started before the setting changed shows nothing until the close.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

import httpx
import pytest
import redis
from litestar.testing import TestClient

from pyramide.engine import DealCode, Game, parse_move
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings, as_environment
from pyramide.solver import solve
from tests.support.challenges import _deal
from tests.support.clock import WEDNESDAY_10H, clock_env, past_the_close
from tests.support.limits import TEST_LIMITS
from tests.support.players import new_player
from tests.support.serving import Served, serving

OPERATOR_KEY: Final = "identity-tests-operator-key-0123456789abcdef"
OPERATOR: Final = {"Authorization": f"Bearer {OPERATOR_KEY}"}
EN: Final = {"Accept-Language": "en"}


@dataclass(frozen=True)
class Server:
    served: Served
    clock: FakeClock
    challenge: str
    """Today's 2S challenge."""
    line: list[str]
    """Its deal's winning line (read from the server's Redis: no client can learn it before the close)."""

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.served.url, timeout=30)

    def redis(self) -> redis.Redis:
        return redis.Redis(unix_socket_path=str(self.served.data_dir / "redis.sock"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("identity")
    clock = FakeClock(WEDNESDAY_10H, tmp / "clock")
    env = {
        **as_environment(TEST_LIMITS),
        "PYRAMIDE_MIN_MOVE_MS": "150",
        "PYRAMIDE_CHALLENGE_PLAYERS": "app",
        "PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY,
        "PYRAMIDE_WORKERS": "1",
        **clock_env(clock),
    }
    with serving(tmp / "data", tmp, env=env) as served, httpx.Client(base_url=served.url, timeout=30) as http:
        challenge = http.get("/v1/challenges/current?rules=2S").json()["id"]
        with redis.Redis(unix_socket_path=str(served.data_dir / "redis.sock")) as client:
            code = _deal(client, challenge)
        yield Server(served, clock, challenge, _line(code))


def _line(code: DealCode) -> list[str]:
    analysis = solve(Game(code))
    assert analysis.winnable is True
    return [move.notation() for move in analysis.line]


def _app(http: httpx.Client, name: str, *scopes: str) -> str:
    response = http.post("/v1/admin/apps", json={"name": name, "scopes": list(scopes)}, headers=OPERATOR)
    assert response.status_code == 201, response.text
    key: str = response.json()["key"]
    return key


def _as(key: str, external_id: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Pyramide-Player": external_id}


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _problem(response: httpx.Response | Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code, response.text


def _play(server: Server, http: httpx.Client, headers: dict[str, str], pause_s: float) -> dict[str, Any]:
    """Start the challenge and play its line to the win, the server's clock moving ``pause_s`` before each move
    after the first. The last snapshot."""
    game = http.post("/v1/games", json={"challenge": server.challenge}, headers=headers)
    assert game.status_code == 201, game.text
    snapshot: dict[str, Any] = game.json()
    for index, notation in enumerate(server.line):
        if index:
            server.clock.advance(pause_s)
        moved = http.post(f"/v1/games/{game.json()['id']}/moves", json=move_body(parse_move(notation)), headers=headers)
        assert moved.status_code == 200, moved.text
        snapshot = moved.json()
    assert snapshot["status"] == "won", snapshot
    return snapshot


def _board(http: httpx.Client, challenge: str) -> list[tuple[str, str]]:
    response = http.get(f"/v1/challenges/{challenge}/leaderboard")
    assert response.status_code == 200, response.text
    return [(e["name"], e["identity"]) for e in response.json()["entries"]]


def test_no_anonymous_player_reveals_the_challenge_where_app_players_are_required(server: Server) -> None:
    """The two-player attack's first half, under ``app``: the throwaway's ``createGame`` for the challenge is 403
    ``app_player_required`` (it started, drew the whole stock and handed the layout to a solver before), and it
    takes no part; an app player's challenge game works as ever, and its human-paced win ranks at once."""
    with server.client() as http:
        throwaway = {"Authorization": f"Bearer {http.post('/v1/players', json={}).json()['token']}"}
        players_before = http.get(f"/v1/challenges/{server.challenge}").json()["players"]
        refused = http.post("/v1/games", json={"challenge": server.challenge}, headers={**throwaway, **EN})
        _problem(refused, 403, "app_player_required")
        assert "app" in refused.json()["title"], refused.text
        hungarian = http.post("/v1/games", json={"challenge": server.challenge}, headers=throwaway)
        _problem(hungarian, 403, "app_player_required")
        assert hungarian.json()["title"] != refused.json()["title"]
        seen = http.get(f"/v1/challenges/{server.challenge}", headers=throwaway).json()
        assert seen["you"] is None and seen["players"] == players_before, "no attempt was written"
        ordinary = http.post("/v1/games", json={}, headers=throwaway)
        assert ordinary.status_code == 201, "an anonymous player's other games are as ever"

        key = _app(http, "Honest Club", "players")
        honest = _as(key, "honest-1")
        assert http.patch("/v1/players/me", json={"name": "Honest"}, headers=honest).status_code == 200
        won = _play(server, http, honest, pause_s=1.0)
        assert http.get(f"/v1/games/{won['id']}", headers=honest).status_code == 200
        assert ("Honest", "app") in _board(http, server.challenge), "an app player's human-paced win ranks"


def test_an_app_may_not_accept_its_own_players_held_win(server: Server) -> None:
    """The self-approving app: its user's win at machine speed is held; the app's accept (scope ``moderation``) is
    403 ``operator_only`` and writes nothing (no board entry, no audit entry, the review still pending); the
    operator's accept enters it."""
    with server.client() as http:
        key = _app(http, "Bot Club", "players", "moderation")
        bot = _as(key, "bot-1")
        assert http.patch("/v1/players/me", json={"name": "Own bot"}, headers=bot).status_code == 200
        _play(server, http, bot, pause_s=0.0)
        reviews = http.get("/v1/admin/reviews", headers=_bearer(key)).json()["entries"]
        (held,) = [r for r in reviews if r["name"] == "Own bot"]
        assert held["status"] == "pending"
        audit_before = http.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]

        url = f"/v1/admin/reviews/{held['id']}/accept"
        refused = http.post(url, json={"reason": "mine"}, headers={**_bearer(key), **EN})
        _problem(refused, 403, "operator_only")
        assert ("Own bot", "app") not in _board(http, server.challenge)
        assert http.get("/v1/admin/audit", headers=OPERATOR).json()["entries"] == audit_before, "nothing audited"
        listed = http.get("/v1/admin/reviews", headers=OPERATOR).json()["entries"]
        (pending,) = [r for r in listed if r["id"] == held["id"]]
        assert pending["status"] == "pending" and pending["decided_by"] is None

        accepted = http.post(url, json={"reason": "looked at it"}, headers=OPERATOR)
        assert accepted.status_code == 200 and accepted.json()["decided_by"] == "operator", accepted.text
        assert ("Own bot", "app") in _board(http, server.challenge)
        audit = http.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]
        assert (audit[0]["action"], audit[0]["actor"]) == ("accept_review", "operator")


def test_a_banned_user_gets_no_session(server: Server) -> None:
    """``createSession`` for a banned user: 403 ``player_banned``, and no session is kept in Redis."""
    with server.client() as http:
        key = _app(http, "Session Club", "players", "moderation")
        player = http.get("/v1/players/me", headers=_as(key, "banned-1")).json()["id"]
        ban = http.post(f"/v1/admin/players/{player}/ban", json={"reason": "bot"}, headers=_bearer(key))
        assert ban.status_code == 200, ban.text
        refused = http.post("/v1/apps/me/players/banned-1/sessions", headers=_bearer(key))
        _problem(refused, 403, "player_banned")
        with server.redis() as client:
            assert list(client.scan_iter(match=f"pyr:{{p:{player}}}:sessions")) == [], "a session was kept"
        assert http.post("/v1/apps/me/players/other-1/sessions", headers=_bearer(key)).status_code == 201


CHALLENGE_ROUTES: Final = (
    ("GET", ""),
    ("GET", "/events"),
    ("GET", "/record"),
    ("GET", "/positions/0"),
    ("GET", "/hint"),
    ("GET", "/review"),
    ("POST", "/moves"),
    ("POST", "/taps"),
    ("POST", "/abandon"),
)
"""Every route of a game that shows its cards (or would work on them)."""


def test_an_anonymous_challenge_game_from_before_the_setting_is_withheld_until_the_close(
    settings: Settings, clock: FakeClock
) -> None:
    """A game an anonymous player started under ``any`` (and drew from): once the service runs with ``app``, every
    route of that game is 403 ``app_player_required`` while the challenge is open (``any`` answered them all);
    after the close, when the deal's code is public, the game reads as before."""
    with TestClient(create_app(settings, clock=clock), raise_server_exceptions=False) as before:
        anonymous = new_player(before)
        challenge = before.get("/v1/challenges/current").json()["id"]
        game = before.post("/v1/games", json={"challenge": challenge}, headers=anonymous)
        assert game.status_code == 201, game.text
        game_id = game.json()["id"]
        assert before.post(f"/v1/games/{game_id}/moves", json={"type": "draw"}, headers=anonymous).status_code == 200
        assert before.get(f"/v1/games/{game_id}/record", headers=anonymous).status_code == 200
    app_only = settings.but(challenges={"players": "app"})
    with TestClient(create_app(app_only, clock=clock), raise_server_exceptions=False) as after:
        for method, path in CHALLENGE_ROUTES:
            body = {"type": "draw"} if path == "/moves" else {"target": "stock"} if path == "/taps" else None
            response = after.request(method, f"/v1/games/{game_id}{path}", json=body, headers=anonymous)
            _problem(response, 403, "app_player_required")
        listed = after.get("/v1/players/me/games", headers=anonymous).json()["entries"]
        assert [g["code"] for g in listed] == [None], "the list shows no card of it"
        past_the_close(clock)
        shown = after.get(f"/v1/games/{game_id}", headers=anonymous)
        assert shown.status_code == 200 and shown.json()["code"] is not None, shown.text
        assert after.get(f"/v1/games/{game_id}/record", headers=anonymous).json()["moves"] == ["D"]
