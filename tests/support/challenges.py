"""Challenge deals and wins: a day's challenge deal and a game played to its win."""

from __future__ import annotations

import json
from typing import Any

import httpx
import redis

from pyramide.engine import DealCode, Game
from pyramide.service.games.commands_controller import move_body
from pyramide.solver import solve
from tests.support.audit import _me


def _deal(redis_client: redis.Redis, challenge: str) -> DealCode:
    """The challenge's deal as the server keeps it (what no client may learn before the close)."""
    kept = redis_client.get(f"pyr:{{c:{challenge}}}:deal")
    assert kept is not None
    return DealCode.parse(json.loads(kept)["code"])


def _win(client: httpx.Client, headers: dict[str, str], game: dict[str, Any], code: DealCode) -> dict[str, Any]:
    """Play the solver's line to a win, through the API."""
    analysis = solve(Game(code))
    assert analysis.winnable is True
    snapshot = game
    for move in analysis.line:
        response = client.post(f"/v1/games/{game['id']}/moves", json=move_body(move), headers=headers)
        assert response.status_code == 200, response.text
        snapshot = response.json()
    assert snapshot["status"] == "won"
    return snapshot


def held_challenge_win(
    client: Any, redis_client: redis.Redis, headers: dict[str, str], operator: dict[str, str]
) -> dict[str, Any]:
    """Today's challenge won at the solver's speed by ``headers``' player, so held for review: the review, as the
    operator (``operator``'s headers) lists it."""
    challenge = client.get("/v1/challenges/current").json()["id"]
    game = client.post("/v1/games", json={"challenge": challenge}, headers=headers)
    assert game.status_code == 201, game.text
    _win(client, headers, game.json(), _deal(redis_client, challenge))
    reviews: list[dict[str, Any]] = client.get("/v1/admin/reviews", headers=operator).json()["entries"]
    (review,) = [r for r in reviews if r["player"] == _me(client, headers)]
    return review
