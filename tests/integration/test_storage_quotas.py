"""Storage one client can take is bounded (issue 41, item 8): a daily quota of new players and new games per client
address, counted in Redis so every process agrees, and a cap on each player's unfinished games. Played through real
HTTP servers on loopback, from two real source addresses (127.0.0.1 and 127.0.0.2), over the embedded Redis."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx
import redis
from litestar.testing import TestClient

from pyramide.service.app import create_app
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from tests.support.clock import WEDNESDAY_10H
from tests.support.serving import serve_in_thread
from tests.support.waiting import run_job

DAY_S = 24 * 3600
FLUSH = "move counts flush"
"""The job that shares a server's per-address move counts through Redis and reads the total back."""


@contextmanager
def _from(address: str) -> Iterator[httpx.Client]:
    """An HTTP client whose connections come from ``address`` (a loopback address of this machine)."""
    with httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=10) as client:
        yield client


def _player(client: httpx.Client, url: str) -> dict[str, str]:
    response = client.post(f"{url}/v1/players", json={})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def _check_quota(response: httpx.Response, limit: int, language: str) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["code"] == "quota_exceeded"
    assert response.headers["content-language"] == language
    assert f"({'legfeljebb' if language == 'hu' else 'at most'} {limit})" in problem["detail"]
    assert DAY_S - 60 <= int(response.headers["retry-after"]) <= DAY_S, "seconds until the quota starts afresh"


def test_one_address_gets_its_daily_quota_of_players_and_games_and_another_address_still_succeeds(
    settings: Settings,
) -> None:
    limited = settings.but(limits={"per_day": {"players": 2, "games": 3}})
    with ExitStack() as stack:
        urls = [stack.enter_context(serve_in_thread(create_app(limited))) for _ in range(2)]  # two processes' worth
        one, two = stack.enter_context(_from("127.0.0.1")), stack.enter_context(_from("127.0.0.2"))
        first, second = _player(one, urls[0]), _player(one, urls[1])
        _check_quota(one.post(f"{urls[0]}/v1/players", json={}), 2, "hu")
        english = one.post(f"{urls[1]}/v1/players", json={}, headers={"Accept-Language": "en"})
        _check_quota(english, 2, "en")
        other = _player(two, urls[0])

        created = [
            one.post(f"{urls[i % 2]}/v1/games", json={}, headers=(first, second)[i % 2]).status_code for i in range(3)
        ]
        assert created == [201, 201, 201], "the quota counts games of every player of the address, in every process"
        _check_quota(one.post(f"{urls[0]}/v1/games", json={}, headers=second), 3, "hu")
        _check_quota(one.post(f"{urls[1]}/v1/games", json={}, headers={**first, "Accept-Language": "en"}), 3, "en")
        assert len(one.get(f"{urls[0]}/v1/players/me/games", headers=first).json()["entries"]) == 2, (
            "nothing stored past it"
        )
        assert two.post(f"{urls[1]}/v1/games", json={}, headers=other).status_code == 201, "another address plays on"


def _create(client: TestClient[Any], player: dict[str, str], language: str = "hu") -> Any:
    return client.post("/v1/games", json={}, headers={**player, "Accept-Language": language})


def test_a_player_may_have_at_most_the_cap_of_unfinished_games(settings: Settings) -> None:
    capped = settings.but(caps={"max_unfinished_games": 2}, limits={"per_day": {"games": 3}})
    with TestClient(create_app(capped)) as client:
        token = client.post("/v1/players", json={}).json()["token"]
        player = {"Authorization": f"Bearer {token}"}
        games = [_create(client, player).json() for _ in range(2)]
        assert all("id" in game for game in games)
        for language, text in (("hu", "legfeljebb 2"), ("en", "at most 2")):
            refused = _create(client, player, language)
            assert refused.status_code == 409, refused.text
            assert refused.json()["code"] == "too_many_unfinished_games"
            assert text in refused.json()["detail"]
            assert refused.headers["content-language"] == language
        client.post(f"/v1/games/{games[0]['id']}/abandon", headers=player)
        assert _create(client, player).status_code == 201, "an abandoned game frees its place"
        client.post(f"/v1/games/{games[1]['id']}/abandon", headers=player)
        assert _create(client, player).json()["code"] == "quota_exceeded", "the refused ones took no quota"


