"""The API against hostile clients: idempotency is no credential, malformed headers are 4xx, names are clean, bodies
and slow headers are cut off, rate limits hold across processes, memory stays bounded, and the solver cannot be
starved. Each test reproduces a finding of the security review on the real service and a real Redis."""

from __future__ import annotations

import asyncio
import select
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from litestar.testing import TestClient
from pydantic import ValidationError

from pyramide.engine import DealCode, Rules
from pyramide.engine.moves import parse_record
from pyramide.service.accounts.sealed import SealedCreate
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.games.store import derived_id
from pyramide.service.http.body import MAX_BODY_BYTES
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import SystemClock
from pyramide.service.infra.settings import LimitName, Settings, no_limits
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.limits import TEST_LIMITS
from tests.support.metrics import metric_values
from tests.support.par_results import _until_kept
from tests.support.players import new_player
from tests.support.redis_commands import client_commands, without_address_flushes
from tests.support.serving import _pyramide, serve_in_thread, serving
from tests.support.waiting import eventually

Client = TestClient[Any]


def _key() -> str:
    return str(uuid.uuid4())


# -- idempotency is never a credential ----------------------------------------------------------------------------


def test_create_player_refuses_short_idempotency_keys(client: Client) -> None:
    for language, key in (("hu", "k1"), ("en", "x" * 31)):
        response = client.post("/v1/players", json={}, headers={"Idempotency-Key": key, "Accept-Language": language})
        assert response.status_code == 400
        assert response.json()["code"] == "weak_idempotency_key"
        assert response.headers["content-language"] == language
    assert client.post("/v1/players", json={}, headers={"Idempotency-Key": "x" * 32}).status_code == 201


def test_a_retried_create_gets_its_player_but_the_key_names_nothing_public(
    client: Client, redis_client: redis.Redis
) -> None:
    key = _key()
    first = client.post("/v1/players", json={"name": "Ana"}, headers={"Idempotency-Key": key})
    again = client.post("/v1/players", json={"name": "Ana"}, headers={"Idempotency-Key": key})
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert first.json()["id"] != str(derived_id("player", key)), "the public id is not derived from the key"
    other = client.post("/v1/players", json={"name": "Bob"}, headers={"Idempotency-Key": key})
    assert other.status_code == 409 and other.json()["code"] == "idempotency_key_reused"
    token = first.json()["token"]
    secret = token.partition(".")[2]
    for name in redis_client.scan_iter(count=1000):
        assert key.encode() not in name
        value = redis_client.dump(name) or b""
        assert secret.encode() not in value and token.encode() not in value, f"{name!r} holds the token"
        assert key.encode() not in value


def test_the_kept_create_is_gone_when_the_window_ends(settings: Settings, redis_client: redis.Redis) -> None:
    app = create_app(settings.but(retention={"idempotency_ttl_s": 1}))
    key = _key()
    kept = SealedCreate(key).key
    with TestClient(app) as client:
        first = client.post("/v1/players", json={}, headers={"Idempotency-Key": key}).json()
        assert redis_client.exists(kept) == 1
        eventually(lambda: redis_client.exists(kept) == 0, what="the kept create's expiry (Redis's TTL)")
        later = client.post("/v1/players", json={}, headers={"Idempotency-Key": key}).json()
    assert later["id"] != first["id"] and later["token"] != first["token"]


async def _fifty_creates(url: str, key: str) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, limits=httpx.Limits(max_connections=60)) as client:
        await asyncio.gather(*(client.get("/health/live") for _ in range(50)))
        return list(
            await asyncio.gather(
                *(client.post("/v1/players", json={}, headers={"Idempotency-Key": key}) for _ in range(50))
            )
        )


