"""A player's own games: listed newest change first, by status, paged, kept by the writes that change a game."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
import redis
from litestar.testing import TestClient

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from tests.support.layouts import EASY_CLEARING, dead_end_moves, dead_end_start, easy_game
from tests.support.players import new_player
from tests.support.redis_commands import client_commands
from tests.support.waiting import eventually

Client = TestClient[Any]


def _games(client: Client, auth: dict[str, str], **query: Any) -> dict[str, Any]:
    response = client.get("/v1/players/me/games", params=query, headers=auth)
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


def test_every_game_is_listed_by_its_last_change_with_what_a_resume_screen_shows(
    client: Client, player: dict[str, str], clock: FakeClock
) -> None:
    """Three games dealt a second apart, then a move in the first: it comes first, then the others newest first."""
    ids = []
    for c in "ABC":
        ids.append(client.post("/v1/games", json={"code": f"PY1-N-LISTED{c}"}, headers=player).json()["id"])
        clock.advance(1)
    client.post(f"/v1/games/{ids[0]}/moves", json={"type": "draw"}, headers=player)
    page = _games(client, player)
    assert [e["id"] for e in page["entries"]] == [ids[0], ids[2], ids[1]] and page["next_cursor"] is None
    first = page["entries"][0]
    assert (first["code"], first["status"], first["moves"], first["score"]) == ("PY1-N-LISTEDA", "in_progress", 1, 0)
    assert first["rules"] == {"recycles": None, "stock_waste_pairs": False, "cover_pairs": False, "strict_win": False}
    assert first["updated_at"] > first["created_at"] and first["elapsed_ms"] is not None
    assert _games(client, new_player(client))["entries"] == [], "another player's games are not yours"


def test_statuses_filter_won_lost_abandoned_and_in_progress(client: Client, player: dict[str, str]) -> None:
    won = client.post("/v1/games", json={"code": str(DealCode.for_layout(easy_game().layout))}, headers=player).json()
    for move in parse_record(EASY_CLEARING):
        client.post(f"/v1/games/{won['id']}/moves", json=move_body(move), headers=player)
    lost = client.post("/v1/games", json={"layout": dead_end_start().code.to_json()}, headers=player).json()
    for move in dead_end_moves():
        client.post(f"/v1/games/{lost['id']}/moves", json=move_body(move), headers=player)
    given_up = client.post("/v1/games", json={}, headers=player).json()
    client.post(f"/v1/games/{given_up['id']}/abandon", headers=player)
    playing = client.post("/v1/games", json={}, headers=player).json()
    expected = {"won": won, "lost": lost, "abandoned": given_up, "in_progress": playing}
    for status, game in expected.items():
        assert [e["id"] for e in _games(client, player, status=status)["entries"]] == [game["id"]], status
    assert len(_games(client, player, status="all")["entries"]) == 4
    undone = client.post(f"/v1/games/{lost['id']}/moves", json={"type": "undo"}, headers=player)
    assert undone.status_code == 200
    assert lost["id"] in [e["id"] for e in _games(client, player, status="in_progress")["entries"]]


def test_pages_follow_each_other_without_gaps_or_repeats(client: Client, player: dict[str, str]) -> None:
    ids = {client.post("/v1/games", json={}, headers=player).json()["id"] for _ in range(7)}
    seen: list[str] = []
    cursor = None
    while True:
        page = _games(client, player, limit=3, **({"cursor": cursor} if cursor else {}))
        seen += [e["id"] for e in page["entries"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 7 and set(seen) == ids


def test_expired_games_drop_out_of_the_list(settings: Settings, redis_client: redis.Redis) -> None:
    with TestClient(create_app(settings.but(retention={"unfinished_ttl_s": 1}))) as client:
        auth = new_player(client)
        player = UUID(client.get("/v1/players/me", headers=auth).json()["id"])
        expiring = UUID(client.post("/v1/games", json={}, headers=auth).json()["id"])
        state = keyspace.game_state(player, expiring)
        eventually(lambda: redis_client.exists(state) == 0, what="the unfinished game's expiry (Redis's TTL)")
        kept = client.post("/v1/games", json={}, headers=auth).json()
        assert [e["id"] for e in _games(client, auth)["entries"]] == [kept["id"]]


def test_listing_adds_no_round_trip_to_a_move(client: Client, player: dict[str, str], settings: Settings) -> None:
    game = client.post("/v1/games", json={}, headers=player).json()
    client.post(f"/v1/games/{game['id']}/moves", json={"type": "draw"}, headers=player)
    assert settings.redis.url is not None
    with client_commands(settings.redis.url) as commands:
        client.post(f"/v1/games/{game['id']}/moves", json={"type": "draw"}, headers=player)
    assert "EVALSHA" in commands and not {"ZADD", "ZREM"} & set(commands), "the lists are kept inside the save"
    assert _games(client, player)["entries"][0]["moves"] == 2


@pytest.mark.parametrize("language", ["hu", "en"])
def test_list_errors_read_as_the_rest(client: Client, player: dict[str, str], language: str) -> None:
    lang = {"Accept-Language": language}
    assert client.get("/v1/players/me/games", headers=lang).status_code == 401
    for query in ({"status": "finished"}, {"limit": 0}, {"cursor": "x"}, {"page": 2}):
        refused = client.get("/v1/players/me/games", params=query, headers={**player, **lang})
        assert refused.status_code == 400 and refused.headers["content-language"] == language, query
        assert refused.json()["errors"][0]["query"] == next(iter(query))
