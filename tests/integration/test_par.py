"""A deal's par (issue 46): the length of its shortest winning line, worked out off the request path and shown by
``GET /v1/deals/{code}`` once known, through HTTP on a real server over the embedded Redis."""

from __future__ import annotations

import json
from typing import Any

import httpx
import redis
from litestar import Litestar
from litestar.testing import TestClient

from pyramide.engine import DealCode, Game
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from pyramide.solver import solve
from tests.support.deals import EASY_CODE, WINNING
from tests.support.par import _until_decided
from tests.support.waiting import drain, eventually

WON = "PY1-N-AAAAAAB"  # its shortest line is found in about 15 ms of one core
LOST = "PY1-0W-AAAALSP"  # proved unwinnable in a few milliseconds


def test_a_deals_par_appears_once_worked_out_and_is_its_shortest_line(app: Litestar, live_url: str) -> None:
    """The first read answers at once with the par pending; a later read carries the par, which is the number of
    moves of the shortest winning line the public analysis gives, and that line wins when played."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        first = client.get(f"/v1/deals/{WON}")
        assert first.status_code == 200
        assert (first.json()["par"], first.json()["par_status"]) == (None, "pending")
        decided = _until_decided(client, WON, app)
        shortest = client.get(f"/v1/deals/{WON}/analysis", params={"shortest": "true"}).json()["shortest"]
        assert decided["par_status"] == "known"
        assert decided["par"] == len(shortest) == 64
        assert decided["pyramid"] == first.json()["pyramid"]
        again = client.get(
            f"/v1/deals/{WON}", headers={"If-None-Match": client.get(f"/v1/deals/{WON}").headers["ETag"]}
        )
        assert again.status_code == 304


def test_a_lost_deal_says_so_with_a_null_par(app: Litestar, live_url: str) -> None:
    with httpx.Client(base_url=live_url, timeout=10) as client:
        decided = _until_decided(client, LOST, app)
        assert (decided["par"], decided["par_status"]) == (None, "unwinnable")
        assert client.get(f"/v1/deals/{LOST}/analysis").json()["winnable"] is False


def _player(client: httpx.Client) -> dict[str, str]:
    return {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}


def _win(client: httpx.Client, auth: dict[str, str], body: dict[str, Any], moves: list[dict[str, Any]]) -> str:
    game = client.post("/v1/games", json=body, headers=auth).json()["id"]
    for move in moves:
        assert client.post(f"/v1/games/{game}/moves", json=move, headers=auth).status_code == 200
    assert client.get(f"/v1/games/{game}", headers=auth).json()["status"] == "won"
    return str(game)


def _pars(body: object) -> list[object]:
    """Every value under a key ``par`` or ``over_par`` anywhere in a JSON body."""
    if isinstance(body, dict):
        found = [v for k, v in body.items() if k in ("par", "over_par")]
        return found + [p for v in body.values() for p in _pars(v)]
    if isinstance(body, list):
        return [p for v in body for p in _pars(v)]
    return []


def test_board_entries_show_par_and_over_par_and_an_open_challenge_shows_neither(
    app: Litestar, live_url: str, redis_client: redis.Redis
) -> None:
    """A win at par and one a draw over it, on the deal's board: `par` and `over_par` 0 and 1. The open daily
    challenge, won by a bot that read its line from the solver, shows no par through any route its player can call."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        _win(client, _player(client), {"code": EASY_CODE}, WINNING)
        _win(client, _player(client), {"code": EASY_CODE}, [{"type": "draw"}, *WINNING])
        assert _until_decided(client, EASY_CODE, app)["par"] == len(WINNING)
        board = client.get(f"/v1/leaderboards/{EASY_CODE}").json()
        assert (board["par"], board["par_status"]) == (len(WINNING), "known")
        assert sorted((e["moves"], e["par"], e["over_par"]) for e in board["entries"]) == [
            (len(WINNING), len(WINNING), 0),
            (len(WINNING) + 1, len(WINNING), 1),
        ]

        auth = _player(client)
        challenge = client.get("/v1/challenges/current").json()["id"]
        kept = redis_client.get(f"pyr:{{c:{challenge}}}:deal")
        assert kept is not None
        line = solve(Game(DealCode.parse(json.loads(kept)["code"])), shortest=True).line
        game = _win(client, auth, {"challenge": challenge}, [move_body(m) for m in line])
        for path in (
            f"/v1/challenges/{challenge}",
            f"/v1/challenges/{challenge}/leaderboard",
            f"/v1/challenges/{challenge}/leaderboard?around=me",
            "/v1/challenges/current",
            f"/v1/games/{game}",
            f"/v1/games/{game}/record",
            "/v1/players/me/stats",
            "/v1/players/me/wins",
            "/v1/players/me/games",
        ):
            answer = client.get(path, headers=auth)
            assert answer.status_code in (200, 400), (path, answer.text)
            assert all(p is None for p in _pars(answer.json())), path