def test_expired_unfinished_games_no_longer_count_against_the_cap(settings: Settings, clock: FakeClock) -> None:
    """Unfinished games expire a second after their last change (here): the cap holds until then, not after."""
    capped = settings.but(caps={"max_unfinished_games": 1}, retention={"unfinished_ttl_s": 1})
    with TestClient(create_app(capped, clock=clock)) as client:
        player = {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}
        assert _create(client, player).status_code == 201
        assert _create(client, player).status_code == 409
        clock.advance(0.9)
        assert _create(client, player).status_code == 409, "the unfinished game has not expired yet"
        clock.advance(0.2)
        assert _create(client, player).status_code == 201, "the game that expired is no longer unfinished"


def test_a_game_records_at_most_its_cap_of_operations_and_can_still_be_abandoned(settings: Settings) -> None:
    capped = settings.but(caps={"max_game_operations": 4})
    with TestClient(create_app(capped)) as client:
        player = {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}
        game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player).json()
        url = f"/v1/games/{game['id']}"
        moves = [{"type": "draw"}, {"type": "undo"}] * 2
        assert [client.post(f"{url}/moves", json=m, headers=player).status_code for m in moves] == [200] * 4
        for language, text in (("hu", "felső határát (4)"), ("en", "limit of operations (4)")):
            refused = client.post(
                f"{url}/moves", json={"type": "draw"}, headers={**player, "Accept-Language": language}
            )
            assert refused.status_code == 409, refused.text
            assert refused.json()["code"] == "game_too_long"
            assert text in refused.json()["detail"]
        assert client.get(url, headers=player).json()["version"] == 4, "nothing applied past the cap"
        assert len(client.get(f"{url}/record", headers=player).json()["moves"]) == 4
        assert client.post(f"{url}/abandon", headers=player).json()["status"] == "abandoned"


def test_fast_play_with_idempotency_keys_keeps_only_each_games_latest_responses(
    client: TestClient[Any], redis_client: Any
) -> None:
    created = client.post("/v1/players", json={}).json()
    player = {"Authorization": f"Bearer {created['token']}"}
    game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player).json()
    url = f"/v1/games/{game['id']}/moves"
    last: Any = None
    for index in range(40):
        body, key = {"type": "draw" if index % 2 == 0 else "undo"}, f"move-{index}"
        last = (body, key, client.post(url, json=body, headers={**player, "Idempotency-Key": key}))
        assert last[2].status_code == 200
    kept = redis_client.keys(f"pyr:{{p:{created['id']}}}:g:{game['id']}:idem:*")
    assert len(kept) == 4, "only the latest 4 kept, not all 40 for 24 hours"
    body, key, answer = last
    retried = client.post(url, json=body, headers={**player, "Idempotency-Key": key})
    assert retried.content == answer.content, "the latest is still answered as it was, and not applied again"
    fifth = client.post(url, json={"type": "undo"}, headers={**player, "Idempotency-Key": "move-35"})
    assert fifth.status_code != 200 or fifth.json()["version"] != 36, "the fifth latest is no longer kept"


def _draw(client: httpx.Client, url: str, game: str, player: dict[str, str], language: str = "hu") -> httpx.Response:
    return client.post(
        f"{url}/v1/games/{game}/moves", json={"type": "draw"}, headers={**player, "Accept-Language": language}
    )


def _check_address_moves_refused(response: httpx.Response, allowance: int, language: str) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == "rate_limited"
    assert response.headers["content-language"] == language
    assert 1 <= int(response.headers["retry-after"]) <= 60, "until the minute window ends"
    assert response.headers["ratelimit-policy"] == f'"address_moves";q={allowance};w=60'


