"""What a successful answer tells an integrator in its headers (issue 44, item 11): what is left of the rate limit
the request counted against (IETF RateLimit, the same policy a 429 of that limit names), whether the answer is
one replayed from an Idempotency-Key, and that a localised body varies with Accept-Language (beside Origin under
CORS). Played over real HTTP against uvicorn on the embedded Redis."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from litestar import get

from pyramide.service.app import create_app
from pyramide.service.http.deprecation import deprecated
from pyramide.service.infra.settings import Settings
from tests.support.limits import TEST_LIMITS
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.serving import serve_in_thread

STATE = re.compile(r'^"(?P<name>[a-z_]+)";r=(?P<r>[0-9]+);t=(?P<t>[0-9]+)$')
CODE = "PY1-N-AAAAAAS"


@contextmanager
def _served(settings: Settings, **update: Any) -> Iterator[httpx.Client]:
    limited = settings.but(**TEST_LIMITS).but(**update)
    with serve_in_thread(create_app(limited)) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def _remaining(response: httpx.Response, name: str, quota: int) -> tuple[int, int]:
    """The remaining count and reset seconds a successful answer states for the limit ``name`` of ``quota``."""
    assert response.status_code < 300, response.text
    assert response.headers["ratelimit-policy"] == f'"{name}";q={quota};w=60'
    state = STATE.match(response.headers["ratelimit"])
    assert state is not None, response.headers["ratelimit"]
    assert state["name"] == name
    return int(state["r"]), int(state["t"])


def _refused(response: httpx.Response, name: str, quota: int) -> None:
    assert response.status_code == 429, response.text
    assert response.json()["code"] == "rate_limited"
    assert response.headers["ratelimit-policy"] == f'"{name}";q={quota};w=60'
    assert response.headers["ratelimit"].startswith(f'"{name}";r=0;t=')


def _player(client: httpx.Client) -> dict[str, str]:
    response = client.post("/v1/players", json={})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def _game(client: httpx.Client, headers: dict[str, str]) -> str:
    response = client.post("/v1/games", json={"code": CODE}, headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def test_creating_players_and_analysing_deals_state_what_is_left_down_to_the_429(settings: Settings) -> None:
    """Finding: the RateLimit headers came only with the 429, so a client learnt of a limit by being refused."""
    with _served(settings, limits={"per_minute": {"players": 3, "analyses": 2}}) as client:
        players = [client.post("/v1/players", json={}) for _ in range(3)]
        left = [_remaining(r, "players", 3) for r in players]
        assert [r for r, _ in left] == [2, 1, 0]
        assert all(1 <= t <= 60 for _, t in left)
        _refused(client.post("/v1/players", json={}), "players", 3)

        analyses = [client.get(f"/v1/deals/{CODE}/analysis") for _ in range(2)]
        assert [_remaining(r, "analyses", 2)[0] for r in analyses] == [1, 0]
        _refused(client.get(f"/v1/deals/{CODE}/analysis"), "analyses", 2)

        me = client.get("/v1/players/me", headers={"Authorization": f"Bearer {players[0].json()['token']}"})
        assert me.status_code == 200
        assert "ratelimit" not in me.headers and "ratelimit-policy" not in me.headers, "a route without a limit"


def test_creating_games_asking_hints_and_exporting_state_their_limits(settings: Settings) -> None:
    with _served(settings, limits={"per_minute": {"address_games": 2, "hints": 2, "exports": 2}}) as client:
        auth = _player(client)
        created = [client.post("/v1/games", json={"code": CODE}, headers=auth) for _ in range(2)]
        assert [_remaining(r, "address_games", 2)[0] for r in created] == [1, 0]
        _refused(client.post("/v1/games", json={"code": CODE}, headers=auth), "address_games", 2)

        game = created[0].json()["id"]
        hints = [client.get(f"/v1/games/{game}/hint", headers=auth) for _ in range(2)]
        assert [_remaining(r, "hints", 2)[0] for r in hints] == [1, 0]
        _refused(client.get(f"/v1/games/{game}/hint", headers=auth), "hints", 2)

        exports = [client.get("/v1/players/me/export", headers=auth) for _ in range(2)]
        assert [_remaining(r, "exports", 2)[0] for r in exports] == [1, 0]
        _refused(client.get("/v1/players/me/export", headers=auth), "exports", 2)


def test_an_apps_sessions_state_its_players_limit(settings: Settings) -> None:
    """createSession counts against the app's own ``players`` limit (``app_limit_players``): its successes say
    what is left, down to the 429."""
    with _served(settings, secrets={"operator_key": OPERATOR_KEY}, limits={"app_per_minute": {"players": 2}}) as client:
        made = client.post("/v1/admin/apps", json={"name": "Card Club", "scopes": ["players"]}, headers=OPERATOR)
        key = {"Authorization": f"Bearer {made.json()['key']}"}
        sessions = [client.post(f"/v1/apps/me/players/user-{n}/sessions", headers=key) for n in range(2)]
        assert [_remaining(r, "players", 2)[0] for r in sessions] == [1, 0]
        _refused(client.post("/v1/apps/me/players/user-9/sessions", headers=key), "players", 2)


def test_moves_state_the_address_allowance_from_its_in_memory_count(settings: Settings) -> None:
    """The move route reads the per-address allowance it already consulted: no Redis round trip more."""
    with _served(settings, limits={"per_minute": {"address_moves": 3}}) as client:
        auth = _player(client)
        game = _game(client, auth)
        draws = [client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=auth) for _ in range(3)]
        left = [_remaining(r, "address_moves", 3) for r in draws]
        assert [r for r, _ in left] == [2, 1, 0]
        assert all(1 <= t <= 60 for _, t in left)
        _refused(client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=auth), "address_moves", 3)


def test_a_replayed_idempotent_answer_says_so_and_a_fresh_one_does_not(settings: Settings) -> None:
    """Finding: a retry's answer looked exactly like a fresh one, so a client could not tell whether its
    earlier request had gone through."""
    with _served(settings) as client:
        key = {"Idempotency-Key": secrets.token_urlsafe(32)}
        first, again = (client.post("/v1/players", json={}, headers=key) for _ in range(2))
        assert first.status_code == again.status_code == 201
        assert "idempotent-replayed" not in first.headers
        assert again.headers["idempotent-replayed"] == "true"
        assert again.json()["token"] == first.json()["token"]

        auth = {"Authorization": f"Bearer {first.json()['token']}"}
        game_key = {**auth, "Idempotency-Key": "create-" + secrets.token_hex(8)}
        dealt, redealt = (client.post("/v1/games", json={"code": CODE}, headers=game_key) for _ in range(2))
        assert "idempotent-replayed" not in dealt.headers
        assert redealt.headers["idempotent-replayed"] == "true" and redealt.json()["id"] == dealt.json()["id"]

        game = dealt.json()["id"]
        move_key = {**auth, "Idempotency-Key": "draw-" + secrets.token_hex(8)}
        drawn, redrawn = (
            client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=move_key) for _ in range(2)
        )
        assert drawn.status_code == redrawn.status_code == 200
        assert "idempotent-replayed" not in drawn.headers
        assert redrawn.headers["idempotent-replayed"] == "true"
        assert redrawn.content == drawn.content and redrawn.headers["etag"] == drawn.headers["etag"]
        plain = client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=auth)
        assert "idempotent-replayed" not in plain.headers, "no key, nothing replayed"


ORIGIN = "https://game.example"


@pytest.mark.parametrize("origin", [None, ORIGIN])
def test_localised_answers_vary_with_accept_language_and_keep_origin(settings: Settings, origin: str | None) -> None:
    """Finding: a snapshot, the rules and every problem come in the caller's language but said nothing in Vary, so
    a shared cache could hand a Hungarian snapshot to an English client; under CORS, Vary: Origin must stay."""
    update: dict[str, Any] = {} if origin is None else {"http": {"cors_origins": (ORIGIN,)}}
    with _served(settings, **update) as client:
        sent = {} if origin is None else {"Origin": origin}
        auth = {**_player(client), **sent}
        game = client.post("/v1/games", json={"code": CODE}, headers={**auth, "Accept-Language": "en"})
        answers = [
            game,
            client.get(f"/v1/games/{game.json()['id']}", headers=auth),
            client.post(f"/v1/games/{game.json()['id']}/moves", json={"type": "draw"}, headers=auth),
            client.get("/v1/rules", headers=sent),
            client.get("/v1/players/me", headers=sent),  # 401 problem
            client.post("/v1/games", json={"code": "nope"}, headers=auth),  # 422 problem
        ]
        for response in answers:
            assert "content-language" in response.headers, response.request.url
            vary = [v.strip().lower() for v in response.headers.get_list("vary") for v in v.split(",")]
            assert "accept-language" in vary, (response.request.url, vary)
            assert ("origin" in vary) is (origin is not None), (response.request.url, vary)
            assert len(vary) == len(set(vary))


SINCE = datetime(2026, 12, 1, tzinfo=UTC)
SUNSET = datetime(2027, 7, 1, tzinfo=UTC)


@get("/v1/old-ping", operation_id="oldPing", exclude_from_auth=True, **deprecated(SINCE, SUNSET))
async def old_ping() -> dict[str, str]:
    """A route deprecated by the policy's one mechanism, mounted for this test alone."""
    return {"status": "ok"}


def test_a_deprecated_operation_says_so_in_its_answers_and_the_schema(settings: Settings) -> None:
    """The policy in docs/api.md: Deprecation (RFC 9745) and Sunset (RFC 8594) on every answer, `deprecated: true`
    and both headers declared in the schema; a sunset under six months after the deprecation is refused."""
    app = create_app(settings.but(**TEST_LIMITS), extra_route_handlers=[old_ping])
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        answer = client.get("/v1/old-ping")
        assert answer.status_code == 200 and answer.json() == {"status": "ok"}
        assert answer.headers["deprecation"] == f"@{int(SINCE.timestamp())}" == "@1796083200"
        assert answer.headers["sunset"] == "Thu, 01 Jul 2027 00:00:00 GMT"
        operation = client.get("/schema/openapi.json").json()["paths"]["/v1/old-ping"]["get"]
        assert operation["deprecated"] is True
        assert {"Deprecation", "Sunset"} <= set(operation["responses"]["200"]["headers"])
        current = client.get("/health/live")
        assert "deprecation" not in current.headers and "sunset" not in current.headers
    with pytest.raises(ValueError, match="183 days"):
        deprecated(SINCE, datetime(2027, 3, 1, tzinfo=UTC))
