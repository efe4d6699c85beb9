"""A player's rights of access and erasure: everything kept, as one document; everything kept, deleted."""

from __future__ import annotations

import uuid
from typing import Any

import redis
from litestar.testing import TestClient

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.accounts import privacy as privacy_service
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.settings import Erasure, Settings
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.players import new_player

Client = TestClient[Any]
EASY = str(DealCode.for_layout(easy_game().layout))


def _win(client: Client, auth: dict[str, str], **headers: str) -> str:
    game: str = client.post("/v1/games", json={"code": EASY}, headers=auth).json()["id"]
    for number, move in enumerate(parse_record(EASY_CLEARING)):
        keyed = {"Idempotency-Key": f"move-{number}"} if headers else {}
        assert (
            client.post(f"/v1/games/{game}/moves", json=move_body(move), headers={**auth, **keyed}).status_code == 200
        )
    return game


def _busy_player(client: Client) -> tuple[dict[str, str], str, str]:
    """A player with everything the service can keep: a sealed create, a renamed profile, a rotated token, a win on
    a board, a game in progress with a kept response, statistics and lists."""
    created = client.post("/v1/players", json={"name": "Törölendő"}, headers={"Idempotency-Key": str(uuid.uuid4())})
    player_id = created.json()["id"]
    first = {"Authorization": f"Bearer {created.json()['token']}"}
    token = client.post("/v1/players/me/token", headers={**first, "Idempotency-Key": str(uuid.uuid4())}).json()
    auth = {"Authorization": f"Bearer {token['token']}"}
    won = _win(client, auth, keyed="yes")
    playing = client.post("/v1/games", json={}, headers=auth).json()["id"]
    client.post(f"/v1/games/{playing}/moves", json={"type": "draw"}, headers={**auth, "Idempotency-Key": "draw-1"})
    assert client.get("/v1/players/me/stats", headers=auth).json()["won"] == 1
    return auth, player_id, won


def test_the_export_holds_everything_kept(client: Client) -> None:
    auth, player_id, won = _busy_player(client)
    export = client.get("/v1/players/me/export", headers=auth)
    assert export.status_code == 200
    data = export.json()
    assert data["player"]["id"] == player_id and data["player"]["name"] == "Törölendő"
    assert (data["statistics"]["played"], data["statistics"]["won"]) == (2, 1)
    games = {g["id"]: g for g in data["games"]}
    assert len(games) == 2 and " ".join(games[won]["record"]) == EASY_CLEARING
    assert games[won]["result"]["won"] is True and games[won]["status"] == "won"
    assert [w["game_id"] for w in data["wins"]] == [won]
    assert data["leaderboard_entries"][EASY]["player"] == player_id


def _everything_naming(store: redis.Redis, player_id: str) -> list[str]:
    """Every key, and every value of every key, that names the player, as text or as the id's 16 bytes."""
    marks = (player_id.encode(), uuid.UUID(player_id).bytes)
    found = []
    for key in store.scan_iter(count=1000):
        kind: Any = store.type(key)
        kind = kind.decode() if isinstance(kind, bytes) else kind
        values: list[Any]
        if kind == "string":
            values = [store.get(key) or b""]
        elif kind == "hash":
            values = [b for pair in store.hgetall(key).items() for b in pair]
        elif kind == "zset":
            ranked: Any = store.zrange(key, 0, -1)
            values = list(ranked)
        elif kind == "list":
            values = list(store.lrange(key, 0, -1))
        else:
            values = list(store.smembers(key))
        if any(mark in key for mark in marks) or any(mark in v for v in values for mark in marks):
            found.append(key.decode(errors="replace"))
    return found


def test_erasure_leaves_nothing_that_names_the_player(client: Client, redis_client: redis.Redis) -> None:
    auth, player_id, _ = _busy_player(client)
    rival = new_player(client, name="Marad")
    _win(client, rival)
    assert len(client.get(f"/v1/leaderboards/{EASY}").json()["entries"]) == 2
    assert _everything_naming(redis_client, player_id), "the scan finds the player before"
    assert client.delete("/v1/players/me", headers=auth).status_code == 204
    tombstone = f"pyr:{{p:{player_id}}}:erased"  # stops writes that raced the erasure; names the player by its key
    assert _everything_naming(redis_client, player_id) == [tombstone]
    assert 0 < redis_client.pttl(tombstone) <= Erasure().guard_s * 1000, "and goes by itself"
    board = client.get(f"/v1/leaderboards/{EASY}").json()["entries"]
    assert [(e["name"], e["rank"]) for e in board] == [("Marad", 1)], "the board re-ranks"
    assert client.get("/v1/players/me", headers=auth).status_code == 401
    assert client.delete("/v1/players/me", headers=auth).status_code == 204, "a retry answers the same"
    assert client.get("/v1/players/me/stats", headers=rival).json()["won"] == 1, "nobody else loses anything"


def test_erasure_and_export_need_the_player_s_token(client: Client) -> None:
    for response in (client.delete("/v1/players/me"), client.get("/v1/players/me/export"),
                     client.delete("/v1/players/me", headers={"Authorization": "Bearer nope"})):  # fmt: skip
        assert response.status_code == 401 and response.json()["code"] == "unauthorized"


def test_exports_count_against_their_own_limit(settings: Settings) -> None:
    limited = settings.but(limits={"per_minute": {"exports": 2}})
    with TestClient(create_app(limited)) as client:
        auth = new_player(client)
        answers = [client.get("/v1/players/me/export", headers=auth).status_code for _ in range(3)]
        assert answers == [200, 200, 429]
        refused = client.get("/v1/players/me/export", headers=auth)
        assert refused.json()["code"] == "rate_limited" and "q=2" in refused.headers["ratelimit-policy"]


def test_the_export_pages_through_every_game_and_win(client: Client, monkeypatch: Any) -> None:
    monkeypatch.setattr(privacy_service, "PAGE", 2)  # pages of two: three wins and four games need more than one each
    auth = new_player(client)
    wins = {_win(client, auth) for _ in range(3)}
    client.post("/v1/games", json={}, headers=auth)
    data = client.get("/v1/players/me/export", headers=auth).json()
    assert {w["game_id"] for w in data["wins"]} == wins and len(data["games"]) == 4
