"""The screening of daily challenge wins (issue 57, items 2 and 3; ``docs/fair-play.md``, Screening), in process.

One app under the test's fake clock with the screening on (``PYRAMIDE_MIN_LINE_MOVE_MS=400``, six worlds), the
floor at 150 ms and only app players on the board, over the real Redis and the real solver pool. The deal secret
is fixed, so today's 2S challenge is one known deal: its par is 50, and a greedy player (the first legal move,
removals before draws, never looking ahead) wins it in 66 moves. Between two moves the test moves the service's
clock, so a win's pace is what the test says, and it awaits the app's background work (``drain``) for the screen.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import pytest
import redis
from litestar.testing import TestClient

from pyramide.engine import DealCode, Game, parse_move
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.games.screen_queue import RETRY_S
from pyramide.service.games.settlement import Settlement
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from pyramide.solver import solve
from tests.support.challenges import _deal
from tests.support.waiting import drain, run_due

OPERATOR_KEY: Final = "screening-tests-operator-key-0123456789abcdef"
OPERATOR: Final = {"Authorization": f"Bearer {OPERATOR_KEY}"}
DEAL_SECRET: Final = "screening-tests-secret-0007"
"""Deals today's (2042-06-11) 2S challenge as ``PY1-2S-LBOQQP…``: par 50, won by the greedy player in 66 moves."""
Client = TestClient[Any]
SCREEN_LIMIT_S: Final = 300.0
"""The screen's time limit here: ample for 3 workers on 2 shared cores."""
LEASE_S: Final = 4 * SCREEN_LIMIT_S + 60
"""How long a process holds a win it screens, with this limit (``games.settlement``)."""


@contextmanager
def _served(
    settings: Settings, clock: FakeClock, screen_time_limit_s: float = SCREEN_LIMIT_S, **groups: dict[str, Any]
) -> Iterator[Client]:
    """The app with the screening on (and the setting ``groups`` given), under the test's clock."""
    changes = {"min_move_ms": 150, "min_line_move_ms": 400, "screen_worlds": 6, "players": "app"}
    secrets = {"operator_key": OPERATOR_KEY, "deal_secret": DEAL_SECRET}
    changes["screen_time_limit_s"] = screen_time_limit_s
    app = create_app(settings.but(challenges=changes, secrets=secrets, **groups), clock=clock)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def screened(settings: Settings, clock: FakeClock) -> Iterator[Client]:
    with _served(settings, clock) as client:
        yield client


@pytest.fixture
def code(screened: Client, redis_client: redis.Redis) -> DealCode:
    """Today's 2S challenge's deal, as the server keeps it (no client may learn it before the close)."""
    return _deal(redis_client, _challenge(screened))


def _challenge(client: Client) -> str:
    challenge: str = client.get("/v1/challenges/current?rules=2S").json()["id"]
    return challenge


def _app_player(client: Client, name: str) -> dict[str, str]:
    """A new app player's headers (an app of its own), called ``name`` on the boards."""
    created = client.post("/v1/admin/apps", json={"name": f"{name}'s club", "scopes": ["players"]}, headers=OPERATOR)
    assert created.status_code == 201, created.text
    headers = {"Authorization": f"Bearer {created.json()['key']}", "Pyramide-Player": name.replace(" ", "-")}
    assert client.patch("/v1/players/me", json={"name": name}, headers=headers).status_code == 200
    return headers


def _greedy(code: DealCode) -> list[str]:
    """A player who never looks ahead: always the first legal move (removals, then a draw, then a turn-over)."""
    game, line = Game(code), []
    while not game.is_won:
        move = game.legal_moves()[0]
        game.play(move)
        line.append(move.notation())
    return line


def _shortest(code: DealCode) -> list[str]:
    analysis = solve(Game(code), shortest=True)
    assert analysis.shortest is not None
    return [move.notation() for move in analysis.shortest]


def _play(
    client: Client,
    clock: FakeClock,
    headers: dict[str, str],
    line: list[str],
    pauses_s: list[float],
    *,
    won: bool = True,
) -> str:
    """Start the challenge and play ``line`` (to the win, unless not ``won``), the clock moving ``pauses_s[i]``
    before move ``i + 1``; the game's id. Every answer comes at once: none waits for the screen."""
    game = client.post("/v1/games", json={"challenge": _challenge(client)}, headers=headers)
    assert game.status_code == 201, game.text
    game_id: str = game.json()["id"]
    snapshot: dict[str, Any] = {}
    for index, notation in enumerate(line):
        snapshot = _move(client, clock, headers, game_id, notation, pause_s=pauses_s[index - 1] if index else 0)
    assert (snapshot["status"] == "won") is won, snapshot
    return game_id


