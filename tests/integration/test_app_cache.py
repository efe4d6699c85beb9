"""A move's app key and binding taken from memory (``accounts.app_cache``, issue 58) and a revocation that still
refuses at once: two instances of the app over one real Redis, each served by uvicorn in a thread (real HTTP, an event
loop and a pub/sub connection each), the revocation sent through one and the moves through the other."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
import redis
from litestar import Litestar

from pyramide.service.accounts import AppPlayers
from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from pyramide.service.services import ServicesPlugin
from tests.support.deals import EASY_CODE
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.serving import serve_in_thread
from tests.support.waiting import eventually

DRAW_UNDO = ({"type": "draw"}, {"type": "undo"})


class Served:
    """One instance of the app served in a thread, and how many times it read an app's key and binding in Redis."""

    def __init__(self, app: Litestar, url: str) -> None:
        self.app, self.url = app, url
        self.reads = 0
        players = self.app_players()
        resolve = players._resolve

        async def counted(*args: Any) -> Any:
            self.reads += 1
            return await resolve(*args)

        vars(players)["_resolve"] = counted

    def app_players(self) -> AppPlayers:
        return self.app.plugins.get(ServicesPlugin).services.running.accounts.app_players


@pytest.fixture
def two(settings: Settings) -> Iterator[tuple[Served, Served]]:
    """Two instances of the app over the test's Redis (its operator key set), each served in a thread."""
    changed = settings.but(secrets={"operator_key": OPERATOR_KEY}, streams={"notices_ping_s": 0.5})
    with ExitStack() as stack:
        served = []
        for _ in range(2):
            app = create_app(changed)
            served.append(Served(app, stack.enter_context(serve_in_thread(app))))
        yield served[0], served[1]


def _new_app(url: str) -> tuple[str, str]:
    """A new app's id and key."""
    created = httpx.post(f"{url}/v1/admin/apps", json={"name": "Cache", "scopes": ["players"]}, headers=OPERATOR)
    assert created.status_code == 201, created.text
    return str(created.json()["id"]), str(created.json()["key"])


def _as(key: str, external_id: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "Pyramide-Player": external_id}


def _remembering(served: Served, key: str, game_url: str, moves: list[int]) -> None:
    """Plays on ``served`` until it takes the key and binding from memory (a move without a read in Redis)."""

    def taken_from_memory() -> bool:
        before = served.reads
        move = DRAW_UNDO[moves[0] % 2]
        moves[0] += 1
        answer = httpx.post(game_url, json=move, headers=_as(key, "user"), timeout=10)
        assert answer.status_code == 200, answer.text
        return served.reads == before

    eventually(taken_from_memory, 20, "a move served from memory")


def test_a_move_takes_the_app_from_memory_and_a_revocation_through_another_instance_refuses_at_once(
    two: tuple[Served, Served],
) -> None:
    """Ten times: moves through B until B serves them from memory, the app revoked through A, and B's very next move
    (and read) answered 401. Without the notice B would serve the revoked key from memory for a minute."""
    a, b = two
    for _ in range(10):
        app_id, key = _new_app(a.url)
        game = httpx.post(f"{b.url}/v1/games", json={"code": EASY_CODE}, headers=_as(key, "user"))
        assert game.status_code == 201, game.text
        game_url = f"{b.url}/v1/games/{game.json()['id']}/moves"
        moves = [0]
        _remembering(b, key, game_url, moves)
        assert httpx.delete(f"{a.url}/v1/admin/apps/{app_id}", headers=OPERATOR).status_code == 204
        refused = httpx.post(game_url, json=DRAW_UNDO[moves[0] % 2], headers=_as(key, "user"), timeout=10)
        assert refused.status_code == 401, refused.text
        assert httpx.get(f"{b.url}/v1/players/me", headers=_as(key, "user")).status_code == 401


def test_without_its_notices_connection_an_instance_checks_every_key_in_redis(
    two: tuple[Served, Served], redis_client: redis.Redis
) -> None:
    """The pub/sub connections killed: a revocation meanwhile cannot be heard, so B takes nothing from memory until
    its connection answers again, and the revoked key is refused."""
    a, b = two
    app_id, key = _new_app(a.url)
    game = httpx.post(f"{b.url}/v1/games", json={"code": EASY_CODE}, headers=_as(key, "user")).json()
    game_url = f"{b.url}/v1/games/{game['id']}/moves"
    _remembering(b, key, game_url, [0])
    redis_client.client_kill_filter(_type="pubsub")
    redis_client.delete(f"pyr:{{app:{app_id}}}:app")  # revoked behind the service's back: no notice at all
    refused = httpx.post(game_url, json={"type": "draw"}, headers=_as(key, "user"), timeout=10)
    assert refused.status_code == 401, refused.text


def test_an_erased_app_player_is_not_taken_from_memory(two: tuple[Served, Served]) -> None:
    """Erasing an app's user (through A) drops the binding B remembers: B's next move of the user's old game is the
    fresh player's, who has no such game (404), as without the cache."""
    a, b = two
    app_id, key = _new_app(a.url)
    game = httpx.post(f"{b.url}/v1/games", json={"code": EASY_CODE}, headers=_as(key, "user")).json()
    game_url = f"{b.url}/v1/games/{game['id']}/moves"
    _remembering(b, key, game_url, [0])
    assert httpx.delete(f"{a.url}/v1/players/me", headers=_as(key, "user")).status_code == 204
    again = httpx.post(game_url, json={"type": "draw"}, headers=_as(key, "user"), timeout=10)
    assert again.status_code == 404, again.text
    del app_id
