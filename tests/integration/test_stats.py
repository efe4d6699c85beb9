"""Statistics and leaderboards through HTTP against the real Redis: what counts, in which order, and exactly once."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import httpx
import pytest
import redis
from litestar.testing import TestClient
from redis.exceptions import ConnectionError as RedisConnectionError

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.games.settlement import Settlement
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from pyramide.service.stats.statistics import StatsStore
from tests.support.deals import EASY_CODE, WINNING
from tests.support.layouts import dead_end_moves, dead_end_start, easy_game
from tests.support.players import new_player
from tests.support.serving import serve_in_thread

Client = TestClient[Any]
EASY = DealCode.for_layout(easy_game().layout)


@pytest.fixture
def crash_settings(settings: Settings) -> Settings:
    """Pending statistics are settled at once when read (no grace for requests still running)."""
    return settings.but(play={"settlement_grace_s": 0.0})


@pytest.fixture
def crash_client(crash_settings: Settings) -> Iterator[Client]:
    with TestClient(create_app(crash_settings), raise_server_exceptions=False) as test_client:
        yield test_client


def _easy(client: Client, player: dict[str, str]) -> str:
    created = client.post("/v1/games", json={"code": EASY_CODE}, headers=player)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def _play(client: Client, player: dict[str, str], game: str, moves: list[dict[str, Any]], *,
          clock: FakeClock | None = None, step_ms: int = 1000) -> dict[str, Any]:  # fmt: skip
    snapshot: dict[str, Any] = {}
    for move in moves:
        response = client.post(f"/v1/games/{game}/moves", json=move, headers=player)
        assert response.status_code == 200, response.text
        snapshot = response.json()
        if clock is not None:
            clock.advance(step_ms / 1000)
    return snapshot


def _win(client: Client, player: dict[str, str], clock: FakeClock | None = None, step_ms: int = 1000,
         extra: list[dict[str, Any]] | None = None) -> dict[str, Any]:  # fmt: skip
    game = _easy(client, player)
    return _play(client, player, game, [*(extra or []), *WINNING], clock=clock, step_ms=step_ms)


def _lose_stuck(client: Client, player: dict[str, str]) -> dict[str, Any]:
    created = client.post("/v1/games", json={"layout": dead_end_start().code.to_json()}, headers=player).json()
    snapshot = _play(client, player, created["id"], [move_body(m) for m in dead_end_moves(moves_left=0)])
    assert snapshot["status"] == "stuck"
    return snapshot


def _abandon_after_a_move(client: Client, player: dict[str, str]) -> None:
    game = _easy(client, player)
    _play(client, player, game, [{"type": "draw"}])
    assert client.post(f"/v1/games/{game}/abandon", headers=player).json()["status"] == "abandoned"


def _stats(client: Client, player: dict[str, str]) -> dict[str, Any]:
    response = client.get("/v1/players/me/stats", headers=player)
    assert response.status_code == 200, response.text
    stats: dict[str, Any] = response.json()
    return stats


def test_a_win_is_counted_with_server_time_and_moves(client: Client, player: dict[str, str], clock: FakeClock) -> None:
    assert _stats(client, player)["played"] == 0
    won = _win(client, player, clock, step_ms=250)
    assert won["status"] == "won" and won["elapsed_ms"] == 15 * 250  # first move to the win, by the server's clock
    stats = _stats(client, player)
    del stats["par_hits"], stats["best_over_par"]  # counted once the par is worked out: test_par_results.py
    assert stats | {"since": None} == {
        "played": 1, "won": 1, "lost": 0, "in_progress": 0, "win_rate": 1.0, "current_streak": 1, "best_streak": 1,
        "best_time_ms": 3750, "fewest_moves": 16, "average_time_ms": 3750, "average_moves": 16.0, "hints_used": 0,
        "since": None,
    }  # fmt: skip
    (entry,) = client.get("/v1/players/me/wins", headers=player).json()["entries"]
    assert entry["rank"] == 1 and entry["code"] == EASY_CODE and entry["game_id"] == won["id"]
    assert (entry["elapsed_ms"], entry["moves"], entry["undos"], entry["hints"], entry["score"]) == (
        3750,
        16,
        0,
        0,
        280,
    )
    board = client.get(f"/v1/leaderboards/{EASY_CODE}").json()
    assert board["code"] == EASY_CODE and board["next_cursor"] is None
    (top,) = board["entries"]
    assert top["elapsed_ms"] == 3750 and top["moves"] == 16 and "game_id" not in top
    assert top["player"] == client.get("/v1/players/me", headers=player).json()["id"]


def test_a_game_counts_once_a_move_is_made(client: Client, player: dict[str, str]) -> None:
    game = _easy(client, player)
    assert _stats(client, player)["played"] == 0
    client.post(f"/v1/games/{game}/abandon", headers=player)  # no move made: not a game played
    assert _stats(client, player)["played"] == 0
    _play(client, player, _easy(client, player), [{"type": "draw"}])
    assert _stats(client, player) | {"since": None} == _stats(client, player) | {
        "played": 1, "won": 0, "lost": 0, "in_progress": 1, "win_rate": 0.0, "since": None
    }  # fmt: skip


def test_streaks_across_wins_and_losses(client: Client, player: dict[str, str], redis_client: redis.Redis) -> None:
    pending = keyspace.statistics(UUID(client.get("/v1/players/me", headers=player).json()["id"])).pending
    seen = []
    for step in ("win", "win", "abandon", "win", "win", "win", "stuck", "win"):
        if step == "win":
            _win(client, player)
        elif step == "abandon":
            _abandon_after_a_move(client, player)
        else:
            _lose_stuck(client, player)
        assert redis_client.zcard(pending) == 0, "every start and end settled by its own request"
        stats = _stats(client, player)
        seen.append((stats["current_streak"], stats["best_streak"]))
    assert seen == [(1, 1), (2, 2), (0, 2), (1, 2), (2, 2), (3, 3), (0, 3), (1, 3)]
    stats = _stats(client, player)
    assert (stats["played"], stats["won"], stats["lost"], stats["win_rate"]) == (8, 6, 2, 0.75)


def test_a_dead_end_is_lost_once_even_when_undone_and_reached_again(client: Client, player: dict[str, str]) -> None:
    stuck = _lose_stuck(client, player)
    url = f"/v1/games/{stuck['id']}/moves"
    undone = client.post(url, json={"type": "undo"}, headers=player).json()
    assert undone["status"] == "in_progress"
    last = next(m for m in undone["legal_moves"] if m not in ("D", "R"))
    assert client.post(url, json=move_body(parse_record(last)[0]), headers=player).json()["status"] == "stuck"
    stats = _stats(client, player)
    assert (stats["played"], stats["lost"], stats["current_streak"]) == (1, 1, 0)


def test_wins_and_the_leaderboard_rank_by_time_then_moves_then_finish(client: Client, clock: FakeClock) -> None:
    """Five players on one deal: ties on time fall to moves, ties on both to the earlier finish."""
    players = [new_player(client) for _ in range(5)]
    draw = [{"type": "draw"}]
    # (player, time per move, extra draws): totals (time, moves) below
    plays = [(0, 200, 0), (1, 100, 0), (2, 94, 1), (3, 100, 0), (4, 300, 0)]
    for index, step, draws in plays:
        _win(client, players[index], clock, step_ms=step, extra=draw * draws)
        clock.advance(60)
    board = client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]
    ids = [client.get("/v1/players/me", headers=p).json()["id"] for p in players]
    ranked = [(ids.index(e["player"]), e["elapsed_ms"], e["moves"], e["rank"]) for e in board]
    assert ranked == [(1, 1500, 16, 1), (3, 1500, 16, 2), (2, 1504, 17, 3), (0, 3000, 16, 4), (4, 4500, 16, 5)]
    assert board[0]["finished_at"] < board[1]["finished_at"]  # same time and moves: the earlier finish first
    # a slower win leaves a player's best where it is; a faster one replaces it: each player appears once
    _win(client, players[4], clock, step_ms=400)
    _win(client, players[0], clock, step_ms=50)
    board = client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]
    assert [ids.index(e["player"]) for e in board] == [0, 1, 3, 2, 4]
    assert board[0]["elapsed_ms"] == 750 and board[-1]["elapsed_ms"] == 4500


def test_pages_follow_the_cursor_to_the_end(client: Client, player: dict[str, str], clock: FakeClock) -> None:
    for step in (700, 100, 500, 300, 600, 200, 400):
        _win(client, player, clock, step_ms=step)
    seen: list[int] = []
    ranks: list[int] = []
    cursor = None
    for _ in range(10):
        query = {"limit": 3} | ({"cursor": cursor} if cursor else {})
        page = client.get("/v1/players/me/wins", params=query, headers=player).json()
        seen += [e["elapsed_ms"] for e in page["entries"]]
        ranks += [e["rank"] for e in page["entries"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [15 * s for s in (100, 200, 300, 400, 500, 600, 700)]
    assert ranks == list(range(1, 8))
    board = client.get(f"/v1/leaderboards/{EASY_CODE}", params={"limit": 1}).json()
    assert len(board["entries"]) == 1 and board["next_cursor"] is None  # one player: one entry


def test_hints_and_undos_are_counted_and_still_ranked(client: Client, player: dict[str, str]) -> None:
    game = _easy(client, player)
    _play(client, player, game, [{"type": "draw"}, {"type": "undo"}])
    assert client.get(f"/v1/games/{game}/hint", headers=player).status_code == 200
    _play(client, player, game, WINNING)
    (entry,) = client.get("/v1/players/me/wins", headers=player).json()["entries"]
    assert (entry["undos"], entry["hints"], entry["moves"]) == (1, 1, 17)
    assert _stats(client, player)["hints_used"] == 1
    assert client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"][0]["hints"] == 1


def test_players_see_only_their_own_statistics(client: Client, player: dict[str, str]) -> None:
    _win(client, player)
    other = new_player(client)
    assert _stats(client, other)["played"] == 0
    assert client.get("/v1/players/me/wins", headers=other).json() == {"entries": [], "next_cursor": None}
    assert _stats(client, player)["won"] == 1


def test_a_reset_starts_afresh_and_leaderboards_keep_their_entries(client: Client, player: dict[str, str]) -> None:
    _win(client, player)
    _lose_stuck(client, player)
    reset = client.delete("/v1/players/me/stats", headers=player)
    assert reset.status_code == 200
    fresh = reset.json()
    assert fresh["played"] == fresh["won"] == fresh["best_streak"] == 0 and fresh["since"] is not None
    assert client.get("/v1/players/me/wins", headers=player).json()["entries"] == []
    assert len(client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]) == 1
    _win(client, player)
    assert (_stats(client, player)["played"], _stats(client, player)["won"]) == (1, 1)


def test_a_repeated_finishing_request_counts_once(client: Client, player: dict[str, str]) -> None:
    game = _easy(client, player)
    _play(client, player, game, WINNING[:-1])
    key = {**player, "Idempotency-Key": "the-winning-move"}
    first = client.post(f"/v1/games/{game}/moves", json=WINNING[-1], headers=key)
    again = client.post(f"/v1/games/{game}/moves", json=WINNING[-1], headers=key)
    assert first.status_code == again.status_code == 200 and first.content == again.content
    unkeyed = client.post(f"/v1/games/{game}/moves", json=WINNING[-1], headers=player)
    assert unkeyed.status_code == 409 and unkeyed.json()["code"] == "game_over"
    assert (_stats(client, player)["won"], _stats(client, player)["played"]) == (1, 1)
    assert len(client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]) == 1


def test_concurrent_finishing_requests_count_once(app: Any) -> None:
    with serve_in_thread(app) as url:
        won, stats, board = asyncio.run(_race_to_win(url, clients=12))
    assert won == 1
    assert (stats["won"], stats["played"], stats["current_streak"]) == (1, 1, 1)
    assert len(board["entries"]) == 1


async def _race_to_win(url: str, clients: int) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """``clients`` connections send the winning move of one game at once; how many won, and what was counted."""
    async with httpx.AsyncClient(base_url=url, limits=httpx.Limits(max_connections=clients + 4)) as client:
        token = (await client.post("/v1/players", json={})).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        game = (await client.post("/v1/games", json={"code": EASY_CODE}, headers=auth)).json()["id"]
        for move in WINNING[:-1]:
            assert (await client.post(f"/v1/games/{game}/moves", json=move, headers=auth)).status_code == 200
        answers = await asyncio.gather(
            *(client.post(f"/v1/games/{game}/moves", json=WINNING[-1], headers=auth) for _ in range(clients))
        )
        assert sorted({a.status_code for a in answers}) == [200, 409]
        stats = (await client.get("/v1/players/me/stats", headers=auth)).json()
        board = (await client.get(f"/v1/leaderboards/{EASY_CODE}")).json()
    return sum(a.status_code == 200 for a in answers), stats, board


def test_a_crash_between_the_game_and_its_statistics_is_repaired_once(
    crash_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process dies after the game's final state is stored and before any statistics are written: the game
    stays pending, and the next read of the statistics settles it, once."""
    player = new_player(crash_client)
    original = Settlement.record
    calls = itertools.count()

    async def dies(self: Settlement, *args: Any, **kwargs: Any) -> None:
        next(calls)  # the request ends here: nothing after the save is written

    monkeypatch.setattr(Settlement, "record", dies)
    game = _easy(crash_client, player)
    _play(crash_client, player, game, WINNING)
    assert next(calls) == 2  # the start and the win were both left pending
    monkeypatch.setattr(Settlement, "record", original)
    for _ in range(3):
        stats = _stats(crash_client, player)
        assert (stats["played"], stats["won"], stats["current_streak"], stats["best_time_ms"] is not None) == (
            1, 1, 1, True
        )  # fmt: skip
    assert len(crash_client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]) == 1
    (entry,) = crash_client.get("/v1/players/me/wins", headers=player).json()["entries"]
    assert entry["game_id"] == game


