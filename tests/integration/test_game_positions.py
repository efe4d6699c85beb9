"""A game's positions for a replay (getGamePosition), through HTTP against the real (embedded) Redis: each step is
the board the game showed after that many operations, computed by the service's engine from the record."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.games.commands_controller import move_body
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.players import new_player

Client = TestClient[Any]
BOARD = ("status", "score", "moves", "pyramid", "waste", "stock", "recycles")


def _board(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {key: snapshot[key] for key in BOARD}


def _won_game(client: Client, player: dict[str, str]) -> tuple[str, list[dict[str, Any]]]:
    """A game drawn from, undone, then cleared: its id and the snapshot after each operation (the deal first)."""
    layout = DealCode.for_layout(easy_game().layout).to_json()
    game = client.post("/v1/games", json={"layout": layout}, headers=player).json()
    seen = [game]
    url = f"/v1/games/{game['id']}/moves"
    for move in [{"type": "draw"}, {"type": "draw"}, {"type": "undo"}] + [
        move_body(m) for m in parse_record(EASY_CLEARING)
    ]:
        response = client.post(url, json=move, headers=player)
        assert response.status_code == 200, response.text
        seen.append(response.json())
    assert seen[-1]["status"] == "won"
    return game["id"], seen


def test_each_step_is_the_board_the_game_showed_then(client: Client, player: dict[str, str]) -> None:
    game_id, seen = _won_game(client, player)
    record = client.get(f"/v1/games/{game_id}/record", headers=player).json()["moves"]
    assert len(record) == len(seen) - 1
    for step, snapshot in enumerate(seen):
        position = client.get(f"/v1/games/{game_id}/positions/{step}", headers=player)
        assert position.status_code == 200, position.text
        body = position.json()
        assert _board(body) == _board(snapshot), step
        assert (body["step"], body["steps"]) == (step, len(record))
        assert body["operation"] == (record[step - 1] if step else None)
    assert body["status"] == "won" and body["score"] == 280


def test_a_step_past_the_end_is_a_localised_404(client: Client, player: dict[str, str]) -> None:
    game_id, seen = _won_game(client, player)
    for step in (str(len(seen)), "-1", "x", "1e3", "9999999"):
        refused = client.get(f"/v1/games/{game_id}/positions/{step}", headers=player)
        assert refused.status_code == 404, step
        assert refused.headers["content-type"].startswith("application/problem+json")
        assert refused.json()["code"] == "step_not_found"
        assert refused.json()["title"].startswith("Ebben a játszmában nincs ilyen lépés")
    english = client.get(f"/v1/games/{game_id}/positions/99", headers={**player, "Accept-Language": "en"})
    assert english.json()["title"].startswith("This game has no such step")


def test_only_the_owner_replays_a_game_and_an_unchanged_step_is_304(client: Client, player: dict[str, str]) -> None:
    game_id, _ = _won_game(client, player)
    other = client.get(f"/v1/games/{game_id}/positions/0", headers=new_player(client))
    assert other.status_code == 404 and other.json()["code"] == "game_not_found"
    first = client.get(f"/v1/games/{game_id}/positions/3", headers=player)
    again = client.get(f"/v1/games/{game_id}/positions/3", headers={**player, "If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