def test_fifty_concurrent_creates_with_one_key_answer_one_working_player(live_url: str) -> None:
    responses = asyncio.run(_fifty_creates(live_url, _key()))
    assert {r.status_code for r in responses} == {201}
    bodies = {r.text for r in responses}
    assert len(bodies) == 1, "every response identical"
    token = responses[0].json()["token"]
    with httpx.Client(base_url=live_url) as client:
        me = client.get("/v1/players/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["id"] == responses[0].json()["id"]


def test_game_idempotency_keys_are_scoped_to_the_player(client: Client) -> None:
    alice, bob = new_player(client), new_player(client)
    key = {"Idempotency-Key": "same-key-1"}
    a = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers={**alice, **key})
    b = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers={**bob, **key})
    assert a.status_code == b.status_code == 201
    assert a.json()["id"] != b.json()["id"]
    assert client.get(f"/v1/games/{a.json()['id']}", headers=bob).status_code == 404


# -- malformed headers --------------------------------------------------------------------------------------------


def _raw_request(url: str, head: bytes, body: bytes = b"") -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(head + body)
        received = b""
        while b"\r\n\r\n" not in received or not _complete(received):
            chunk = connection.recv(65536)
            if not chunk:
                break
            received += chunk
    return received


def _complete(received: bytes) -> bool:
    head, _, body = received.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def _move_head(game: str, token: str, extra: bytes, body: bytes) -> bytes:
    return (
        f"POST /v1/games/{game}/moves HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n".encode()
        + extra
        + b"\r\n"
    )


@pytest.mark.parametrize(
    ("if_match", "status", "code"),
    [
        (b'"\xb2"', 412, "precondition_failed"),
        (b"\xb2", 400, "invalid_if_match"),
        (b'"' + b"9" * 5000 + b'"', 412, "precondition_failed"),
        (b"9" * 5000, 400, "invalid_if_match"),
        (b'W/"0"', 412, "precondition_failed"),
        (b'"0", W/"1"', 200, None),
        (b"*", 200, None),
        (b'"0', 400, "invalid_if_match"),
        (b"", 400, "invalid_if_match"),
    ],
)
def test_if_match_of_any_bytes_is_a_4xx_and_compared_strongly(
    live_url: str, if_match: bytes, status: int, code: str | None
) -> None:
    with httpx.Client(base_url=live_url) as client:
        token = client.post("/v1/players", json={}).json()["token"]
        game = client.post("/v1/games", json={}, headers={"Authorization": f"Bearer {token}"}).json()["id"]
    body = b'{"type": "draw"}'
    answer = _raw_request(live_url, _move_head(game, token, b"If-Match: " + if_match + b"\r\n", body), body)
    assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer[:200]
    if code is not None:
        assert f'"code":"{code}"'.encode() in answer


@pytest.mark.parametrize(
    "header",
    [
        b"Idempotency-Key: \xff\xfe",
        b"Idempotency-Key: " + b"k" * 5000,
        b"Accept-Language: \xff;q=\xb2, en;q=nan, hu;q=1e999",
        b"Authorization: Bearer \xb2\xb2.\xff",
        b"Authorization: Bearer " + b"9" * 5000,
        b"Authorization: \xff",
    ],
)
def test_malformed_headers_are_answered_4xx(live_url: str, header: bytes) -> None:
    with httpx.Client(base_url=live_url) as client:
        token = client.post("/v1/players", json={}).json()["token"]
        game = client.post("/v1/games", json={}, headers={"Authorization": f"Bearer {token}"}).json()["id"]
    body = b'{"type": "draw"}'
    head = _move_head(game, token, header + b"\r\n", body)
    if header.startswith(b"Authorization"):
        head = head.replace(f"Authorization: Bearer {token}\r\n".encode(), b"")
    answer = _raw_request(live_url, head, body)
    status = int(answer.split(b" ", 2)[1])
    assert 200 <= status < 500, answer[:300]
    assert b"internal_error" not in answer


# -- names --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["\u202eevil", "\u200b", "   ", "\u0085x", "a\u200db", "\ue000", "\U000e0001x", "a\x00"]
)
def test_names_with_control_format_private_or_no_characters_are_refused(client: Client, name: str) -> None:
    for language in ("hu", "en"):
        response = client.post("/v1/players", json={"name": name}, headers={"Accept-Language": language})
        assert response.status_code == 422, name
        assert response.json()["code"] == "validation_failed"
        assert response.headers["content-language"] == language


