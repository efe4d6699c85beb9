"""The emitted events' tests' operator, app, app player and challenge win, shared with the delivery tests."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import httpx
import redis

from pyramide.engine import DealCode, Game
from pyramide.service.accounts.apps import key_app_id
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra import keyspace
from pyramide.solver import solve

OPERATOR_KEY = "events-test-operator-key-0123456789abcdef"


OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}


def _app(http: httpx.Client, scopes: tuple[str, ...] = ("players",)) -> tuple[str, str]:
    """A new app's key and id."""
    response = http.post("/v1/admin/apps", json={"name": "Kártya Klub", "scopes": list(scopes)}, headers=OPERATOR)
    assert response.status_code == 201, response.text
    key: str = response.json()["key"]
    return key, str(key_app_id(key))


def _as(key: str, external_id: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Pyramide-Player": external_id}


def _app_player(http: httpx.Client, key: str, external_id: str) -> str:
    me = http.get("/v1/players/me", headers=_as(key, external_id))
    assert me.status_code == 200, me.text
    player: str = me.json()["id"]
    return player


def _win_the_challenge(http: httpx.Client, headers: dict[str, str], challenge: str, store: redis.Redis) -> str:
    """The bot's way: the challenge's deal from the server's store, solved, and its line played through the API; the
    deal's code (sealed until the close)."""
    kept = store.get(keyspace.challenge_deal(challenge))
    assert kept is not None
    code = DealCode.parse(json.loads(kept)["code"])
    game = http.post("/v1/games", json={"challenge": challenge}, headers=headers)
    assert game.status_code == 201, game.text
    analysis = solve(Game(code))
    assert analysis.winnable is True
    for move in analysis.line:
        played = http.post(f"/v1/games/{game.json()['id']}/moves", json=move_body(move), headers=headers)
        assert played.status_code == 200, played.text
    assert played.json()["status"] == "won"
    return str(code)


def challenge_close_ms(challenge: dict[str, Any]) -> float:
    """The challenge's close, in ms, as its description gives it."""
    return datetime.fromisoformat(challenge["closes_at"].replace("Z", "+00:00")).timestamp() * 1000
