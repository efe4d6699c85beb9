"""Who and what ranks on the boards (issue 42): the attacks on the daily challenge's board, played for real over
HTTP by bots that know nothing but the public API, and the tiers and identities every board shows.

The bots: two players (a throwaway draws the whole stock, the public analysis of the now known layout gives the
shortest line, a second player plays it at once); one player that draws every card and undoes every draw before
playing the line; and one that plays the line at a steady 150 ms a move, with real sleeps.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

import httpx
import pytest
from litestar.testing import TestClient

from pyramide.engine import parse_move
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.clock import SystemClock
from pyramide.service.infra.settings import Settings
from tests.support.serving import serve_in_thread

TWO_STOCK: Final = {"recycles": 2, "stock_waste_pairs": True, "cover_pairs": False, "strict_win": False}
"""The ``2S`` preset: its winning lines are about 70 moves, where ``N``'s run to 150 and more."""


"""Every test here reads today's challenge once and plays it to the end: the service's clock keeps clear of midnight."""


@contextmanager
def _served(settings: Settings, **changes: Any) -> Iterator[str]:
    """The app with ``changes`` to the test settings, served on loopback."""
    # the system clock: these players pause with real sleeps, and the pace is what fair play judges
    with serve_in_thread(create_app(settings.but(**changes), clock=SystemClock())) as url:
        yield url