def test_the_players_of_one_address_share_an_allowance_of_moves_counted_across_processes(
    settings: Settings, clock: FakeClock
) -> None:
    """Players of 127.0.0.1 moving, each far below its own limit, through two servers on one Redis: once the
    address's moves reach the allowance, both servers refuse them with 429 (each learning the other's counts
    within a second), while a player of 127.0.0.2 still moves."""
    allowance = 10
    limited = settings.but(limits={"per_minute": {"address_moves": allowance}})
    with ExitStack() as stack:
        apps = [create_app(limited, clock=clock), create_app(limited, clock=clock)]  # flushed when the test says
        first_url, second_url = (stack.enter_context(serve_in_thread(app)) for app in apps)
        one, two = stack.enter_context(_from("127.0.0.1")), stack.enter_context(_from("127.0.0.2"))
        players = [_player(one, first_url) for _ in range(3)]
        games = [one.post(f"{first_url}/v1/games", json={}, headers=p).json()["id"] for p in players]
        other = _player(two, first_url)
        other_game = two.post(f"{first_url}/v1/games", json={}, headers=other).json()["id"]

        moved = [_draw(one, first_url, games[i % 3], players[i % 3]).status_code for i in range(6)]
        assert moved == [200] * 6
        run_job(apps[0], FLUSH)  # the first server has shared its 6,
        run_job(apps[1], FLUSH)  # and the second has read them
        moved = [_draw(one, second_url, games[i % 3], players[i % 3]).status_code for i in range(4)]
        assert moved == [200] * 4, "the address has 4 left of its 10"
        run_job(apps[1], FLUSH)  # the second server has shared its 4,
        run_job(apps[0], FLUSH)  # and both have read the total, 10
        _check_address_moves_refused(_draw(one, second_url, games[0], players[0]), allowance, "hu")
        _check_address_moves_refused(_draw(one, second_url, games[1], players[1], "en"), allowance, "en")
        _check_address_moves_refused(_draw(one, first_url, games[2], players[2]), allowance, "hu")
        assert _draw(two, second_url, other_game, other).status_code == 200, "another address moves on"
        assert _draw(two, first_url, other_game, other).status_code == 200
        versions = [
            one.get(f"{first_url}/v1/games/{g}", headers=p).json()["version"]
            for g, p in zip(games, players, strict=True)
        ]
        assert sum(versions) == allowance, "nothing applied past the allowance"


def test_the_end_of_a_minute_gives_an_address_its_allowance_back_at_once(
    settings: Settings, redis_client: redis.Redis, clock: FakeClock
) -> None:
    """An address that used up its allowance of moves is refused until its minute window ends, and moves again at
    once after: not told to wait another minute because its server had not yet shared its counts (which it does
    once a second). What it served is charged to the window it was served in, the new move to the new one."""
    limited = settings.but(limits={"per_minute": {"address_moves": 2}})
    app = create_app(limited, clock=clock)  # on the test's clock: the flush runs when the test runs it
    with serve_in_thread(app) as url, _from("127.0.0.1") as one:
        player = _player(one, url)
        game = one.post(f"{url}/v1/games", json={}, headers=player).json()["id"]
        clock.set(WEDNESDAY_10H + 59.5)  # half a second before the minute ends
        ended = int(clock.time()) // 60
        assert [_draw(one, url, game, player).status_code for _ in range(2)] == [200, 200]
        _check_address_moves_refused(_draw(one, url, game, player), 2, "hu")
        clock.advance(1)  # the window has just ended
        moved = _draw(one, url, game, player)
        assert moved.status_code == 200, moved.text
        assert moved.headers["ratelimit"].startswith('"address_moves";r=1;t='), moved.headers["ratelimit"]
        assert _draw(one, url, game, player).status_code == 200
        _check_address_moves_refused(_draw(one, url, game, player), 2, "hu")
        run_job(app, FLUSH)  # shared
        windows = {w: redis_client.get(f"pyr:{{rl:127.0.0.1}}:address_moves:{w}") for w in (ended, ended + 1)}
        assert windows == {ended: b"2", ended + 1: b"2"}, windows


def test_keyed_moves_made_as_a_minute_ends_count_in_the_new_one_from_its_first(
    settings: Settings, clock: FakeClock
) -> None:
    """One keyed move (one that keeps a response more) in a minute, then the minute ends: the next minute allows
    the address its allowance of keyed moves, not more. The moves of a new minute are counted in it from the first,
    not left in the last one's count until the first refusal (which let one process pass nearly twice the
    allowance)."""
    limited = settings.but(limits={"per_minute": {"address_keyed_moves": 2, "address_moves": 30}})
    with serve_in_thread(create_app(limited, clock=clock)) as url, _from("127.0.0.1") as one:
        player = _player(one, url)
        game = one.post(f"{url}/v1/games", json={}, headers=player).json()["id"]

        def keyed(n: int) -> int:
            move = {"type": "draw" if n % 2 == 0 else "undo"}
            headers = {**player, "Idempotency-Key": f"k-{n}"}
            return one.post(f"{url}/v1/games/{game}/moves", json=move, headers=headers).status_code

        clock.set(WEDNESDAY_10H + 59.5)  # half a second before the minute ends
        assert keyed(0) == 200
        clock.advance(1)  # the window has just ended
        assert [keyed(n) for n in (1, 2, 3)] == [200, 200, 429]


