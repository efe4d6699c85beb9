"""A finished game's review (issue 46, item 2), through HTTP on a real server over the embedded Redis: every
position judged by the solver, the point of no return, the shortest continuation from any step."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import redis

from pyramide.engine import UNDO, DealCode, Game, Rules, parse_move, random_deal_code
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from pyramide.solver import solve
from tests.support.challenges import _deal
from tests.support.clock import past_the_close
from tests.support.serving import serve_in_thread

RULES = Rules(recycles=2)
"""Two turn-overs: random play then runs into a dead end within a few dozen moves."""
BUDGET = 300_000


@pytest.fixture
def review_url(settings: Settings) -> Iterator[str]:
    """A real server whose solver has time to decide every position of the short games played here."""
    app = create_app(settings.but(solver={"time_limit_s": 5.0}))
    with serve_in_thread(app) as url:
        yield url


def _winnable_deal(seed: int) -> tuple[DealCode, list[Any]]:
    """A deal under :data:`RULES` that the solver proves winnable, and its shortest line."""
    rng = random.Random(seed)
    for _ in range(100):
        code = random_deal_code(RULES, rng.randrange)
        analysis = solve(Game(code), budget=BUDGET, shortest=True)
        if analysis.winnable and analysis.shortest:
            return code, analysis.shortest
    raise AssertionError("no winnable deal among 100")


def _player(http: httpx.Client) -> dict[str, str]:
    created = http.post("/v1/players", json={})
    assert created.status_code == 201, created.text
    return {"Authorization": f"Bearer {created.json()['token']}"}


def _play(http: httpx.Client, headers: dict[str, str], game_id: str, moves: list[Any]) -> dict[str, Any]:
    snapshot: dict[str, Any] = {}
    for move in moves:
        response = http.post(f"/v1/games/{game_id}/moves", json=move_body(move), headers=headers)
        assert response.status_code == 200, response.text
        snapshot = response.json()
    return snapshot


def _new_game(http: httpx.Client, headers: dict[str, str], code: DealCode) -> str:
    created = http.post("/v1/games", json={"code": str(code)}, headers=headers)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def _into_a_dead_end(code: DealCode, seed: int) -> list[Any]:
    """Moves chosen at random (never an undo) from ``code`` until the game is stuck."""
    game, moves, rng = Game(code), [], random.Random(seed)
    for _ in range(400):
        if game.status.value != "in_progress":
            break
        move = rng.choice([m for m in game.legal_moves() if m != UNDO])
        game.play(move)
        moves.append(move)
    assert game.status.value == "stuck"
    return moves


def test_a_won_game_s_review_counts_down_along_its_shortest_line_and_is_kept(
    review_url: str, redis_client: redis.Redis
) -> None:
    code, line = _winnable_deal(1)
    with httpx.Client(base_url=review_url, timeout=30) as http:
        headers = _player(http)
        game_id = _new_game(http, headers, code)
        assert _play(http, headers, game_id, line)["status"] == "won"
        response = http.get(f"/v1/games/{game_id}/review", headers=headers)
        assert response.status_code == 200, response.text
        review = response.json()
        assert review["status"] == "won" and review["steps"] == len(line)
        assert review["point_of_no_return"] is None
        positions = review["positions"]
        assert [p["step"] for p in positions] == list(range(len(line) + 1))
        assert all(p["winnable"] is True for p in positions)
        assert [p["moves_left"] for p in positions] == list(range(len(line), -1, -1))
        assert [p["on_shortest_line"] for p in positions] == [None] + [True] * len(line)
        assert review["continuation"] is None
        assert redis_client.keys("*review:*"), "the review is kept in Redis"
        again = http.get(f"/v1/games/{game_id}/review", headers=headers)
        assert again.json() == review


def test_a_lost_game_s_point_of_no_return_is_the_first_position_the_full_search_proves_lost(review_url: str) -> None:
    code, _ = _winnable_deal(2)
    moves = _into_a_dead_end(code, 3)
    with httpx.Client(base_url=review_url, timeout=30) as http:
        headers = _player(http)
        game_id = _new_game(http, headers, code)
        assert _play(http, headers, game_id, moves)["status"] == "stuck"
        response = http.get(f"/v1/games/{game_id}/review", headers=headers)
        assert response.status_code == 200, response.text
        review = response.json()
    game, direct = Game(code), [solve(Game(code), budget=10_000_000).winnable]
    for move in moves:
        game.play(move)
        direct.append(solve(game, budget=10_000_000).winnable)
    assert None not in direct, "the full search decides every position"
    assert [p["winnable"] for p in review["positions"]] == direct
    first_lost = direct.index(False)
    assert first_lost > 0, "the deal itself is winnable"
    assert review["point_of_no_return"] == first_lost
    assert review["positions"][first_lost]["moves_left"] is None
    assert review["positions"][first_lost]["on_shortest_line"] is False


def test_the_continuation_from_a_step_wins_in_the_stated_number_of_moves(review_url: str) -> None:
    code, _ = _winnable_deal(2)
    moves = _into_a_dead_end(code, 3)
    with httpx.Client(base_url=review_url, timeout=30) as http:
        headers = _player(http)
        game_id = _new_game(http, headers, code)
        _play(http, headers, game_id, moves)
        review = http.get(f"/v1/games/{game_id}/review", headers=headers).json()
        checked = 0
        for step in sorted({0, 1, review["point_of_no_return"] - 1, review["point_of_no_return"]}):
            answer = http.get(f"/v1/games/{game_id}/review", params={"from": step}, headers=headers).json()
            continuation = answer["continuation"]
            assert continuation["step"] == step
            game = Game(code)
            for move in moves[:step]:
                game.play(move)
            if step >= review["point_of_no_return"]:
                assert continuation["line"] is None and continuation["moves"] is None
                continue
            shortest = solve(game, budget=BUDGET, shortest=True).shortest
            assert shortest is not None
            for notation in continuation["line"]:
                game.play(parse_move(notation))
            assert game.is_won
            assert continuation["moves"] == len(continuation["line"]) == len(shortest)
            assert continuation["moves"] == review["positions"][step]["moves_left"]
            checked += 1
        assert checked >= 2


def test_a_review_is_refused_for_another_s_game_a_running_game_and_a_step_outside_the_record(
    review_url: str,
) -> None:
    code, line = _winnable_deal(1)
    with httpx.Client(base_url=review_url, timeout=30) as http:
        owner, other = _player(http), _player(http)
        game_id = _new_game(http, owner, code)
        _play(http, owner, game_id, line[:1])
        running = http.get(f"/v1/games/{game_id}/review", headers=owner)
        assert running.status_code == 409
        assert running.headers["content-type"].startswith("application/problem+json")
        assert running.json()["code"] == "game_not_finished"
        english = http.get(f"/v1/games/{game_id}/review", headers={**owner, "Accept-Language": "en"})
        assert english.json()["title"].startswith("This game is still in progress")
        _play(http, owner, game_id, line[1:])
        stranger = http.get(f"/v1/games/{game_id}/review", headers=other)
        assert stranger.status_code == 404 and stranger.json()["code"] == "game_not_found"
        past = http.get(f"/v1/games/{game_id}/review", params={"from": len(line) + 1}, headers=owner)
        assert past.status_code == 404 and past.json()["code"] == "step_not_found"
        for bad in ("-1", "x", "1.5"):
            malformed = http.get(f"/v1/games/{game_id}/review", params={"from": bad}, headers=owner)
            assert 400 <= malformed.status_code < 500, malformed.text
            assert malformed.headers["content-type"].startswith("application/problem+json")


def test_a_challenge_game_is_reviewed_only_after_its_challenge_closes(
    review_url: str, redis_client: redis.Redis, clock: FakeClock
) -> None:
    with httpx.Client(base_url=review_url, timeout=30) as http:
        headers = _player(http)
        challenge = http.get("/v1/challenges/current", headers=headers).json()
        created = http.post("/v1/games", json={"challenge": challenge["id"]}, headers=headers)
        assert created.status_code == 201, created.text
        game_id = created.json()["id"]
        code = _deal(redis_client, challenge["id"])
        analysis = solve(Game(code))
        assert analysis.winnable is True
        assert _play(http, headers, game_id, analysis.line)["status"] == "won"
        before = http.get(f"/v1/games/{game_id}/review", headers=headers)
        assert before.status_code == 409, before.text
        assert before.json()["code"] == "hints_not_allowed"
        assert not redis_client.keys("*review:*"), "nothing was worked out for a sealed game"
        past_the_close(clock)
        after = http.get(f"/v1/games/{game_id}/review", headers=headers)
        assert after.status_code == 200, after.text
        assert after.json()["positions"][-1] == {
            "step": len(analysis.line),
            "operation": analysis.line[-1].notation(),
            "winnable": True,
            "moves_left": 0,
            "on_shortest_line": after.json()["positions"][-1]["on_shortest_line"],
        }


def test_reviews_count_against_the_address_s_limit_of_analyses(settings: Settings) -> None:
    code, line = _winnable_deal(1)
    app = create_app(settings.but(limits={"per_minute": {"analyses": 2}}, solver={"time_limit_s": 5.0}))
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        headers = _player(http)
        game_id = _new_game(http, headers, code)
        _play(http, headers, game_id, line)
        answers = [http.get(f"/v1/games/{game_id}/review", headers=headers) for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 429]
        assert "ratelimit" in answers[0].headers
        assert answers[2].json()["code"] == "rate_limited" and int(answers[2].headers["retry-after"]) >= 1


def test_a_stuck_game_undone_and_won_is_reviewed_anew(review_url: str) -> None:
    """A stuck game can still be undone: its review must describe the record it has now, not the one kept."""
    code, _ = _winnable_deal(2)
    moves = _into_a_dead_end(code, 3)
    with httpx.Client(base_url=review_url, timeout=30) as http:
        headers = _player(http)
        game_id = _new_game(http, headers, code)
        _play(http, headers, game_id, moves)
        stuck = http.get(f"/v1/games/{game_id}/review", headers=headers).json()
        back = len(moves) - stuck["point_of_no_return"] + 1
        assert back <= 100, "undo reaches that far back"
        _play(http, headers, game_id, [UNDO] * back)
        line = http.get(f"/v1/games/{game_id}/review", params={"from": len(moves) - back}, headers=headers)
        assert line.status_code == 409 and line.json()["code"] == "game_not_finished"
        winning = solve(_replayed(code, moves[: len(moves) - back]), budget=BUDGET, shortest=True).shortest
        assert winning is not None
        assert _play(http, headers, game_id, winning)["status"] == "won"
        review = http.get(f"/v1/games/{game_id}/review", headers=headers).json()
        assert review["status"] == "won" and review["point_of_no_return"] is None
        assert review["steps"] == len(moves) + back + len(winning)
        assert review["positions"][-1]["moves_left"] == 0


def _replayed(code: DealCode, moves: list[Any]) -> Game:
    game = Game(code)
    for move in moves:
        game.play(move)
    return game