BLANK_NAMES = [
    "\u3164",
    "\u2800",
    "\uffa0",
    "\u0301",
    "\u115f\u1160",
    " \u3164 ",
    "\u0301\u20dd",
    "\ufe0f",
    "\u3000\u2800",
]
"""Names that render as nothing: Hangul fillers, the braille blank, lone combining and enclosing marks, a variation
selector alone (issue 41, item 10)."""


@pytest.mark.parametrize("name", BLANK_NAMES)
def test_names_that_render_blank_are_refused_when_created_or_changed(client: Client, name: str) -> None:
    token = client.post("/v1/players", json={"name": "Anna"}).json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    for language, text in (("hu", "A kérés adatai érvénytelenek"), ("en", "The request data is invalid")):
        for response in (
            client.post("/v1/players", json={"name": name}, headers={"Accept-Language": language}),
            client.patch("/v1/players/me", json={"name": name}, headers={**auth, "Accept-Language": language}),
        ):
            assert response.status_code == 422, (name, response.text)
            assert response.json()["code"] == "validation_failed"
            assert response.json()["title"] == text
            assert response.headers["content-language"] == language
    assert client.get("/v1/players/me", headers=auth).json()["name"] == "Anna", "the name was not changed"


def test_names_are_normalised(client: Client) -> None:
    created = client.post("/v1/players", json={"name": "  Ane\u0301t\u00a0\u00a0 Kiss  "}).json()
    assert created["name"] == "Anét Kiss"
    auth = {"Authorization": f"Bearer {created['token']}"}
    changed = client.patch("/v1/players/me", json={"name": "Ágnes   😀"}, headers=auth).json()
    assert changed["name"] == "Ágnes 😀"
    assert client.post("/v1/players", json={"name": "x" * 25}).status_code == 422


# -- request limits -----------------------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_refused_at_once_and_the_connection_closed(live_url: str) -> None:
    host, port = live_url.removeprefix("http://").split(":")
    head = (
        b"POST /v1/players HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
    )
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        started = time.monotonic()
        connection.sendall(head + b"{" + b" " * 1000)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
        elapsed = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert b"connection: close" in answer.lower()
    assert b'"code":"body_too_large"' in answer
    assert elapsed < 2, "answered without waiting for the 100 MB"


