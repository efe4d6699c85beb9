"""Daily challenges: sealed deals no client can read before the close, one attempt each, a verified board."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from typing import Any

import httpx
import redis
from litestar.testing import TestClient

from pyramide.engine import DRAW, UNDO, DealCode, Game, card_code
from pyramide.engine.cards import Card
from pyramide.service.challenges.calendar import ChallengeId
from pyramide.service.challenges.deals import ChallengeDeals
from pyramide.service.deals import DealSecret, Solver
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import FakeClock, utc_now
from pyramide.service.infra.redis import connect
from pyramide.service.infra.settings import Settings
from pyramide.solver import solve
from tests.support.challenges import _deal, _win
from tests.support.clock import WEDNESDAY_10H, next_midnight, past_the_close
from tests.support.players import new_player
from tests.support.waiting import drain

CARD = re.compile(r"(?<![0-9A-Z])(?:10|[2-9AJQK])[CDHS](?![0-9A-Z])")


def _cards_named(text: str) -> set[str]:
    return set(CARD.findall(text))


def test_no_response_of_any_route_shows_a_face_down_card_before_the_close(
    client: TestClient[Any], redis_client: redis.Redis
) -> None:
    """Everything a client can reach about its challenge game and the challenge, with the published dealing
    algorithm in hand: the cards still face down appear in no response, nor does the code that deals them."""
    player = new_player(client, explain_errors=True)
    challenge = client.get("/v1/challenges/current", headers=player).json()
    assert challenge["code"] is None and challenge["open"] is True
    created = client.post("/v1/games", json={"challenge": challenge["id"]}, headers=player)
    assert created.status_code == 201, created.text
    game = created.json()
    code = _deal(redis_client, challenge["id"])
    replica = Game(code)
    stock_at_start = set(replica.stock)
    url = f"/v1/games/{game['id']}"
    seen: list[str] = [created.text]

    def call(method: str, path: str, **kwargs: Any) -> httpx.Response:
        response = client.request(method, path, headers=player, **kwargs)
        assert response.status_code < 500, response.text
        seen.append(response.text)
        return response

    for _ in range(5):
        call("POST", url + "/moves", json={"type": "draw"})
        replica.play(DRAW)
    call("POST", url + "/moves", json={"type": "undo"})
    replica.play(UNDO)
    call("POST", url + "/taps", json={"target": "stock"})
    replica.play(DRAW)
    shown: set[Card] = set(replica.waste) | {c for c in replica.pyramid if c is not None}
    face_down = {card_code(c) for c in replica.stock} - {card_code(c) for c in stock_at_start - set(replica.stock)}
    visible = sorted(card_code(c) for c in shown)
    call("POST", url + "/taps", json={"card": visible[0]})
    call("POST", url + "/moves", json={"type": "pair", "cards": visible[:2]})
    assert call("GET", url + "/hint").json()["code"] == "hints_not_allowed"
    for path in (url, url + "/record", "/v1/players/me/games", "/v1/players/me/wins", "/v1/players/me/stats"):
        call("GET", path)
    call("GET", "/v1/players/me/export")
    call("GET", f"/v1/challenges/{challenge['id']}")
    call("GET", "/v1/challenges/current")
    call("GET", f"/v1/challenges/{challenge['id']}/leaderboard")
    # a pair named from face-down cards is refused without telling anything but what the request named
    hidden = sorted(face_down)
    for named in (hidden[:2], hidden[2:4]):
        refused = client.post(url + "/moves", json={"type": "pair", "cards": named}, headers=player)
        assert refused.status_code == 409 and refused.json()["code"] == "not_free", refused.text
        assert _cards_named(refused.text) <= set(named)
    call("POST", url + "/abandon")
    for path in (url, url + "/record", "/v1/players/me/export", "/v1/players/me/wins"):
        call("GET", path)
    assert call("GET", url).json()["code"] is None

    everything = "\n".join(seen)
    assert face_down and not _cards_named(everything) & face_down
    assert str(code) not in everything and "PY1-" not in everything


def test_two_secrets_deal_different_challenges_and_one_secret_the_same(settings: Settings) -> None:
    async def choose(secret: str) -> list[DealCode]:
        client = connect(settings.redis)
        solver = Solver(1, 2.0)
        try:
            deals = ChallengeDeals(
                client, DealSecret(client, secret), solver, ("N", "2S"), 64, clock=FakeClock(WEDNESDAY_10H)
            )
            return [(await deals.choose(ChallengeId(date(2026, 12, 1), p))).code for p in ("N", "2S")]
        finally:
            solver.close()
            await client.aclose()

    one = asyncio.run(choose("the first test secret"))
    again = asyncio.run(choose("the first test secret"))
    other = asyncio.run(choose("the second test secret"))
    assert one == again
    assert all(a.deal() != b.deal() for a, b in zip(one, other, strict=True))


def test_every_challenge_deal_is_the_first_candidate_the_solver_proves_winnable(settings: Settings) -> None:
    """Over ten days and every preset: the deal chosen wins when its line is replayed by the engine, and every
    candidate before it was not proven winnable."""

    async def run() -> None:
        client = connect(settings.redis)
        solver = Solver(1, 2.0)
        secret = DealSecret(client, "pyramide-test-secret")
        try:
            deals = ChallengeDeals(client, secret, solver, ("N", "2S"), 64, clock=FakeClock(WEDNESDAY_10H))
            for day in range(10):
                for preset in ("N", "2S"):
                    challenge = ChallengeId(date(2026, 12, 1) + timedelta(days=day), preset)
                    chosen = await deals.choose(challenge)
                    assert chosen.code.rules == challenge.rules
                    game = Game(chosen.code)
                    analysis = solve(game)
                    for move in analysis.line:
                        game.play(move)
                    assert game.is_won, f"{challenge}: the solver's line wins"
                    for earlier in range(chosen.candidate):
                        layout = await secret.layout(challenge.identity(earlier))
                        assert solve(Game(DealCode.for_layout(layout, challenge.rules))).winnable is not True
        finally:
            solver.close()
            await client.aclose()

    asyncio.run(run())


def test_one_attempt_per_player_under_concurrent_requests(live_url: str) -> None:
    with httpx.Client(base_url=live_url, timeout=30) as http:
        player = {"Authorization": f"Bearer {http.post('/v1/players', json={}).json()['token']}"}
        challenge = http.get("/v1/challenges/current").json()["id"]

        def start(attempt: int) -> httpx.Response:
            headers = {**player, "Idempotency-Key": f"attempt-{attempt}"}
            return http.post("/v1/games", json={"challenge": challenge}, headers=headers)

        with ThreadPoolExecutor(12) as pool:
            responses = list(pool.map(start, range(12)))
        statuses = sorted(r.status_code for r in responses)
        assert statuses == [201] + [409] * 11, statuses
        assert {r.json()["code"] for r in responses if r.status_code == 409} == {"challenge_already_played"}
        assert len(http.get("/v1/players/me/games", headers=player).json()["entries"]) == 1
        described = http.get(f"/v1/challenges/{challenge}", headers=player).json()
        assert described["players"] == 1
        winner = next(i for i, r in enumerate(responses) if r.status_code == 201)
        assert described["you"]["game_id"] == responses[winner].json()["id"]
        retried = start(winner)
        assert retried.status_code == 201, "a retry of the attempt gets its first answer"
        assert retried.json()["id"] == responses[winner].json()["id"]


def test_a_win_before_the_close_ranks_once_and_one_after_it_counts_only_in_statistics(
    client: TestClient[Any], redis_client: redis.Redis, clock: FakeClock
) -> None:
    """The day boundary: a game started while the challenge is open may be finished after the close, but only a
    win before the close ranks (after it the code is public). Hints, the code and the deal open up at the close."""
    early, late = new_player(client, name="Early"), new_player(client, name="Late")
    challenge = client.get("/v1/challenges/current").json()["id"]
    code = _deal(redis_client, challenge)
    first = client.post("/v1/games", json={"challenge": challenge}, headers=early).json()
    second = client.post("/v1/games", json={"challenge": challenge}, headers=late).json()
    won = _win(client, early, first, code)
    assert won["code"] is None, "still sealed: the challenge is open"
    board = client.get(f"/v1/challenges/{challenge}/leaderboard").json()
    assert [e["name"] for e in board["entries"]] == ["Early"] and board["final"] is False
    assert client.get(f"/v1/challenges/{challenge}", headers=early).json()["you"]["rank"] == 1
    wins = client.get("/v1/players/me/wins", headers=early).json()["entries"]
    assert wins[0]["code"] is None and wins[0]["challenge"] == challenge

    past_the_close(clock)
    finished = _win(client, late, second, code)
    assert finished["code"] == str(code), "after the close the game shows its code"
    board = client.get(f"/v1/challenges/{challenge}/leaderboard").json()
    assert [e["name"] for e in board["entries"]] == ["Early"] and board["final"] is True
    assert client.get(f"/v1/challenges/{challenge}", headers=late).json()["you"]["rank"] is None
    stats = client.get("/v1/players/me/stats", headers=late).json()
    assert stats["won"] == 1 and stats["played"] == 1, "statistics count challenge games like any other"
    revealed = client.get(f"/v1/challenges/{challenge}").json()
    assert revealed["open"] is False and revealed["code"] == str(code)
    assert client.get(f"/v1/deals/{revealed['code']}").status_code == 200, "an ordinary open code from now on"
    third = new_player(client)
    closed = client.post("/v1/games", json={"challenge": challenge}, headers=third)
    assert closed.status_code == 409 and closed.json()["code"] == "challenge_closed"
    replay = client.post("/v1/games", json={"code": revealed["code"]}, headers=third).json()
    assert (
        replay["challenge"] is None and client.get(f"/v1/games/{replay['id']}/hint", headers=third).status_code == 200
    )
    assert client.get(f"/v1/leaderboards/{revealed['code']}").json()["entries"] == [], "no challenge win on it"


def test_the_board_ranks_by_time_then_moves_and_each_player_once(
    client: TestClient[Any], redis_client: redis.Redis, clock: FakeClock
) -> None:
    challenge = client.get("/v1/challenges/current?rules=2S").json()["id"]
    assert challenge.endswith("-2S")
    code = _deal(redis_client, challenge)
    slow, fast = new_player(client, name="Slow"), new_player(client, name="Fast")
    slow_game = client.post("/v1/games", json={"challenge": challenge}, headers=slow).json()
    client.post(f"/v1/games/{slow_game['id']}/moves", json={"type": "draw"}, headers=slow)
    client.post(f"/v1/games/{slow_game['id']}/moves", json={"type": "undo"}, headers=slow)
    clock.advance(90)  # ninety seconds later, still long before the close (the clock starts at 10:00 UTC)
    _win(client, slow, slow_game, code)
    fast_game = client.post("/v1/games", json={"challenge": challenge}, headers=fast).json()
    last = _win(client, fast, fast_game, code)
    again = client.post(f"/v1/games/{fast_game['id']}/moves", json={"type": "draw"}, headers=fast)
    assert again.status_code == 409 and last["status"] == "won"
    client.get("/v1/players/me/stats", headers=fast)  # settles anything pending: still once
    entries = client.get(f"/v1/challenges/{challenge}/leaderboard").json()["entries"]
    assert [(e["name"], e["rank"]) for e in entries] == [("Fast", 1), ("Slow", 2)]
    assert all("code" not in e or e["code"] is None for e in entries)
    page = client.get(f"/v1/challenges/{challenge}/leaderboard?limit=1").json()
    assert [e["name"] for e in page["entries"]] == ["Fast"] and page["next_cursor"]
    rest = client.get(f"/v1/challenges/{challenge}/leaderboard?limit=1&cursor={page['next_cursor']}").json()
    assert [e["name"] for e in rest["entries"]] == ["Slow"] and rest["next_cursor"] is None


def test_at_midnight_utc_today_s_challenge_closes_and_tomorrow_s_opens(
    client: TestClient[Any], redis_client: redis.Redis, clock: FakeClock
) -> None:
    """Half a second before midnight UTC a win ranks on the day's board; a second later, the same deal's game
    finished by another player no longer ranks, a new attempt at the day's challenge is refused as closed, and
    "current" names the next day's challenge, which takes games."""
    clock.set(next_midnight(clock) - 0.5)
    early, late, newcomer = (new_player(client, name=n) for n in ("Early", "Late", "New"))
    challenge = client.get("/v1/challenges/current").json()["id"]
    assert challenge.startswith(utc_now(clock).date().isoformat())
    code = _deal(redis_client, challenge)
    first = client.post("/v1/games", json={"challenge": challenge}, headers=early).json()
    second = client.post("/v1/games", json={"challenge": challenge}, headers=late).json()
    _win(client, early, first, code)

    clock.advance(1)
    _win(client, late, second, code)
    board = client.get(f"/v1/challenges/{challenge}/leaderboard").json()
    assert [e["name"] for e in board["entries"]] == ["Early"] and board["final"] is True
    refused = client.post("/v1/games", json={"challenge": challenge}, headers=newcomer)
    assert refused.status_code == 409 and refused.json()["code"] == "challenge_closed"
    current = client.get("/v1/challenges/current").json()
    assert current["id"] == str(ChallengeId.parse(challenge).next_day()) and current["open"] is True  # type: ignore[union-attr]
    assert client.post("/v1/games", json={"challenge": current["id"]}, headers=newcomer).status_code == 201