def _player(http: httpx.Client, name: str) -> dict[str, str]:
    response = http.post("/v1/players", json={"name": name})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def _move(http: httpx.Client, auth: dict[str, str], game: str, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post(f"/v1/games/{game}/moves", json=body, headers=auth)
    assert response.status_code == 200, response.text
    snapshot: dict[str, Any] = response.json()
    return snapshot


def _start(http: httpx.Client, auth: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    response = http.post("/v1/games", json=body, headers=auth)
    assert response.status_code == 201, response.text
    snapshot: dict[str, Any] = response.json()
    return snapshot


def _line_of(http: httpx.Client, auth: dict[str, str], game: dict[str, Any], stock: list[str]) -> list[str]:
    """What a bot learns once it has seen every card: the public analysis's shortest line of the layout, whose
    code an ordinary game of that layout shows."""
    pyramid: list[list[str]] = [[] for _ in range(7)]
    for slot in sorted(game["pyramid"], key=lambda s: (s["row"], s["col"])):
        pyramid[slot["row"] - 1].append(slot["card"])
    layout = {"rules": game["rules"], "pyramid": pyramid, "waste": [game["waste"]["top"]], "stock": stock}
    code = _start(http, auth, {"layout": layout})["code"]
    analysis = http.get(f"/v1/deals/{code}/analysis", params={"shortest": "true"}, timeout=30)
    assert analysis.status_code == 200, analysis.text
    assert analysis.json()["winnable"] is True
    line: list[str] = analysis.json()["shortest"] or analysis.json()["line"]
    return line


def _draw_all(http: httpx.Client, auth: dict[str, str], game: dict[str, Any]) -> list[str]:
    """Draw the whole stock of a game, noting each card drawn: the stock is the only face-down part."""
    stock, snapshot = [], game
    while snapshot["stock"]["count"] > 0:
        snapshot = _move(http, auth, game["id"], {"type": "draw"})
        stock.append(snapshot["waste"]["top"])
    return stock


def _play(http: httpx.Client, auth: dict[str, str], game: str, line: list[str], pause_s: float = 0.0) -> dict[str, Any]:
    """Play a line to the win, pausing ``pause_s`` before each move after the first."""
    snapshot: dict[str, Any] = {}
    for index, notation in enumerate(line):
        if index and pause_s:
            time.sleep(pause_s)
        snapshot = _move(http, auth, game, move_body(parse_move(notation)))
    assert snapshot["status"] == "won", snapshot
    return snapshot


def _two_player_bot(http: httpx.Client, challenge: str) -> dict[str, str]:
    """A throwaway learns the deal; a second player plays the shortest line at full speed. The second's token."""
    throwaway = _player(http, "Throwaway")
    first = _start(http, throwaway, {"challenge": challenge})
    line = _line_of(http, throwaway, first, _draw_all(http, throwaway, first))
    player = _player(http, "Two-player bot")
    _play(http, player, _start(http, player, {"challenge": challenge})["id"], line)
    return player


def _draw_undo_bot(http: httpx.Client, challenge: str, pause_s: float = 0.0, name: str = "Draw-undo bot") -> str:
    """One player, one attempt: draw every card, undo every draw, play the shortest line."""
    player = _player(http, name)
    game = _start(http, player, {"challenge": challenge})
    stock = _draw_all(http, player, game)
    for _ in stock:
        _move(http, player, game["id"], {"type": "undo"})
    _play(http, player, game["id"], _line_of(http, player, game, stock), pause_s)
    return name


def _board(http: httpx.Client, challenge: str, **params: str) -> list[dict[str, Any]]:
    response = http.get(f"/v1/challenges/{challenge}/leaderboard", params=params)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["entries"]
    return entries


def test_a_clean_human_paced_win_ranks_above_a_faster_assisted_one(settings: Settings) -> None:
    """Clean wins first whatever the times: the assisted player (one draw undone) is faster, and second. Both play
    at a human pace for a floor of 20 ms (80 ms and 25 ms pauses: the clean one slower by seconds, more than a loaded
    machine's stalls add to the assisted one's time), so both rank."""
    with _served(settings, challenges={"min_move_ms": 20}) as url, httpx.Client(base_url=url) as http:
        challenge = http.get("/v1/challenges/current?rules=2S").json()["id"]
        learner = _player(http, "Learner")
        first = _start(http, learner, {"challenge": challenge})
        line = _line_of(http, learner, first, _draw_all(http, learner, first))
        clean = _player(http, "Clean")
        _play(http, clean, _start(http, clean, {"challenge": challenge})["id"], line, pause_s=0.08)
        assisted = _player(http, "Assisted")
        game = _start(http, assisted, {"challenge": challenge})["id"]
        _move(http, assisted, game, {"type": "draw"})
        time.sleep(0.025)
        _move(http, assisted, game, {"type": "undo"})
        time.sleep(0.025)
        _play(http, assisted, game, line, pause_s=0.025)
        entries = _board(http, challenge)
        assert [(e["name"], e["rank"], e["tier"]) for e in entries] == [
            ("Clean", 1, "clean"),
            ("Assisted", 2, "assisted"),
        ]
        assert entries[1]["elapsed_ms"] < entries[0]["elapsed_ms"], "the assisted win was the faster"
        assert all(e["identity"] == "anonymous" and e["app"] is None for e in entries)
        assert [e["name"] for e in _board(http, challenge, identity="anonymous")] == ["Clean", "Assisted"]
        assert _board(http, challenge, identity="app") == []
        page = http.get(f"/v1/challenges/{challenge}/leaderboard", params={"limit": 1}).json()
        rest = _board(http, challenge, limit="1", cursor=page["next_cursor"])
        assert [e["name"] for e in rest] == ["Assisted"], "the next page starts after the clean tier"


def test_per_code_boards_rank_clean_first_and_keep_a_player_s_clean_win(settings: Settings) -> None:
    """On a deal code's board too: a fast assisted win ranks after a slow clean one, and a player's clean win stays
    their entry when they later win faster with an undo."""
    with _served(settings) as url, httpx.Client(base_url=url) as http:
        probe = _player(http, "Probe")
        game = _start(http, probe, {"rules": TWO_STOCK, "winnable_only": True})
        code = game["code"]
        line = _line_of(http, probe, game, _draw_all(http, probe, game))
        slow = _player(http, "Slow clean")
        _play(http, slow, _start(http, slow, {"code": code})["id"], line, pause_s=0.01)
        fast = _player(http, "Fast assisted")
        played = _start(http, fast, {"code": code})["id"]
        _move(http, fast, played, {"type": "draw"})
        _move(http, fast, played, {"type": "undo"})
        _play(http, fast, played, line)
        board = http.get(f"/v1/leaderboards/{code}").json()["entries"]
        assert [(e["name"], e["tier"]) for e in board] == [("Slow clean", "clean"), ("Fast assisted", "assisted")]
        again = _start(http, slow, {"code": code})["id"]
        _move(http, slow, again, {"type": "draw"})
        _move(http, slow, again, {"type": "undo"})
        _play(http, slow, again, line)
        board = http.get(f"/v1/leaderboards/{code}").json()["entries"]
        assert [(e["name"], e["tier"]) for e in board] == [("Slow clean", "clean"), ("Fast assisted", "assisted")]
        assert board[0]["undos"] == 0, "the clean win is still the entry, though the new one was faster"
        assert [e["name"] for e in http.get(f"/v1/leaderboards/{code}?identity=anonymous").json()["entries"]] == [
            "Slow clean",
            "Fast assisted",
        ]
        assert http.get(f"/v1/leaderboards/{code}?identity=app").json()["entries"] == []


@pytest.mark.parametrize("path", ["/v1/leaderboards/PY1-N-AAAAAAS", "/v1/challenges/current/leaderboard"])
def test_an_unknown_identity_filter_is_a_localised_problem(client: TestClient[Any], path: str) -> None:
    """``identity`` takes ``app`` or ``anonymous``; anything else is a 400 problem in the caller's language."""
    if "current" in path:
        path = path.replace("current", client.get("/v1/challenges/current").json()["id"])
    assert client.get(f"{path}?identity=app").status_code == 200
    response = client.get(f"{path}?identity=robot", headers={"Accept-Language": "en"})
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == "bad_request" and "identity" in response.text
    hungarian = client.get(f"{path}?identity=robot")
    assert hungarian.status_code == 400 and hungarian.json()["title"] != response.json()["title"]


def test_with_app_players_only_an_app_player_plays_and_ranks(settings: Settings) -> None:
    """``PYRAMIDE_CHALLENGE_PLAYERS=app``: an anonymous player may not start the challenge (403
    ``app_player_required``, issue 57) and takes no part; an app's player's win ranks, saying so and naming the app,
    and each identity filter shows its own."""
    with (
        _served(settings, challenges={"players": "app"}, secrets={"operator_key": OPERATOR_KEY}) as url,
        httpx.Client(base_url=url) as http,
    ):
        challenge = http.get("/v1/challenges/current?rules=2S").json()["id"]
        anonymous = _player(http, "Anonymous")
        refused = http.post("/v1/games", json={"challenge": challenge}, headers=anonymous)
        assert refused.status_code == 403 and refused.json()["code"] == "app_player_required", refused.text
        assert http.get(f"/v1/challenges/{challenge}", headers=anonymous).json()["you"] is None

        created = http.post("/v1/admin/apps", json={"name": "Kártya Klub", "scopes": ["players"]}, headers=OPERATOR)
        assert created.status_code == 201, created.text
        learner = {"Authorization": f"Bearer {created.json()['key']}", "Pyramide-Player": "learner"}
        first = _start(http, learner, {"challenge": challenge})
        line = _line_of(http, learner, first, _draw_all(http, learner, first))
        member = {"Authorization": f"Bearer {created.json()['key']}", "Pyramide-Player": "user-42"}
        assert http.patch("/v1/players/me", json={"name": "Zsófi"}, headers=member).status_code == 200
        _play(http, member, _start(http, member, {"challenge": challenge})["id"], line)
        entries = _board(http, challenge)
        assert [(e["name"], e["identity"], e["app"], e["rank"]) for e in entries] == [
            ("Zsófi", "app", "Kártya Klub", 1)
        ]
        assert _board(http, challenge, identity="app") == entries
        assert _board(http, challenge, identity="anonymous") == []


OPERATOR_KEY = "operator-key-for-the-review-tests-0123456789"
OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}


def _reviews(http: httpx.Client, **params: str) -> list[dict[str, Any]]:
    response = http.get("/v1/admin/reviews", params=params, headers=OPERATOR)
    assert response.status_code == 200, response.text
    entries: list[dict[str, Any]] = response.json()["entries"]
    return entries


def test_held_wins_wait_for_a_moderator_who_accepts_or_rejects_them(settings: Settings) -> None:
    """Both bots' wins are held with their record and timings (under the default floor, 150 ms); the operator
    accepts one (it enters the board as it would have: the draw/undo bot's, assisted) and rejects the other (it
    never does); each decision is audited once; the other decision is 409; an
    app's moderator may not decide an anonymous player's win; a player token is no admin key."""
    with (
        _served(settings, challenges={"min_move_ms": 150}, secrets={"operator_key": OPERATOR_KEY}) as url,
        httpx.Client(base_url=url) as http,
    ):
        challenge = http.get("/v1/challenges/current?rules=2S").json()["id"]
        two_player = _two_player_bot(http, challenge)
        _draw_undo_bot(http, challenge)
        assert _board(http, challenge) == []
        held = _reviews(http)
        assert [(r["name"], r["status"]) for r in held] == [("Two-player bot", "pending"), ("Draw-undo bot", "pending")]
        bot, undoer = held
        assert bot["median_interval_ms"] < 150 and bot["tier"] == "clean" and undoer["tier"] == "assisted"
        assert len(bot["times_ms"]) == len(bot["record"]) == bot["moves"] == bot["operations"]
        assert bot["times_ms"][0] == 0 and bot["times_ms"] == sorted(bot["times_ms"])
        assert undoer["record"][:2] == ["D", "D"] and "U" in undoer["record"] and undoer["undos"] == 23

        moderator = http.post("/v1/admin/apps", json={"name": "Klub", "scopes": ["moderation"]}, headers=OPERATOR)
        app_key = {"Authorization": f"Bearer {moderator.json()['key']}"}
        refused = http.post(f"/v1/admin/reviews/{undoer['id']}/reject", json={"reason": "mine?"}, headers=app_key)
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
        refused = http.post(f"/v1/admin/reviews/{undoer['id']}/accept", json={"reason": "mine?"}, headers=app_key)
        assert refused.status_code == 403 and refused.json()["code"] == "operator_only"
        assert http.get("/v1/admin/reviews", headers=two_player).status_code == 401

        accepted = http.post(f"/v1/admin/reviews/{undoer['id']}/accept", json={"reason": "seen it"}, headers=OPERATOR)
        assert accepted.status_code == 200 and accepted.json()["status"] == "accepted", accepted.text
        again = http.post(f"/v1/admin/reviews/{undoer['id']}/accept", json={"reason": "twice"}, headers=OPERATOR)
        assert again.status_code == 200 and again.json()["reason"] == "seen it", "accepting again changes nothing"
        rejected = http.post(f"/v1/admin/reviews/{bot['id']}/reject", json={"reason": "a bot"}, headers=OPERATOR)
        assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
        crossed = http.post(
            f"/v1/admin/reviews/{bot['id']}/accept", json={}, headers={**OPERATOR, "Accept-Language": "en"}
        )
        assert crossed.status_code == 409 and crossed.json()["code"] == "review_already_decided"
        assert crossed.headers["content-type"].startswith("application/problem+json")
        missing = http.post(f"/v1/admin/reviews/{uuid.uuid4()}/reject", json={}, headers=OPERATOR)
        assert missing.status_code == 404 and missing.json()["code"] == "review_not_found"

        entries = _board(http, challenge)
        assert [(e["name"], e["tier"], e["rank"]) for e in entries] == [("Draw-undo bot", "assisted", 1)]
        assert [r["status"] for r in _reviews(http)] == ["rejected", "accepted"], "latest decided first"
        audit = http.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]
        decisions = [(e["action"], e["reason"], e["actor"]) for e in audit if e["action"].endswith("_review")]
        assert decisions == [("reject_review", "a bot", "operator"), ("accept_review", "seen it", "operator")]
        assert all(e["target"] in {f"player:{bot['player']}", f"player:{undoer['player']}"} for e in audit[:2])