def test_order_par_ranks_a_board_by_moves_over_par_and_pages_it(app: Litestar, live_url: str) -> None:
    """Three wins: three draws over par, one over and at par. `?order=par` ranks them 0, 1, 3 over par, one per page
    through the cursor; the default order stays the rules document's (fastest first); another order is a 400."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        over = {3: [{"type": "draw"}] * 3, 1: [{"type": "draw"}], 0: []}
        for extra in over.values():
            _win(client, _player(client), {"code": EASY_CODE}, [*extra, *WINNING])
        _until_decided(client, EASY_CODE, app)
        by_rules = client.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]
        assert [e["elapsed_ms"] for e in by_rules] == sorted(e["elapsed_ms"] for e in by_rules)
        seen, cursor = [], None
        for _ in range(4):
            params = {"order": "par", "limit": "1", **({"cursor": cursor} if cursor else {})}
            page = client.get(f"/v1/leaderboards/{EASY_CODE}", params=params).json()
            seen += [(e["rank"], e["over_par"]) for e in page["entries"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert seen == [(1, 0), (2, 1), (3, 3)]
        bad = client.get(f"/v1/leaderboards/{EASY_CODE}", params={"order": "fastest"})
        assert bad.status_code == 400 and bad.headers["content-type"] == "application/problem+json"


def test_around_me_shows_the_callers_neighbourhood_rank_and_percentile(live_url: str) -> None:
    """Twelve wins on a deal's board: `?around=me` for the one ranked 8th shows ranks 3 to 12 (five above, the four
    there are below), with rank 8 and percentile 5/12; a player not on the board gets no entries and null rank;
    without a token it is 401 problem+json."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        players = [_player(client) for _ in range(12)]
        for auth in players:
            _win(client, auth, {"code": EASY_CODE}, WINNING)
        board = client.get(f"/v1/leaderboards/{EASY_CODE}").json()
        assert (board["rank"], board["percentile"]) == (None, None)
        ids = [e["player"] for e in board["entries"]]
        eighth = players[[client.get("/v1/players/me", headers=a).json()["id"] for a in players].index(ids[7])]
        mine = client.get(f"/v1/leaderboards/{EASY_CODE}", params={"around": "me"}, headers=eighth).json()
        assert [e["rank"] for e in mine["entries"]] == list(range(3, 13))
        assert [e["player"] for e in mine["entries"]] == ids[2:12]
        assert (mine["rank"], mine["percentile"]) == (8, round(100 * 5 / 12, 1))
        stranger = client.get(f"/v1/leaderboards/{EASY_CODE}", params={"around": "me"}, headers=_player(client))
        assert (stranger.json()["entries"], stranger.json()["rank"], stranger.json()["percentile"]) == ([], None, None)
        anonymous = client.get(f"/v1/leaderboards/{EASY_CODE}", params={"around": "me"})
        assert anonymous.status_code == 401 and anonymous.headers["content-type"] == "application/problem+json"
        assert anonymous.json()["code"] == "unauthorized"


def test_around_me_on_a_challenge_board(live_url: str, redis_client: redis.Redis) -> None:
    """Two players win the open daily challenge (playing the solver's line): each reads its own place with
    `?around=me`; one who did not play reads nulls."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        challenge = client.get("/v1/challenges/current").json()["id"]
        kept = redis_client.get(f"pyr:{{c:{challenge}}}:deal")
        assert kept is not None
        line = [move_body(m) for m in solve(Game(DealCode.parse(json.loads(kept)["code"]))).line]
        winners = [_player(client), _player(client)]
        for auth in winners:
            _win(client, auth, {"challenge": challenge}, line)
        path = f"/v1/challenges/{challenge}/leaderboard"
        board = client.get(path).json()
        assert (board["rank"], board["percentile"]) == (None, None)
        for auth in winners:
            me = client.get(path, params={"around": "me"}, headers=auth).json()
            mine = next(i for i, e in enumerate(board["entries"], start=1) if e["player"] == _id(client, auth))
            assert (me["rank"], me["percentile"]) == (mine, 100.0 if mine == 1 else 50.0)
            assert [e["rank"] for e in me["entries"]] == [1, 2]
        stranger = client.get(path, params={"around": "me"}, headers=_player(client)).json()
        assert (stranger["entries"], stranger["rank"], stranger["percentile"]) == ([], None, None)
        assert client.get(path, params={"around": "me"}).status_code == 401


def _id(client: httpx.Client, auth: dict[str, str]) -> str:
    return str(client.get("/v1/players/me", headers=auth).json()["id"])


def test_a_deal_dealt_gets_its_par_worked_out_before_anyone_reads_it(
    app: Litestar, live_url: str, redis_client: redis.Redis
) -> None:
    """Dealing a game from a code starts its par: the deal's first read, after the solver had time, is already
    known (the kept par is watched in Redis, never through the route that would start it)."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        created = client.post("/v1/games", json={"code": WON}, headers=_player(client))
        assert created.status_code == 201
        drain(app)
        assert b"known" in (redis_client.get(f"pyr:{{analysis:{WON}}}:par") or b""), "no par worked out after dealing"
        first = client.get(f"/v1/deals/{WON}").json()
        assert (first["par"], first["par_status"]) == (64, "known")


def test_a_stopping_service_lets_go_of_the_par_it_was_working_out(
    settings: Settings, clock: FakeClock, redis_client: redis.Redis
) -> None:
    """Stopping does not wait for a par (it costs only solver time to work out again) and releases its claim, so
    that the next process to see the deal works it out instead of showing it pending for the claim's minute."""
    slow = "PY1-2SC-VWUCSWC"  # searched for about 1.5 s of one core before its budget runs out
    app = create_app(settings.but(solver={"time_limit_s": 30.0}), clock=clock)
    with TestClient(app) as client:
        assert client.get(f"/v1/deals/{slow}").json()["par_status"] == "pending"
        claim = keyspace.par(slow)
        eventually(lambda: redis_client.get(claim) is not None, what="the par claimed")
        assert json.loads(redis_client.get(claim) or "{}")["status"] == "pending"
    assert redis_client.get(claim) is None, "the claim of the abandoned par is released"