def test_a_chunked_body_over_the_limit_is_cut_off(live_url: str) -> None:
    host, port = live_url.removeprefix("http://").split(":")
    head = (
        b"POST /v1/players HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"x" * 16384
    with socket.create_connection((host, int(port)), timeout=5) as connection:
        connection.sendall(head)
        sent = 0
        while not select.select([connection], [], [], 0.05)[0]:  # a client that reads what it is answered
            connection.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sent += len(chunk)
            assert sent < 4 * MAX_BODY_BYTES, "never answered"
        answer = b""
        while part := connection.recv(65536):
            answer += part
    assert sent > MAX_BODY_BYTES
    assert answer.startswith(b"HTTP/1.1 413 ") and b"connection: close" in answer.lower()


def test_slow_request_headers_are_cut_off(app: Any) -> None:
    with serve_in_thread(app, header_timeout_s=0.5) as url:
        host, port = url.removeprefix("http://").split(":")
        slow = [socket.create_connection((host, int(port)), timeout=5) for _ in range(20)]
        for connection in slow:
            connection.sendall(b"GET /health/live HTTP/1.1\r\nHost: t\r\n")
        started = time.monotonic()
        for connection in slow[:10]:
            connection.sendall(b"X-Slow: 1\r\n")  # still trickling
        ends = []
        for connection in slow:
            answer = b""
            while part := connection.recv(4096):
                answer += part
            ends.append(time.monotonic() - started)
            assert answer.startswith(b"HTTP/1.1 408 "), answer
            assert b"application/problem+json" in answer and b'"code": "request_timeout"' in answer
            assert b"\r\nx-request-id: " in answer
            connection.close()
        assert max(ends) < 2.0, "every slow connection closed soon after the deadline"
        assert httpx.get(f"{url}/health/live").status_code == 200, "prompt clients are served meanwhile"


# -- rate limits --------------------------------------------------------------------------------------------------


def _limited(settings: Settings, **limits: int) -> Settings:
    return settings.but(**TEST_LIMITS).but(limits={"per_minute": limits})


def _check_429(response: httpx.Response, name: str, limit: int, language: str = "hu") -> None:
    assert response.status_code == 429, response.text
    assert response.json()["code"] == "rate_limited"
    assert response.headers["content-language"] == language
    assert int(response.headers["retry-after"]) >= 1
    assert response.headers["ratelimit-policy"] == f'"{name}";q={limit};w=60'
    assert response.headers["ratelimit"].startswith(f'"{name}";r=0;t=')


def test_creating_players_is_limited_per_address_across_processes(settings: Settings) -> None:
    limited = _limited(settings, players=3)
    with TestClient(create_app(limited)) as one, TestClient(create_app(limited)) as two:
        statuses = [c.post("/v1/players", json={}).status_code for c in (one, two, one)]
        assert statuses == [201, 201, 201]
        _check_429(two.post("/v1/players", json={}), "players", 3)
        _check_429(one.post("/v1/players", json={}, headers={"Accept-Language": "en"}), "players", 3, "en")


def _creates(url: str, forwarded: list[list[str]], local_address: str = "127.0.0.1") -> list[int]:
    """The statuses of creating a player once per entry of ``forwarded``: each request carries one
    ``X-Forwarded-For`` line per string in its entry, sent from ``local_address`` (a loopback address)."""
    with httpx.Client(transport=httpx.HTTPTransport(local_address=local_address), timeout=10) as client:
        return [
            client.post(f"{url}/v1/players", json={}, headers=[("X-Forwarded-For", line) for line in lines]).status_code
            for lines in forwarded
        ]


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.slow
def test_x_forwarded_for_is_ignored_unless_configured(tmp_path: Path, workers: str) -> None:
    """Finding: uvicorn believed X-Forwarded-For from 127.0.0.1 by default, so a local client rotating it created
    players past the limit. Now a peer's own address counts, with one process or several."""
    env = {"PYRAMIDE_LIMIT_PLAYERS": "3"}
    with serving(tmp_path / "data", tmp_path, "--workers", workers, env=env) as served:
        statuses = _creates(served.url, [[f"198.51.100.{n}"] for n in range(6)])
    assert statuses == [201, 201, 201, 429, 429, 429]


def test_the_client_is_the_rightmost_untrusted_address_over_every_header_line(tmp_path: Path) -> None:
    """Finding: with the header configured, only its first line was read, and from any peer. Now every line is
    one list, the walk from the right stops at the first address outside the trusted proxies, and a peer outside
    them is not believed at all."""
    env = {
        "PYRAMIDE_LIMIT_PLAYERS": "3",
        "PYRAMIDE_TRUSTED_PROXY_HEADER": "X-Forwarded-For",
        "PYRAMIDE_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8",
    }
    with serving(tmp_path / "data", tmp_path, env=env) as served:
        # a spoofed leftmost address rotating on the first line; the proxies' own entries on a second line
        spoofed = [[f"192.0.2.{n}, 192.0.2.{n + 100}", "203.0.113.7, 10.1.2.3"] for n in range(5)]
        assert _creates(served.url, spoofed) == [201, 201, 201, 429, 429]
        # the same client seen through another trusted hop, port included: the same bucket
        assert _creates(served.url, [["203.0.113.7:41234"]]) == [429]
        # another client behind the proxies has a limit of its own
        assert _creates(served.url, [["192.0.2.1", "203.0.113.8"]]) == [201]
        # an entry that is no address stops the walk at the trusted hop to its right: never a bucket per request
        garbage = [[f"192.0.2.{n}, not-an-address-{n}, 10.9.9.9"] for n in range(4)]
        assert _creates(served.url, garbage) == [201, 201, 201, 429]
        # a peer outside the trusted networks (127.0.0.2 is loopback, but not trusted): its header is not read
        untrusted = [[f"198.51.100.{n}"] for n in range(4)]
        assert _creates(served.url, untrusted, local_address="127.0.0.2") == [201, 201, 201, 429]


def test_a_bad_trusted_proxies_list_stops_serve_naming_it(tmp_path: Path) -> None:
    env = {"PYRAMIDE_TRUSTED_PROXY_HEADER": "X-Forwarded-For", "PYRAMIDE_TRUSTED_PROXIES": "10.0.0.0/8,proxy.lan"}
    done = _pyramide("serve", "--port", "1", "--data-dir", str(tmp_path / "data"), env=env)
    assert done.returncode == 2 and "PYRAMIDE_TRUSTED_PROXIES" in done.stderr and "proxy.lan" in done.stderr


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"PYRAMIDE_TRUSTED_PROXY_HEADER": "X-Forwarded-For", "PYRAMIDE_TRUSTED_PROXIES": "10.0.0.1/8"}, "10.0.0.1/8"),
        ({"PYRAMIDE_TRUSTED_PROXY_HEADER": "X-Forwarded-For"}, "PYRAMIDE_TRUSTED_PROXIES"),
        ({"PYRAMIDE_TRUSTED_PROXIES": "10.0.0.0/8"}, "PYRAMIDE_TRUSTED_PROXY_HEADER"),
    ],
)
def test_trusted_proxies_and_their_header_go_together(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], named: str
) -> None:
    for variable, value in env.items():
        monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError, match=named):
        Settings(redis={"url": "redis://unused"})


