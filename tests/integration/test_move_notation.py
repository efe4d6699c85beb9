"""Moves in the notation the service prints (issue 59): ``legal_moves``, hints and records list moves as ``"2S+JH"``
or ``"D"``, but ``playMove`` took only JSON objects, so a client had to convert (the one example imported an internal
module to do it). A string in that notation is now a move body as good as the object."""

from __future__ import annotations

from typing import Any

from litestar.testing import TestClient

from tests.support.deals import EASY_CODE, WINNING


def test_a_game_is_won_by_sending_its_record_back_as_notation(client: TestClient[Any], player: dict[str, str]) -> None:
    first = client.post("/v1/games", json={"code": EASY_CODE}, headers=player).json()
    for move in WINNING:
        assert client.post(f"/v1/games/{first['id']}/moves", json=move, headers=player).status_code == 200
    record = client.get(f"/v1/games/{first['id']}/record", headers=player).json()["record"].split()
    second = client.post("/v1/games", json={"code": EASY_CODE}, headers=player).json()
    for notation in record:
        played = client.post(f"/v1/games/{second['id']}/moves", json=notation, headers=player)
        assert played.status_code == 200, (notation, played.text)
    won = played.json()
    assert won["status"] == "won" and won["moves"] == len(WINNING)
    assert won["score"] == client.get(f"/v1/games/{first['id']}", headers=player).json()["score"]


def test_a_listed_legal_move_plays_as_it_is_written(client: TestClient[Any], player: dict[str, str]) -> None:
    game = client.post("/v1/games", json={"code": "PY1-N-NOTATES"}, headers=player).json()
    for _ in range(5):
        listed = game["legal_moves"][0]
        moved = client.post(f"/v1/games/{game['id']}/moves", json=listed, headers=player)
        assert moved.status_code == 200, (listed, moved.text)
        assert moved.json()["moves"] == game["moves"] + 1
        game = moved.json()


def test_a_malformed_or_illegal_notation_is_refused_as_an_object_would_be(
    client: TestClient[Any], player: dict[str, str]
) -> None:
    game = client.post("/v1/games", json={"code": "PY1-N-NOTATES"}, headers=player).json()
    url = f"/v1/games/{game['id']}/moves"
    malformed = client.post(url, json="XX", headers=player)
    assert malformed.status_code == 422 and malformed.json()["errors"][0]["code"] == "invalid_format"
    assert client.post(url, json="2S+2S", headers=player).status_code == 409
    assert client.get(f"/v1/games/{game['id']}", headers=player).json()["moves"] == 0
    body = client.get("/schema/openapi.json").json()["paths"]["/v1/games/{game_id}/moves"]["post"]["requestBody"]
    assert "pattern" in str(body), "the notation is declared"