def _move(
    client: Client, clock: FakeClock, headers: dict[str, str], game_id: str, notation: str, *, pause_s: float
) -> dict[str, Any]:
    """One move, ``pause_s`` after the last by the service's clock; its snapshot."""
    clock.advance(pause_s)
    moved = client.post(f"/v1/games/{game_id}/moves", json=move_body(parse_move(notation)), headers=headers)
    assert moved.status_code == 200, moved.text
    snapshot: dict[str, Any] = moved.json()
    return snapshot


def _human(moves: int, low_s: float, high_s: float, seed: int) -> list[float]:
    """A person's pauses: each between ``low_s`` and ``high_s``, jittered (seeded: the same in every run)."""
    jitter = random.Random(seed)
    return [jitter.uniform(low_s, high_s) for _ in range(moves)]


def _board(client: Client) -> list[str]:
    response = client.get(f"/v1/challenges/{_challenge(client)}/leaderboard")
    assert response.status_code == 200, response.text
    return [entry["name"] for entry in response.json()["entries"]]


def _review(client: Client, game_id: str) -> dict[str, Any]:
    response = client.get("/v1/admin/reviews", headers=OPERATOR)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["entries"]
    (review,) = [r for r in entries if r["id"] == game_id]
    return review


def _won(client: Client, headers: dict[str, str]) -> int:
    won: int = client.get("/v1/players/me/stats", headers=headers).json()["won"]
    return won


def test_an_honest_human_paced_win_ranks_once_screened(screened: Client, clock: FakeClock, code: DealCode) -> None:
    """The greedy player's win, 16 moves over par at 1.5 to 3 s a move, is screened in the background and ranks;
    nothing is held."""
    line = _greedy(code)
    assert len(line) == 66 and len(_shortest(code)) == 50, "the deal the test was written for"
    honest = _app_player(screened, "Honest")
    _play(screened, clock, honest, line, _human(len(line), 1.5, 3.0, seed=1))
    drain(screened, 300)  # a screen is seconds of solver time; 3 workers share 2 cores
    assert _board(screened) == ["Honest"]
    assert _won(screened, honest) == 1
    assert screened.get("/v1/admin/reviews", headers=OPERATOR).json()["entries"] == []


def test_the_shortest_line_at_a_human_pace_is_held_for_foresight(
    screened: Client, clock: FakeClock, code: DealCode
) -> None:
    """The two-player bot's second half: the solver's shortest line (par, 50 moves), played at 450 to 550 ms a move
    (above 400 ms × par: no faster than a person who knew the line), is held for ``foresight``, with the figures."""
    line = _shortest(code)
    bot = _app_player(screened, "Paced bot")
    game = _play(screened, clock, bot, line, _human(len(line), 0.45, 0.55, seed=2))
    drain(screened, 300)  # a screen is seconds of solver time; 3 workers share 2 cores
    assert _board(screened) == []
    review = _review(screened, game)
    assert review["status"] == "pending" and "foresight" in review["reasons"], review["reasons"]
    assert "cadence" not in review["reasons"] and "faster_than_known_line" not in review["reasons"]
    screen = review["screen"]
    assert (screen["par"], screen["length"], screen["time_bound_ms"]) == (50, 50, 50 * 400)
    assert screen["decided"] is True and screen["worlds"] == 6 and screen["line_move_ms"] == 400
    losses = screen["world_losses"]
    assert len(losses) >= 3, "an imagined deal whose search passes 3 s is left out (a loaded machine), not 4 of 6"
    assert screen["hidden_loss"] == 0 and sum(losses) >= 3 * len(losses), "free here, costly in other orders"
    assert _won(screened, bot) == 1, "the win counts in the player's statistics, held or not"


def test_a_win_faster_than_a_person_who_knew_the_line_is_held(
    screened: Client, clock: FakeClock, code: DealCode
) -> None:
    """The shortest line at 300 ms a move (above the 150 ms floor) takes 14.7 s, less than 50 × 400 ms: held as
    ``faster_than_known_line``."""
    line = _shortest(code)
    bot = _app_player(screened, "Quick bot")
    game = _play(screened, clock, bot, line, [0.3] * len(line))
    drain(screened, 300)  # a screen is seconds of solver time; 3 workers share 2 cores
    assert _board(screened) == []
    review = _review(screened, game)
    assert "faster_than_known_line" in review["reasons"] and "cadence" not in review["reasons"]
    assert review["per_move_ms"] == 300 and review["screen"]["time_bound_ms"] == 20_000


def test_a_win_the_solver_could_not_judge_in_time_is_held_as_not_decided(
    settings: Settings, clock: FakeClock, redis_client: redis.Redis
) -> None:
    """With a screen's time limit of 1 ms the solver cannot even find the par: the win near par is held as
    ``not_decided``, never entered on a guess."""
    with _served(settings, clock, screen_time_limit_s=0.001) as client:
        line = _shortest(_deal(redis_client, _challenge(client)))
        player = _app_player(client, "Unjudged")
        game = _play(client, clock, player, line, _human(len(line), 1.5, 3.0, seed=4))
        drain(client)
        assert _board(client) == []
        review = _review(client, game)
        assert review["reasons"] == ["not_decided"] and review["screen"]["decided"] is False