def test_games_moves_and_hints_are_limited_per_player(settings: Settings) -> None:
    # the system clock: a move's early refusal holds its limit's cell, kept in Redis's time, against the service's
    # clock (docs/time.md); only with the two in step is an illegal move past the limit 429 before it is 409
    app = create_app(_limited(settings, games=2, moves=3, hints=1), clock=SystemClock())
    with TestClient(app) as client:
        player, other = new_player(client), new_player(client)
        game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player).json()
        client.post("/v1/games", json={}, headers=player)
        _check_429(client.post("/v1/games", json={}, headers=player), "games", 2)
        url = f"/v1/games/{game['id']}"
        assert [client.post(f"{url}/moves", json={"type": "draw"}, headers=player).status_code for _ in range(2)] == [
            200,
            200,
        ]
        assert client.post(f"{url}/taps", json={"target": "stock"}, headers=player).status_code == 200
        _check_429(client.post(f"{url}/moves", json={"type": "draw"}, headers=player), "moves", 3)
        _check_429(client.post(f"{url}/taps", json={"target": "stock"}, headers=player), "moves", 3)
        _check_429(
            client.post(f"{url}/moves", json={"type": "pair", "cards": ["AS", "QS"]}, headers=player), "moves", 3
        )
        assert client.get(url, headers=player).json()["version"] == 3, "nothing applied past the limit"
        assert client.post("/v1/games", json={}, headers=other).status_code == 201, "other players are not limited"
        assert client.get(f"{url}/hint", headers=player).status_code == 200
        _check_429(client.get(f"{url}/hint", headers=player), "hints", 1)


def test_a_move_costs_no_extra_redis_command_for_its_limit(
    settings: Settings, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_address_flushes(monkeypatch)
    with TestClient(create_app(_limited(settings, moves=1000))) as client:
        player = new_player(client)
        game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player).json()
        url = f"/v1/games/{game['id']}/moves"
        client.post(url, json={"type": "draw"}, headers=player)
        _until_kept(redis_client, "PY1-N-AAAAAAS")  # the deal's par, worked out in the background: not the move's
        with client_commands(str(settings.redis.url)) as commands:
            client.post(url, json={"type": "draw"}, headers=player)
    assert commands == ["EVALSHA"], "the limit is checked inside the save"


