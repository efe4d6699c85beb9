"""Conditional GETs over real HTTP (uvicorn on a real Redis), issue 44: a client that holds a game, its record, a
deal or a board sends its ETag back in ``If-None-Match`` and gets 304 with that ETag and no body while the resource
is unchanged, and 200 with a new ETag once a move, a win or a board entry changed it. ``HEAD`` answers as ``GET``."""

from __future__ import annotations

import json
from typing import Any

import httpx
import redis

from pyramide.engine import DealCode, Game
from pyramide.engine.moves import parse_record
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.clock import FakeClock
from pyramide.solver import solve
from tests.support.clock import past_the_close
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.waiting import eventually

EASY_CODE = str(DealCode.for_layout(easy_game().layout))
WINNING = [move_body(m) for m in parse_record(EASY_CLEARING)]
VARYING = frozenset({"date", "x-request-id"})
"""Headers that differ between any two requests."""


def _player(api: httpx.Client) -> dict[str, str]:
    created = api.post("/v1/players", json={})
    assert created.status_code == 201, created.text
    return {"Authorization": f"Bearer {created.json()['token']}"}


def _game(api: httpx.Client, auth: dict[str, str], body: dict[str, Any]) -> str:
    created = api.post("/v1/games", json=body, headers=auth)
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def _play(api: httpx.Client, auth: dict[str, str], game: str, moves: list[dict[str, Any]]) -> None:
    for move in moves:
        played = api.post(f"/v1/games/{game}/moves", json=move, headers=auth)
        assert played.status_code == 200, played.text


def _paths(api: httpx.Client, game: str) -> list[str]:
    """The routes with ETags, once the deal's par (worked out in the background, issue 46) no longer changes it."""
    eventually(lambda: api.get(f"/v1/deals/{EASY_CODE}").json()["par_status"] != "pending", 20, what="the par")
    challenge = api.get("/v1/challenges/current")
    assert challenge.status_code == 200, challenge.text
    return [
        f"/v1/games/{game}", f"/v1/games/{game}/record", f"/v1/deals/{EASY_CODE}", f"/v1/leaderboards/{EASY_CODE}",
        f"/v1/challenges/{challenge.json()['id']}/leaderboard",
    ]  # fmt: skip


def _not_modified(response: httpx.Response, etag: str) -> None:
    assert response.status_code == 304, (response.request.url, response.status_code, response.text)
    assert response.content == b"" and "content-length" not in response.headers, response.headers
    assert "content-type" not in response.headers and response.headers["etag"] == etag


def test_every_etag_revalidates_to_304_with_no_body_and_head_answers_as_get(live_url: str) -> None:
    """Each route's ETag sent back (as it came, weak, in a list, or ``*``) is 304 with that ETag, the snapshot's
    language, no body and no Content-Length; another tag is the whole 200. HEAD of each is the GET's headers
    (Content-Length of its body) without the body, and 304 as GET is."""
    with httpx.Client(base_url=live_url, headers={"Accept-Language": "en"}) as api:
        auth = _player(api)
        api.headers.update(auth)
        game = _game(api, auth, {"code": EASY_CODE})
        for path in _paths(api, game):
            got = api.get(path)
            assert got.status_code == 200, (path, got.text)
            etag = got.headers["etag"]
            for header in (etag, f"W/{etag}", f'"nothing", {etag}', f'W/"x" ,W/{etag}', "*"):
                again = api.get(path, headers={"If-None-Match": header})
                _not_modified(again, etag)
                if path == f"/v1/games/{game}":
                    assert again.headers["content-language"] == "en"
            other = api.get(path, headers={"If-None-Match": '"nothing", W/"0123"'})
            assert other.status_code == 200 and other.content == got.content, path
            assert other.headers["etag"] == etag, path
            head = api.head(path)
            assert head.status_code == 200 and head.content == b"", path
            assert int(head.headers["content-length"]) == len(got.content), path
            same = {k: v for k, v in head.headers.items() if k not in VARYING}
            assert same == {k: v for k, v in got.headers.items() if k not in VARYING}, path
            _not_modified(api.head(path, headers={"If-None-Match": etag}), etag)


def test_a_move_a_win_and_a_board_entry_answer_200_with_a_new_etag(live_url: str, redis_client: redis.Redis) -> None:
    """The player's copies go stale when the resource changes: a move changes the game and its record; a win puts
    an entry on the code's board and, for the daily challenge won through the API, on the challenge's board. Each
    stale ETag is then answered with the whole new body and its new ETag, which revalidates in its turn."""
    with httpx.Client(base_url=live_url) as api:
        auth = _player(api)
        game = _game(api, auth, {"code": EASY_CODE})
        paths = _paths(api, game)
        held = {path: api.get(path, headers=auth) for path in paths}
        _play(api, auth, game, WINNING[:1])
        changed = _stale_then_fresh(api, auth, held)
        assert changed == paths[:2], changed  # the deal and the boards are as they were
        held = {path: api.get(path, headers=auth) for path in paths}
        _play(api, auth, game, WINNING[1:])
        assert _stale_then_fresh(api, auth, held) == [*paths[:2], paths[3]]
        board = api.get(paths[3]).json()["entries"]
        assert len(board) == 1 and board[0]["moves"] == len(WINNING)

        challenge = paths[4].split("/")[3]
        held = {paths[4]: api.get(paths[4])}
        assert held[paths[4]].json()["entries"] == []
        played = _game(api, auth, {"challenge": challenge})
        kept = redis_client.get(f"pyr:{{c:{challenge}}}:deal")
        assert kept is not None
        line = solve(Game(DealCode.parse(json.loads(kept)["code"]))).line
        _play(api, auth, played, [move_body(m) for m in line])
        assert _stale_then_fresh(api, auth, held) == [paths[4]]
        assert len(api.get(paths[4]).json()["entries"]) == 1