def _check_rate_limited(response: httpx.Response, name: str, limit: int, language: str) -> None:
    assert response.status_code == 429, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == "rate_limited"
    assert response.headers["content-language"] == language
    assert 1 <= int(response.headers["retry-after"]) <= 60
    assert response.headers["ratelimit-policy"] == f'"{name}";q={limit};w=60'
    assert response.headers["ratelimit"].startswith(f'"{name}";r=0;t=')


def test_one_address_creates_at_most_its_games_a_minute_and_another_address_still_creates(settings: Settings) -> None:
    """Two players of 127.0.0.1, each far below its own limit of games, together reach the address's games a
    minute: the next game of either is refused with 429 and not created, while a player of
    127.0.0.2 still creates."""
    limited = settings.but(limits={"per_minute": {"address_games": 3}, "per_day": {"games": 5}})
    with ExitStack() as stack:
        url = stack.enter_context(serve_in_thread(create_app(limited)))
        one, two = stack.enter_context(_from("127.0.0.1")), stack.enter_context(_from("127.0.0.2"))
        players = [_player(one, url), _player(one, url)]
        created = [one.post(f"{url}/v1/games", json={}, headers=players[i % 2]).status_code for i in range(3)]
        assert created == [201] * 3
        _check_rate_limited(one.post(f"{url}/v1/games", json={}, headers=players[0]), "address_games", 3, "hu")
        english = one.post(f"{url}/v1/games", json={}, headers={**players[1], "Accept-Language": "en"})
        _check_rate_limited(english, "address_games", 3, "en")
        other = _player(two, url)
        assert two.post(f"{url}/v1/games", json={}, headers=other).status_code == 201, "another address creates"
        listed = one.get(f"{url}/v1/players/me/games", headers=players[0]).json()
        assert len(listed["entries"]) == 2, "the refused games were not created"


def test_keyed_moves_of_one_address_stop_at_their_allowance_while_its_unkeyed_moves_pass(settings: Settings) -> None:
    """Moves with an Idempotency-Key of 127.0.0.1 that keep one response more for their game (a game's first 4)
    reach the address's allowance of keyed moves, far below its allowance of moves: the next keyed move is refused
    with 429 and not applied, while keyed moves that only replace a game's oldest kept response did not count, and
    the same address's moves without a key, and another address's keyed moves, still pass."""
    limited = settings.but(limits={"per_minute": {"address_keyed_moves": 5, "address_moves": 30}})
    with ExitStack() as stack:
        url = stack.enter_context(serve_in_thread(create_app(limited)))
        one, two = stack.enter_context(_from("127.0.0.1")), stack.enter_context(_from("127.0.0.2"))
        players = [_player(one, url), _player(one, url)]
        games = [one.post(f"{url}/v1/games", json={}, headers=p).json()["id"] for p in players]

        def keyed(client: httpx.Client, game: int, key: str, language: str = "hu") -> httpx.Response:
            headers = {**players[game], "Idempotency-Key": key, "Accept-Language": language}
            move = {"type": "draw" if int(key.split("-")[1]) % 2 == 0 else "undo"}
            return client.post(f"{url}/v1/games/{games[game]}/moves", json=move, headers=headers)

        first = [keyed(one, 0, f"a-{i}").status_code for i in range(10)]
        assert first == [200] * 10, "4 kept one response more each, 6 only replaced the oldest: 4 counted"
        assert keyed(one, 1, "b-0").status_code == 200, "the 5th counted"
        _check_rate_limited(keyed(one, 1, "b-1"), "address_keyed_moves", 5, "hu")
        _check_rate_limited(keyed(one, 0, "a-10", "en"), "address_keyed_moves", 5, "en")
        unkeyed = [_draw(one, url, games[i % 2], players[i % 2]).status_code for i in range(4)]
        assert unkeyed == [200] * 4, "moves without a key pass, below the allowance of moves"
        versions = [
            one.get(f"{url}/v1/games/{g}", headers=p).json()["version"] for g, p in zip(games, players, strict=True)
        ]
        assert versions == [12, 3], "the refused keyed moves were not applied"
        other = _player(two, url)
        other_game = two.post(f"{url}/v1/games", json={}, headers=other).json()["id"]
        answer = two.post(
            f"{url}/v1/games/{other_game}/moves", json={"type": "draw"}, headers={**other, "Idempotency-Key": "k"}
        )
        assert answer.status_code == 200, "another address's keyed moves pass"
