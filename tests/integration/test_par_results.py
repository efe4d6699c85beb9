"""Par on a game's results (issue 46): a finished game's snapshot and record carry its deal's par (and, for a win,
``over_par``), the finish starts working the par out, and a daily challenge's game shows nothing of its par before
the close; through HTTP on a real server over the embedded Redis."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import redis
from litestar.testing import TestClient

from pyramide.engine import DealCode, Game
from pyramide.service.games.controller import move_body
from pyramide.solver import solve
from tests.integration.conftest import new_player
from tests.integration.test_par import CLEARING, EASY_CODE

POLL_S = 20.0
PAR_FIELDS = ("par", "par_status", "over_par")


def _fields(body: dict[str, Any]) -> tuple[object, ...]:
    return tuple(body[k] for k in PAR_FIELDS)


def _par_key(code: str) -> str:
    return f"pyr:{{analysis:{code}}}:par"


def _until_kept(redis_client: redis.Redis, code: str) -> None:
    """Wait (at most ``POLL_S``) until Redis keeps the deal's par as decided: watched in Redis, never through a
    route that would itself start the work."""
    deadline = time.monotonic() + POLL_S
    while b'"pending"' in (kept := redis_client.get(_par_key(code)) or b'"pending"'):
        assert time.monotonic() < deadline, f"the par of {code} was not worked out: {kept!r}"
        time.sleep(0.05)


def _read_until_decided(client: Any, path: str, headers: dict[str, str]) -> dict[str, Any]:
    """The body at ``path`` once its ``par_status`` is no longer pending, read at most for ``POLL_S``."""
    deadline = time.monotonic() + POLL_S
    while True:
        body: dict[str, Any] = client.get(path, headers=headers).json()
        if body["par_status"] != "pending":
            return body
        assert time.monotonic() < deadline, f"{path} still shows the par pending"
        time.sleep(0.05)


def test_a_finished_game_shows_its_par_and_the_finish_starts_working_it_out(
    live_url: str, redis_client: redis.Redis
) -> None:
    """A game won one draw over par: while it runs, its snapshots show no par; its par, kept from the deal, is lost
    (expired) before the end; the finishing move alone starts working it out again (watched in Redis, no route
    that reads a par is called), and the snapshot and record then show par 16, `known`, `over_par` 1. An
    abandoned game shows the par but no `over_par`."""
    with httpx.Client(base_url=live_url, timeout=10) as client:
        auth = {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}
        game = client.post("/v1/games", json={"code": EASY_CODE}, headers=auth).json()
        assert _fields(game) == (None, None, None)
        _until_kept(redis_client, EASY_CODE)
        redis_client.delete(_par_key(EASY_CODE))  # as if its time to live had run out
        moves = [{"type": "draw"}, *CLEARING]
        for move in moves:
            answer = client.post(f"/v1/games/{game['id']}/moves", json=move, headers=auth).json()
            if answer["status"] != "won":
                assert _fields(answer) == (None, None, None), "never on a running game"
        assert answer["status"] == "won"
        assert _fields(answer) == (None, "pending", None), "the finishing move does not wait for the solver"
        _until_kept(redis_client, EASY_CODE)
        par = len(CLEARING)
        snapshot = _read_until_decided(client, f"/v1/games/{game['id']}", auth)
        assert _fields(snapshot) == (par, "known", len(moves) - par) == (16, "known", 1)
        record = client.get(f"/v1/games/{game['id']}/record", headers=auth).json()
        assert _fields(record) == (16, "known", 1)
        held = client.get(f"/v1/games/{game['id']}", headers={**auth, "If-None-Match": f'"{snapshot["version"]}"'})
        assert held.status_code == 200, "a body held with the par pending is not 304 once the par is known"
        assert held.headers["etag"] == f'"{snapshot["version"]}p"'
        again = client.get(f"/v1/games/{game['id']}", headers={**auth, "If-None-Match": held.headers["etag"]})
        assert again.status_code == 304, "a finished game with its par known no longer changes"

        left = client.post("/v1/games", json={"code": EASY_CODE}, headers=auth).json()
        client.post(f"/v1/games/{left['id']}/moves", json={"type": "draw"}, headers=auth)
        assert client.post(f"/v1/games/{left['id']}/abandon", headers=auth).status_code == 200
        assert _fields(client.get(f"/v1/games/{left['id']}", headers=auth).json()) == (16, "known", None)


class _Clock:
    """The service's wall clock moved forward, as if the test waited (``time.time`` is what the service reads)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.offset_s = 0.0
        real = time.time
        monkeypatch.setattr(time, "time", lambda: real() + self.offset_s)

    def past_the_close(self) -> None:
        now = datetime.now(UTC)
        midnight = datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
        self.offset_s = (midnight - now).total_seconds() + 60


def test_a_challenge_games_par_stays_sealed_until_the_close(
    client: TestClient[Any], redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot wins the open daily challenge with the solver's shortest line: its snapshot and record say `sealed`
    with no par, and no par is worked out for the sealed deal (nothing kept in Redis). After the close both show
    the par (the shortest line's length) and `over_par` 0."""
    clock = _Clock(monkeypatch)
    auth = new_player(client)
    challenge = client.get("/v1/challenges/current").json()["id"]
    kept = redis_client.get(f"pyr:{{c:{challenge}}}:deal")
    assert kept is not None
    code = json.loads(kept)["code"]
    line = solve(Game(DealCode.parse(code)), shortest=True).shortest
    assert line is not None
    game = client.post("/v1/games", json={"challenge": challenge}, headers=auth).json()
    for move in (move_body(m) for m in line):
        answer = client.post(f"/v1/games/{game['id']}/moves", json=move, headers=auth)
        assert answer.status_code == 200, answer.text
    assert answer.json()["status"] == "won"
    for path in (f"/v1/games/{game['id']}", f"/v1/games/{game['id']}/record"):
        assert _fields(client.get(path, headers=auth).json()) == (None, "sealed", None), path
    assert redis_client.get(_par_key(code)) is None, "no par is worked out for a sealed deal"

    clock.past_the_close()
    for path in (f"/v1/games/{game['id']}", f"/v1/games/{game['id']}/record"):
        assert _fields(_read_until_decided(client, path, auth)) == (len(line), "known", 0), path