def test_erasing_a_player_takes_its_held_win_off_the_review_list(settings: Settings) -> None:
    """A held win names the player and keeps its record: erasing the player takes it away with everything else."""
    with (
        _served(settings, challenges={"min_move_ms": 150}, secrets={"operator_key": OPERATOR_KEY}) as url,
        httpx.Client(base_url=url) as http,
    ):
        challenge = http.get("/v1/challenges/current?rules=2S").json()["id"]
        bot = _two_player_bot(http, challenge)
        assert [r["name"] for r in _reviews(http)] == ["Two-player bot"]
        assert http.delete("/v1/players/me", headers=bot).status_code == 204
        assert _reviews(http) == []


def test_a_review_keeps_a_long_game_s_first_500_operations(settings: Settings) -> None:
    """A review stays small however long the held game was: 520 draws and undos before the line, and the review
    says how many operations there were but keeps the first 500 with their times."""
    with (
        _served(settings, challenges={"min_move_ms": 150}, secrets={"operator_key": OPERATOR_KEY}) as url,
        httpx.Client(base_url=url) as http,
    ):
        challenge = http.get("/v1/challenges/current?rules=2S").json()["id"]
        learner = _player(http, "Learner")
        first = _start(http, learner, {"challenge": challenge})
        line = _line_of(http, learner, first, _draw_all(http, learner, first))
        long_player = _player(http, "Long")
        game = _start(http, long_player, {"challenge": challenge})["id"]
        for _ in range(260):
            _move(http, long_player, game, {"type": "draw"})
            _move(http, long_player, game, {"type": "undo"})
        _play(http, long_player, game, line)
        (review,) = _reviews(http)
        assert review["operations"] == 520 + len(line)
        assert len(review["record"]) == len(review["times_ms"]) == 500 and review["record"][:2] == ["D", "U"]


def test_an_accepted_win_of_a_banned_player_waits_for_the_unban(settings: Settings) -> None:
    """Accepting a banned player's held win puts it on the board no sooner than the player could be: it appears
    when the ban is lifted."""
    with (
        _served(settings, challenges={"min_move_ms": 150}, secrets={"operator_key": OPERATOR_KEY}) as url,
        httpx.Client(base_url=url) as http,
    ):
        challenge = http.get("/v1/challenges/current?rules=2S").json()["id"]
        _two_player_bot(http, challenge)
        (review,) = _reviews(http)
        player = review["player"]
        ban = http.post(f"/v1/admin/players/{player}/ban", json={"reason": "bot"}, headers=OPERATOR)
        assert ban.status_code == 200, ban.text
        accepted = http.post(f"/v1/admin/reviews/{review['id']}/accept", json={"reason": "ok"}, headers=OPERATOR)
        assert accepted.status_code == 200 and _board(http, challenge) == []
        unban = http.post(f"/v1/admin/players/{player}/unban", json={"reason": "fine"}, headers=OPERATOR)
        assert unban.status_code == 200, unban.text
        assert [e["name"] for e in _board(http, challenge)] == ["Two-player bot"]