def _stale_then_fresh(api: httpx.Client, auth: dict[str, str], held: dict[str, httpx.Response]) -> list[str]:
    """The paths whose held ETag is now answered 200 with another body and ETag (that new ETag then 304); the others
    must still be 304."""
    changed = []
    for path, before in held.items():
        now = api.get(path, headers={**auth, "If-None-Match": before.headers["etag"]})
        if now.status_code == 304:
            _not_modified(now, before.headers["etag"])
            continue
        assert now.status_code == 200 and now.content != before.content, (path, now.status_code)
        assert now.headers["etag"] != before.headers["etag"], path
        again = api.get(path, headers={**auth, "If-None-Match": now.headers["etag"]})
        if _running(again):  # its clock runs, or its par may still appear: the whole body, under the same version
            assert again.headers["etag"] == now.headers["etag"], path
        else:
            _not_modified(again, now.headers["etag"])
        changed.append(path)
    return changed


def _running(response: httpx.Response) -> bool:
    """A game's 200 that is never 304: started, its clock running or finished (since issue 46 a finished game shows
    its deal's par, which appears without a new version)."""
    if response.status_code != 200 or "/record" in str(response.request.url) or "/games/" not in str(response.url):
        return False
    return response.json()["elapsed_ms"] is not None


def test_a_running_game_is_never_304_while_its_clock_grows(live_url: str, clock: FakeClock) -> None:
    """Found after the first work on issue 44: ``If-None-Match`` with the version's ETag was 304 while the body's
    ``elapsed_ms`` had grown, so a cache kept the old clock. Now a started, unfinished game is the whole 200 (same
    ETag, a later ``elapsed_ms``), that ETag still goes into a move's If-Match; the finished game is the whole 200
    too, since issue 46 (its par appears without a new version)."""
    with httpx.Client(base_url=live_url) as api:
        auth = _player(api)
        api.headers.update(auth)
        game = _game(api, auth, {"code": EASY_CODE})
        _play(api, auth, game, WINNING[:1])
        held = api.get(f"/v1/games/{game}")
        clock.advance(0.03)
        again = api.get(f"/v1/games/{game}", headers={"If-None-Match": held.headers["etag"]})
        assert again.status_code == 200, again.status_code
        assert again.headers["etag"] == held.headers["etag"]
        assert again.json()["elapsed_ms"] >= held.json()["elapsed_ms"] + 30
        moved = api.post(f"/v1/games/{game}/moves", json=WINNING[1], headers={"If-Match": again.headers["etag"]})
        assert moved.status_code == 200, moved.text
        _play(api, auth, game, WINNING[2:])
        won = api.get(f"/v1/games/{game}")
        assert won.json()["status"] == "won"
        again = api.get(f"/v1/games/{game}", headers={"If-None-Match": won.headers["etag"]})
        assert again.status_code == 200, "issue 46: its par appears with no new version, so never 304"
        assert again.headers["etag"] == won.headers["etag"]


def test_a_challenge_game_read_across_the_close_shows_its_code(
    live_url: str, redis_client: redis.Redis, clock: FakeClock
) -> None:
    """Found after the first work on issue 44: a challenge game won before the close withholds its ``code``; after
    the close the code shows with no new version, and the held ETag was answered 304, hiding it. Now the whole 200,
    code included, with the same ETag."""
    with httpx.Client(base_url=live_url) as api:
        auth = _player(api)
        api.headers.update(auth)
        challenge = api.get("/v1/challenges/current").json()["id"]
        game = _game(api, auth, {"challenge": challenge})
        kept = redis_client.get(f"pyr:{{c:{challenge}}}:deal")
        assert kept is not None
        _play(api, auth, game, [move_body(m) for m in solve(Game(DealCode.parse(json.loads(kept)["code"]))).line])
        held = api.get(f"/v1/games/{game}")
        assert held.json()["status"] == "won" and held.json()["code"] is None
        past_the_close(clock)
        after = api.get(f"/v1/games/{game}", headers={"If-None-Match": held.headers["etag"]})
        assert after.status_code == 200, after.status_code
        assert after.headers["etag"] == held.headers["etag"]
        assert after.json()["code"] == json.loads(kept)["code"]


def test_an_if_none_match_that_is_no_list_of_tags_is_a_localised_400(live_url: str) -> None:
    with httpx.Client(base_url=live_url) as api:
        auth = _player(api)
        game = _game(api, auth, {"code": EASY_CODE})
        for path in (f"/v1/games/{game}", f"/v1/deals/{EASY_CODE}", f"/v1/leaderboards/{EASY_CODE}"):
            for header in ('"unterminated', "7", "", 'W/"a" "b"'):
                for language, word in (("hu", "fejléc"), ("en", "header")):
                    refused = api.get(path, headers={**auth, "If-None-Match": header, "Accept-Language": language})
                    assert refused.status_code == 400, (path, header, refused.text)
                    assert refused.headers["content-type"] == "application/problem+json"
                    problem = refused.json()
                    assert problem["code"] == "invalid_if_none_match" and word in problem["detail"], problem
                    assert problem["errors"][0]["header"] == "If-None-Match"