def test_a_machine_speed_win_is_held_for_its_cadence_at_once(
    screened: Client, clock: FakeClock, code: DealCode, redis_client: redis.Redis
) -> None:
    """Under the floor the cheap rule holds the win on the move's request, unscreened: ``reasons`` ``cadence``,
    no ``screen``. A review kept before reasons were (no ``reasons``, no ``screen`` in Redis) reads the same."""
    bot = _app_player(screened, "Fast bot")
    game = _play(screened, clock, bot, _shortest(code), [0.05] * 60)
    review = _review(screened, game)
    assert (review["reasons"], review["screen"]) == (["cadence"], None)
    kept = json.loads(redis_client.hget(keyspace.REVIEWS.items, game) or b"")
    del kept["reasons"], kept["screen"]
    redis_client.hset(keyspace.REVIEWS.items, game, json.dumps(kept))
    assert _review(screened, game) == review


def test_a_win_left_mid_screen_is_screened_once_its_lease_runs_out(
    screened: Client, clock: FakeClock, code: DealCode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies while the solver screens the win (nothing after the save is written): the win is on no
    board and not in the statistics. A statistics read past the grace starts no second screen while the lease the
    dead screen took runs; once it has run out, the sweep screens the win and settles it, once, with no read."""
    original = Settlement._screen

    async def dies(self: Settlement, *args: Any) -> None:
        return None  # the screening's task ends here: neither the board, the review list nor the statistics

    monkeypatch.setattr(Settlement, "_screen", dies)
    honest = _app_player(screened, "Honest")
    line = _greedy(code)
    _play(screened, clock, honest, line, _human(len(line), 1.5, 3.0, seed=3))
    drain(screened, 300)  # a screen is seconds of solver time; 3 workers share 2 cores
    assert _board(screened) == [] and _won(screened, honest) == 0, "pending: within the grace, nobody settles it"
    monkeypatch.setattr(Settlement, "_screen", original)
    clock.advance(31)  # past PYRAMIDE_SETTLEMENT_GRACE_S, within the lease
    assert _won(screened, honest) == 0
    drain(screened, 300)
    assert _board(screened) == [], "the lease is held: no second screen"
    clock.advance(LEASE_S)
    run_due(screened, 300)  # the sweep finds the lease run out and screens the win
    assert _board(screened) == ["Honest"]
    for _ in range(2):
        assert _won(screened, honest) == 1
        run_due(screened, 300)
    assert _board(screened) == ["Honest"]
    assert screened.get("/v1/admin/reviews", headers=OPERATOR).json()["entries"] == []


def test_a_win_the_busy_solver_refused_is_screened_when_it_has_room(
    settings: Settings, clock: FakeClock, redis_client: redis.Redis
) -> None:
    """One solver worker and no queue: two challenge wins come together, a bot's (the shortest line at a human
    pace: seconds of screening) and an honest player's. The solver screens one and refuses the other (503
    ``solver_busy`` inside the screen): that win waits, pending, in the queue of wins to screen. When the retry is
    due, the sweep screens it: the honest win ranks and the bot's is held, and nobody read any statistics."""
    with _served(settings, clock, solver={"workers": 1, "queue": 0}) as client:
        code = _deal(redis_client, _challenge(client))
        honest, bot = _app_player(client, "Honest"), _app_player(client, "Paced bot")
        greedy, shortest = _greedy(code), _shortest(code)
        honest_game = _play(client, clock, honest, greedy[:-1], _human(len(greedy), 1.5, 3.0, seed=5), won=False)
        bot_game = _play(client, clock, bot, shortest[:-1], _human(len(shortest), 0.45, 0.55, seed=6), won=False)
        drain(client, 300)  # nothing else wants the solver when the two wins come
        _move(client, clock, bot, bot_game, shortest[-1], pause_s=0.5)
        _move(client, clock, honest, honest_game, greedy[-1], pause_s=2.0)
        drain(client, 300)
        members: list[bytes] = list(redis_client.zrange(keyspace.SCREENS, 0, -1))  # type: ignore[arg-type]
        waiting = {member.decode().split(":")[1] for member in members}
        assert len(waiting) == 1 and waiting <= {honest_game, bot_game}, "one screened, one refused and waiting"
        clock.advance(RETRY_S)
        run_due(client, 300)
        assert _board(client) == ["Honest"]
        review = _review(client, bot_game)
        assert review["status"] == "pending" and "foresight" in review["reasons"], review["reasons"]
        assert redis_client.zcard(keyspace.SCREENS) == 0
        assert _won(client, honest) == _won(client, bot) == 1