# -- bounded memory -----------------------------------------------------------------------------------------------


def test_a_kept_response_costs_at_most_a_kibibyte(client: Client, redis_client: redis.Redis) -> None:
    created = client.post("/v1/players", json={}).json()
    player = {"Authorization": f"Bearer {created['token']}"}
    game = client.post("/v1/games", json={"code": "PY1-N-MEMORYS"}, headers=player).json()
    snapshot = game
    for _ in range(110):
        body = {"type": "draw"} if "D" in snapshot["legal_moves"] else {"type": "recycle"}
        snapshot = client.post(f"/v1/games/{game['id']}/moves", json=body, headers=player).json()
    headers = {**player, "Idempotency-Key": "memory-1"}
    first = client.post(f"/v1/games/{game['id']}/moves", json={"type": "undo"}, headers=headers)
    keys = list(redis_client.scan_iter(match=f"*{game['id']}*idem:*"))
    assert len(keys) == 1
    assert (redis_client.memory_usage(keys[0]) or 0) <= 1024
    time.sleep(0.01)
    again = client.post(f"/v1/games/{game['id']}/moves", json={"type": "undo"}, headers=headers)
    assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
    assert keyspace.game_idempotency(uuid.UUID(created["id"]), uuid.UUID(game["id"]), "x").startswith("pyr:{p:")


def test_idle_players_expire_unless_they_finished_a_game(settings: Settings, redis_client: redis.Redis) -> None:
    with TestClient(create_app(settings.but(retention={"player_idle_ttl_s": 3600}))) as client:
        idle = client.post("/v1/players", json={}).json()
        key = f"pyr:{{p:{idle['id']}}}:player"
        assert 3500 < redis_client.ttl(key) <= 3600
        winner = client.post("/v1/players", json={}).json()
        auth = {"Authorization": f"Bearer {winner['token']}"}
        game = client.post("/v1/games", json={"layout": easy_game().code.to_json()}, headers=auth).json()
        client.post(f"/v1/games/{game['id']}/moves", json={"type": "draw"}, headers=auth)
        stats_key = f"pyr:{{p:{winner['id']}}}:stats"
        client.get(f"/v1/games/{game['id']}/hint", headers=auth)
        assert 0 < redis_client.ttl(stats_key) <= 3600, "what the player keeps expires with it"
        client.post(f"/v1/games/{game['id']}/moves", json={"type": "undo"}, headers=auth)
        for move in parse_record(EASY_CLEARING):
            client.post(f"/v1/games/{game['id']}/moves", json=move_body(move), headers=auth)
        assert client.get(f"/v1/games/{game['id']}", headers=auth).json()["status"] == "won"
        assert redis_client.ttl(f"pyr:{{p:{winner['id']}}}:player") == -1
        assert redis_client.ttl(stats_key) == -1
    with TestClient(create_app(settings.but(retention={"player_idle_ttl_s": 1}))) as client:
        gone = client.post("/v1/players", json={}).json()
        gone_key = keyspace.player(uuid.UUID(gone["id"]))  # watched in Redis: a request would renew its idle time
        eventually(lambda: redis_client.exists(gone_key) == 0, what="the idle player's expiry (Redis's TTL)")
        assert client.get("/v1/players/me", headers={"Authorization": f"Bearer {gone['token']}"}).status_code == 401


