"""An app's ``Pyramide-Client-IP`` spends the app's own allowance for that address (issue 57, item 5): never the
allowance of the clients that connect from that address themselves, nor another app's. Before, an app naming
127.0.0.77 on 300 new users spent that address's daily quota of players, and an ordinary client connecting from
127.0.0.77 was then refused ``createPlayer`` for a day. Played through HTTP from real loopback source addresses."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import redis

from pyramide.service.app import create_app
from pyramide.service.infra import keyspace
from pyramide.service.infra.settings import Settings
from tests.support.deals import EASY_CODE
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.serving import serve_in_thread, serving
from tests.support.streams import Sse

NAMED = "127.0.0.77"
"""The address an app names for its users, from which direct clients connect too (a NAT's, a campus's)."""
OTHER = "127.0.0.78"


@contextmanager
def _from(address: str, url: str) -> Iterator[httpx.Client]:
    """An HTTP client of ``url`` whose connections come from ``address`` (a loopback address of this machine)."""
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(base_url=url, transport=transport, timeout=10) as client:
        yield client


def _app(client: httpx.Client, name: str) -> str:
    """A new app's key (scope ``players``), made with the operator's key."""
    response = client.post("/v1/admin/apps", json={"name": name, "scopes": ["players"]}, headers=OPERATOR)
    assert response.status_code == 201, response.text
    key: str = response.json()["key"]
    return key


def _user(key: str, external_id: str, address: str) -> dict[str, str]:
    """The headers of an app's request for its user ``external_id``, whose address it names."""
    return {"Authorization": f"Bearer {key}", "Pyramide-Player": external_id, "Pyramide-Client-IP": address}


def _new_users(client: httpx.Client, key: str, prefix: str, address: str, count: int) -> list[int]:
    """The statuses of ``count`` new users' first requests (each creates its player), all naming ``address``."""
    return [
        client.get("/v1/players/me", headers=_user(key, f"{prefix}-{n}", address)).status_code for n in range(count)
    ]


def _direct_players(client: httpx.Client, count: int) -> list[int]:
    return [client.post("/v1/players", json={}).status_code for _ in range(count)]


def _code(response: httpx.Response) -> str:
    code: str = response.json()["code"]
    return code


def test_an_apps_named_address_spends_the_apps_own_quota_never_its_direct_clients(tmp_path: Path) -> None:
    """`pyramide serve` with a daily quota of 3 players per address. An app names 127.0.0.78 on new users until it is
    refused (429 ``quota_exceeded``, to the app): a client connecting from 127.0.0.78 still creates its players.
    Clients connecting from 127.0.0.77 use up that address's quota: the app's users at 127.0.0.77 are still
    created, and once the app has spent its own 3 there, another app's users at 127.0.0.77 still are."""
    env = {"PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY, "PYRAMIDE_QUOTA_PLAYERS": "3"}
    with serving(tmp_path / "data", tmp_path, env=env) as served, ExitStack() as stack:
        server = stack.enter_context(_from("127.0.0.1", served.url))  # the apps' back ends
        named, other = stack.enter_context(_from(NAMED, served.url)), stack.enter_context(_from(OTHER, served.url))
        ours, theirs = _app(server, "Ours"), _app(server, "Theirs")

        assert _new_users(server, ours, "burn", OTHER, 3) == [200] * 3
        refused = server.get("/v1/players/me", headers=_user(ours, "burn-3", OTHER))
        assert refused.status_code == 429 and _code(refused) == "quota_exceeded", refused.text
        assert _direct_players(other, 3) == [201] * 3, "the app spent its own quota for the address, not theirs"

        assert _direct_players(named, 4) == [201, 201, 201, 429], "the direct clients' own quota holds"
        assert _new_users(server, ours, "user", NAMED, 3) == [200] * 3, "their quota is not the app's"
        refused = server.get("/v1/players/me", headers=_user(ours, "user-3", NAMED))
        assert refused.status_code == 429 and _code(refused) == "quota_exceeded", refused.text
        assert _new_users(server, theirs, "user", NAMED, 3) == [200] * 3, "nor is one app's another's"


def _game(client: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    return client.post("/v1/games", json={"code": EASY_CODE}, headers=headers)


def _moves(client: httpx.Client, game: str, headers: dict[str, str], count: int) -> list[int]:
    """The statuses of ``count`` moves in ``game`` (a draw, then an undo, ...)."""
    moves = [{"type": "draw"}, {"type": "undo"}] * count
    return [client.post(f"/v1/games/{game}/moves", json=m, headers=headers).status_code for m in moves[:count]]


def test_an_apps_users_at_an_address_have_their_own_games_moves_and_streams_apart_from_its_direct_clients(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """Per address: 2 games a day, 3 moves a minute, 1 live stream. An app's user at 127.0.0.77 uses up each of
    them (429 to the app); a player connecting from 127.0.0.77 and another app's user there still get theirs; the
    app's stream is held in the app's bucket of the address, none in the direct clients'."""
    limited = settings.but(
        secrets={"operator_key": OPERATOR_KEY},
        limits={"per_minute": {"address_moves": 3}, "per_day": {"games": 2}},
        streams={"per_address": 1, "heartbeat_s": 0.5},
    )
    with serve_in_thread(create_app(limited)) as url, ExitStack() as stack:
        server, named = stack.enter_context(_from("127.0.0.1", url)), stack.enter_context(_from(NAMED, url))
        ours, theirs = _app(server, "Ours"), _app(server, "Theirs")
        user, stranger = _user(ours, "u", NAMED), _user(theirs, "u", NAMED)
        direct = {"Authorization": f"Bearer {named.post('/v1/players', json={}).json()['token']}"}

        games = [_game(server, user) for _ in range(3)]
        assert [g.status_code for g in games] == [201, 201, 429] and _code(games[2]) == "quota_exceeded"
        theirs_game, direct_game = _game(server, stranger), _game(named, direct)
        assert (theirs_game.status_code, direct_game.status_code) == (201, 201), "the app's quota is its own"

        ours_id, theirs_id, direct_id = games[0].json()["id"], theirs_game.json()["id"], direct_game.json()["id"]
        assert _moves(server, ours_id, user, 4) == [200, 200, 200, 429]
        assert _moves(named, direct_id, direct, 3) == [200] * 3, "the app's moves are not the address's"
        assert _moves(server, theirs_id, stranger, 3) == [200] * 3, "nor another app's"

        first = Sse(f"{url}/v1/games/{ours_id}/events", user)
        second = Sse(f"{url}/v1/games/{games[1].json()['id']}/events", user)
        other = Sse(f"{url}/v1/games/{theirs_id}/events", stranger)
        try:
            assert (first.status, second.status, other.status) == (200, 429, 200), second.body
            assert redis_client.zcard(keyspace.address_streams(NAMED)) == 0, "a stream held in the address's cap"
        finally:
            for stream in (first, second, other):
                stream.close()
