"""Issue 45: a rate limit reaches the player as a wait, not an error. Every 429 the service gives (a player's hints and
moves, an address's moves, an address's daily quota of players) carries ``Retry-After`` and a localised detail that
names the wait, in Hungarian by default and in English on request; over real HTTP on a real Redis. A guard: these
held before issue 45 too (the finding was the wording, which lives in ``web/messages.json``)."""

from __future__ import annotations

import httpx
from litestar import Litestar

from pyramide.service.app import create_app
from pyramide.service.infra.settings import Settings
from tests.support.limits import TEST_LIMITS
from tests.support.serving import serve_in_thread


def _app(settings: Settings) -> Litestar:
    limits = {"per_minute": {"hints": 1, "moves": 2, "address_moves": 3}, "per_day": {"players": 2}}
    return create_app(settings.but(**TEST_LIMITS).but(limits=limits))


def _check(response: httpx.Response, code: str, language: str) -> None:
    assert response.status_code == 429, response.text
    body = response.json()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert (body["code"], response.headers["content-language"]) == (code, language)
    seconds = int(response.headers["retry-after"])
    assert seconds >= 1
    assert f" {seconds}" in body["detail"], body["detail"]  # the wait in words, whatever the wording
    assert body["detail"] != body["title"]


def test_every_429_says_when_to_come_back(settings: Settings) -> None:
    with serve_in_thread(_app(settings)) as url, httpx.Client(base_url=url, timeout=30) as http:
        players = [http.post("/v1/players").json()["token"] for _ in range(2)]
        for language in ("hu", "en"):
            _check(http.post("/v1/players", headers={"Accept-Language": language}), "quota_exceeded", language)
        auth = {"Authorization": f"Bearer {players[0]}"}
        game = http.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
        assert http.get(f"/v1/games/{game}/hint", headers=auth).status_code == 200
        for language in ("hu", "en"):
            _check(http.get(f"/v1/games/{game}/hint", headers={**auth, "Accept-Language": language}), "rate_limited",
                   language)  # fmt: skip
        moves = [http.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=auth) for _ in range(3)]
        assert [m.status_code for m in moves[:2]] == [200, 200]
        _check(moves[2], "rate_limited", "hu")
        assert moves[2].headers["ratelimit-policy"].startswith('"moves";')  # the player's own, not the address's
        other = {"Authorization": f"Bearer {players[1]}", "Accept-Language": "en"}
        game = http.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=other).json()["id"]
        answers = [http.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=other) for _ in range(2)]
        assert answers[0].status_code == 200
        _check(answers[1], "rate_limited", "en")
        assert answers[1].headers["ratelimit-policy"].startswith('"address_moves";')  # 3 a window; 2 used above