def test_a_full_redis_refuses_writes_with_507_and_loses_nothing(client: Client, redis_client: redis.Redis) -> None:
    player = new_player(client)
    game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player).json()
    url = f"/v1/games/{game['id']}"
    client.post(f"{url}/moves", json={"type": "draw"}, headers=player)
    before = client.get(url, headers=player).json()
    counted = metric_values().get("pyramide_storage_full_total", 0.0)
    redis_client.config_set("maxmemory", "1")
    try:
        for language in ("hu", "en"):
            refused = client.post("/v1/players", json={}, headers={"Accept-Language": language})
            assert refused.status_code == 507 and refused.json()["code"] == "storage_full"
            assert refused.headers["content-language"] == language
        move = client.post(f"{url}/moves", json={"type": "draw"}, headers=player)
        assert move.status_code == 507 and move.json()["code"] == "storage_full"
        now = client.get(url, headers=player).json()
        assert {**now, "elapsed_ms": 0} == {**before, "elapsed_ms": 0}, "nothing changed"
    finally:
        redis_client.config_set("maxmemory", "0")
    assert metric_values()["pyramide_storage_full_total"] >= counted + 3
    after = client.post(f"{url}/moves", json={"type": "draw"}, headers=player).json()
    assert after["version"] == before["version"] + 1


# -- solver capacity ----------------------------------------------------------------------------------------------

HARD = [
    str(
        DealCode(
            Rules.from_json({"recycles": 0, "stock_waste_pairs": True, "cover_pairs": True, "strict_win": True}),
            number=1_000_003 * i + 7,
        )
    )
    for i in range(12)
]
"""Deals under the 0SCW rules, which the solver often cannot decide within a second."""


async def _many_analyses(url: str, codes: list[str]) -> list[tuple[int, float, dict[str, Any]]]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:

        async def one(code: str) -> tuple[int, float, dict[str, Any]]:
            started = time.monotonic()
            response = await client.get(f"/v1/deals/{code}/analysis")
            return response.status_code, time.monotonic() - started, {**response.json(), **response.headers}

        return list(await asyncio.gather(*(one(c) for c in codes)))


def test_a_full_solver_queue_answers_503_at_once(settings: Settings) -> None:
    busy = settings.but(solver={"workers": 1, "queue": 1, "time_limit_s": 1.0})
    with serve_in_thread(create_app(busy)) as url:
        results = asyncio.run(_many_analyses(url, HARD[:8]))
    refused = [(elapsed, body) for status, elapsed, body in results if status == 503]
    assert len(refused) >= 5, [r[0] for r in results]
    assert all(body["code"] == "solver_busy" and int(body["retry-after"]) >= 1 for _, body in refused)
    assert max(elapsed for elapsed, _ in refused) < 0.5, "refused at once, not after the time limit"


def test_unfinished_analyses_are_cached_so_repeats_cost_nothing(client: Client, redis_client: redis.Redis) -> None:
    code = HARD[0]
    first = client.get(f"/v1/deals/{code}/analysis").json()
    keys = list(redis_client.scan_iter(match=f"pyr:{{analysis:{code}}}*"))
    assert len(keys) == 1 and redis_client.ttl(keys[0]) > 0
    started = time.monotonic()
    again = client.get(f"/v1/deals/{code}/analysis").json()
    assert again == first and time.monotonic() - started < 0.2


def test_one_solver_search_per_player_at_a_time(settings: Settings) -> None:
    slow = settings.but(solver={"time_limit_s": 1.0})

    async def two_hints(url: str) -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            token = (await client.post("/v1/players", json={})).json()["token"]
            auth = {"Authorization": f"Bearer {token}"}
            game = (await client.post("/v1/games", json={"code": HARD[1]}, headers=auth)).json()
            return list(
                await asyncio.gather(*(client.get(f"/v1/games/{game['id']}/hint", headers=auth) for _ in range(2)))
            )

    with serve_in_thread(create_app(slow)) as url:
        responses = asyncio.run(two_hints(url))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 429], [r.text for r in responses]
    refused = next(r for r in responses if r.status_code == 429)
    assert refused.json()["code"] == "solver_in_progress" and refused.headers["retry-after"] == "1"


def test_limits_unlimited_switches_every_limit_off() -> None:
    unlimited = Settings(**no_limits())
    assert all(unlimited.limits.per_minute[name] == 0 for name in LimitName)
    assert all(unlimited.limits.per_day[name] == 0 for name in (LimitName.PLAYERS, LimitName.GAMES))