def test_unknown_future_and_malformed_challenges_are_not_found(client: TestClient[Any], clock: FakeClock) -> None:
    today = utc_now(clock).date()
    tomorrow = (today + timedelta(days=1)).isoformat()
    for path in (f"{tomorrow}-N", f"{today}-1SC", f"{today}-n", "2026-13-45-N", "2020-01-01-N", "x"):
        response = client.get(f"/v1/challenges/{path}")
        assert response.status_code == 404 and response.json()["code"] == "challenge_not_found", path
    assert client.get("/v1/challenges/current?rules=1SC").json()["code"] == "challenge_not_found"
    player = new_player(client)
    refused = client.post("/v1/games", json={"challenge": f"{tomorrow}-N"}, headers=player)
    assert refused.status_code == 404 and refused.json()["code"] == "challenge_not_found"


def test_open_code_boards_say_they_are_unverified(client: TestClient[Any]) -> None:
    board = client.get("/v1/leaderboards/PY1-N-AAAAAAS").json()
    assert board["verified"] is False
    challenge = client.get("/v1/challenges/current").json()["id"]
    assert client.get(f"/v1/challenges/{challenge}/leaderboard").json()["verified"] is True


def test_today_s_challenge_starts_choosing_tomorrow_s(client: TestClient[Any], redis_client: redis.Redis) -> None:
    today = client.get("/v1/challenges/current").json()["id"]
    tomorrow = str(ChallengeId.parse(today).next_day())  # type: ignore[union-attr]
    drain(client)  # a background choice: slow on a loaded machine
    assert redis_client.get(keyspace.challenge_deal(str(ChallengeId.parse(tomorrow)))) is not None, "not chosen"
    assert client.get(f"/v1/challenges/{tomorrow}").status_code == 404, "chosen, but not open before its day"
