"""Issue 45: a hint asked again on the same position is the same hint. A player pressing Hint twice (or a client
retrying) must not be charged twice: the game's record, the wins list, the boards, the export and the statistics
count one hint per version of the game, over HTTP against a real server on a real Redis."""

from __future__ import annotations

from typing import Any

import httpx

from pyramide.engine.moves import parse_record
from pyramide.service.games.commands_controller import move_body
from tests.support.deals import EASY_CODE


def _hint(http: httpx.Client, game: str) -> dict[str, Any]:
    response = http.get(f"/v1/games/{game}/hint")
    assert response.status_code == 200, response.text
    hint: dict[str, Any] = response.json()
    return hint


def _move(http: httpx.Client, game: str, body: dict[str, Any]) -> None:
    response = http.post(f"/v1/games/{game}/moves", json=body)
    assert response.status_code == 200, response.text


def _hints_used(http: httpx.Client) -> int:
    used: int = http.get("/v1/players/me/stats").json()["hints_used"]
    return used


def _exported_hints(http: httpx.Client, game: str) -> int:
    (exported,) = [g for g in http.get("/v1/players/me/export").json()["games"] if g["id"] == game]
    hints: int = exported["hints"]
    return hints


def test_a_hint_asked_again_on_the_same_position_counts_once(live_url: str) -> None:
    with httpx.Client(base_url=live_url, timeout=30) as http:
        token = http.post("/v1/players").json()["token"]
        http.headers["Authorization"] = f"Bearer {token}"
        game = http.post("/v1/games", json={"code": EASY_CODE}).json()["id"]

        first, again = _hint(http, game), _hint(http, game)
        assert first["line"] == again["line"]  # the same position, the same answer: one hint
        assert (_hints_used(http), _exported_hints(http, game)) == (1, 1)

        _move(http, game, {"type": "draw"})  # a new position (and an undo back is a new version too)
        _move(http, game, {"type": "undo"})
        line = _hint(http, game)["line"]
        _hint(http, game)
        assert (_hints_used(http), _exported_hints(http, game)) == (2, 2)

        for move in parse_record(" ".join(line)):  # the bot plays the solved line the analysis gave
            _move(http, game, move_body(move))
        (entry,) = http.get("/v1/players/me/wins").json()["entries"]
        assert entry["hints"] == 2
        assert http.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"][0]["hints"] == 2
        assert _hints_used(http) == 2