def test_a_failure_after_the_leaderboard_entry_leaves_the_win_pending_and_it_is_counted_once(
    crash_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A win goes on the leaderboard before the statistics record it and take it off the pending list in one step:
    Redis failing in between leaves it pending, and the next read of the statistics counts it, once."""
    player = new_player(crash_client)
    original = StatsStore.record_result

    async def fails(self: StatsStore, *args: Any, **kwargs: Any) -> bool:
        raise RedisConnectionError("gone mid-settlement")

    monkeypatch.setattr(StatsStore, "record_result", fails)
    _play(crash_client, player, _easy(crash_client, player), WINNING)
    assert len(crash_client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]) == 1
    monkeypatch.setattr(StatsStore, "record_result", original)
    for _ in range(3):
        stats = _stats(crash_client, player)
        assert (stats["played"], stats["won"], stats["in_progress"]) == (1, 1, 0)
    assert len(crash_client.get("/v1/players/me/wins", headers=player).json()["entries"]) == 1
    assert len(crash_client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]) == 1


def test_a_request_still_running_is_not_settled_from_outside(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within the grace period a pending game belongs to its request: a read does not settle it behind its back."""
    player = new_player(client)

    async def still_running(self: Settlement, *args: Any, **kwargs: Any) -> None:
        return None

    monkeypatch.setattr(Settlement, "record", still_running)
    _play(client, player, _easy(client, player), WINNING)
    assert _stats(client, player)["won"] == 0


@pytest.mark.parametrize("language", ["hu", "en"])
def test_statistics_errors_in_both_languages(client: Client, language: str) -> None:
    lang = {"Accept-Language": language}
    for response in (
        client.get("/v1/players/me/stats", headers=lang),
        client.delete("/v1/players/me/stats", headers=lang),
        client.get("/v1/players/me/wins", headers=lang),
    ):
        assert response.status_code == 401 and response.json()["code"] == "unauthorized"
        assert response.headers["content-language"] == language
    bad_limit = client.get(f"/v1/leaderboards/{EASY_CODE}", params={"limit": 0}, headers=lang)
    bad_cursor = client.get(f"/v1/leaderboards/{EASY_CODE}", params={"cursor": "x"}, headers=lang)
    unknown = client.get(f"/v1/leaderboards/{EASY_CODE}", params={"page": 2}, headers=lang)
    assert "page" in unknown.json()["detail"]
    for response, name in ((bad_limit, "limit"), (bad_cursor, "cursor"), (unknown, "page")):
        assert response.status_code == 400 and response.json()["code"] == "bad_request"
        assert response.headers["content-language"] == language
        assert [e["query"] for e in response.json()["errors"]] == [name]
    bad_code = client.get("/v1/leaderboards/PY1-N-AAAAAA", headers=lang)
    assert bad_code.status_code == 422 and bad_code.json()["code"] == "invalid_deal_code"
    assert bad_code.headers["content-language"] == language


def test_an_unplayed_deal_has_an_empty_leaderboard(client: Client) -> None:
    board = client.get("/v1/leaderboards/py1 n aaaaaas").json()
    assert board == {
        "code": "PY1-N-AAAAAAS",
        "rules": board["rules"],
        "verified": False,
        "par": None,
        "par_status": "pending",
        "entries": [],
        "next_cursor": None,
        "rank": None,
        "percentile": None,
    }


def test_leaderboards_show_the_names_players_chose(client: Client, clock: FakeClock) -> None:
    ana = {"Authorization": f"Bearer {client.post('/v1/players', json={'name': 'Ana'}).json()['token']}"}
    nameless = new_player(client)
    _win(client, ana, clock, step_ms=100)
    _win(client, nameless, clock, step_ms=200)
    board = client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]
    assert [e["name"] for e in board] == ["Ana", None]
    renamed = client.patch("/v1/players/me", json={"name": "Ana Kovács"}, headers=ana)
    assert renamed.status_code == 200 and renamed.json()["name"] == "Ana Kovács"
    assert client.get("/v1/players/me", headers=ana).json()["name"] == "Ana Kovács"
    _win(client, ana, clock, step_ms=50)  # a better win: the entry is replaced, with the name of now
    assert client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"][0]["name"] == "Ana Kovács"


@pytest.mark.parametrize("name", ["", "x" * 25, "tab\there", 7])
def test_names_are_short_printable_text(client: Client, name: object) -> None:
    response = client.post("/v1/players", json={"name": name})
    assert response.status_code == 422 and response.json()["code"] == "validation_failed"
