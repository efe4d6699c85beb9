"""The events other than the game ones land in their outboxes (issue 47), through HTTP against a real server on a real
Redis: each exactly once, with its payload, when the change is made, and none when it is not. The outbox streams are
the contract between the scripts that emit and the delivery worker, so the tests read them with XRANGE."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from uuid import UUID

import httpx
import pytest
import redis

from pyramide.service.app import create_app
from pyramide.service.challenges.deals import commitment
from pyramide.service.infra import keyspace, outbox
from pyramide.service.infra.clock import FakeClock, now_ms
from pyramide.service.infra.redis import connect
from pyramide.service.infra.settings import Settings
from pyramide.service.stats import challenge_board
from tests.support.events import OPERATOR, OPERATOR_KEY, _app, _app_player, _as, _win_the_challenge, challenge_close_ms
from tests.support.serving import serve_in_thread
from tests.support.waiting import eventually, run_job


@pytest.fixture
def http(settings: Settings) -> Iterator[httpx.Client]:
    """A real server (uvicorn on loopback) with an operator key, on the test's Redis."""
    app = create_app(settings.but(secrets={"operator_key": OPERATOR_KEY}, webhooks={"delivery": False}))
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def _events(store: redis.Redis, key: str) -> list[outbox.OutboxEvent]:
    entries: list[tuple[bytes, dict[bytes, bytes]]] = store.xrange(key)  # type: ignore[assignment]
    return [outbox.parse(key, entry, fields) for entry, fields in entries]


def _outboxes(store: redis.Redis) -> list[str]:
    return sorted(k.decode() for k in store.scan_iter(match=keyspace.OUTBOX_PATTERN))


def test_erasing_an_app_player_emits_player_erased_once_to_the_apps_outbox(
    http: httpx.Client, redis_client: redis.Redis
) -> None:
    """The event outlives the player's slot (the app's outbox), holds only the ids the app gave or was given, is due
    for delivery, and is emitted once: a second erasure, and the erasure of a player of no app, emit nothing."""
    key, app = _app(http)
    player = _app_player(http, key, "user-1")
    anonymous = http.post("/v1/players", json={}).json()["token"]
    assert http.delete("/v1/players/me", headers={"Authorization": f"Bearer {anonymous}"}).status_code == 204
    assert _outboxes(redis_client) == [], "a player of no app emits nothing"
    assert http.delete("/v1/players/me", headers=_as(key, "user-1")).status_code == 204
    app_outbox = keyspace.app_outbox(app)
    assert _outboxes(redis_client) == [app_outbox], "the player's own keys are gone; the app's outbox is not"
    [event] = _events(redis_client, app_outbox)
    assert (event.type, event.app, event.player) == ("player.erased", app, player)
    assert event.data == {"player_id": player, "external_id": "user-1"}
    assert event.id.startswith("evt_")
    assert redis_client.zscore(keyspace.EVENTS_DUE, app_outbox) is not None, "marked due for the delivery"
    assert http.delete("/v1/players/me", headers=_as(key, "user-1")).status_code == 204  # no player: none made
    assert len(_events(redis_client, app_outbox)) == 1, "a second erasure emits nothing"


def test_a_banned_app_players_erasure_by_the_operator_emits_player_erased_once(
    http: httpx.Client, redis_client: redis.Redis
) -> None:
    """The other path of an app player's erasure (its binding keeps the ban) emits it too, once; the ban's event,
    not yet delivered (no process delivers here), outlives the player's slot: handed to the app's outbox, with its
    id, before the erasure's."""
    key, app = _app(http)
    player = _app_player(http, key, "user-2")
    assert http.post(f"/v1/admin/players/{player}/ban", json={"reason": "bot"}, headers=OPERATOR).status_code == 200
    assert http.delete(f"/v1/admin/players/{player}", headers=OPERATOR).status_code == 204
    assert http.delete(f"/v1/admin/players/{player}", headers=OPERATOR).status_code == 404
    banned, event = _events(redis_client, keyspace.app_outbox(app))
    assert banned.type == "player.banned" and banned.data["banned"] is True and banned.player == player
    assert event.type == "player.erased" and event.data == {"player_id": player, "external_id": "user-2"}


def test_banning_and_unbanning_an_app_player_emits_player_banned_for_each_change_only(
    http: httpx.Client, redis_client: redis.Redis
) -> None:
    """A ban and its lifting each emit once to the player's outbox, with the reason; banning a banned player again,
    unbanning one that is not banned, a refused ban and a ban of a player of no app emit nothing."""
    key, app = _app(http)
    player = _app_player(http, key, "user-3")
    other_key, _ = _app(http, ("players", "moderation"))
    refused = http.post(
        f"/v1/admin/players/{player}/ban", json={"reason": "x"}, headers={"Authorization": f"Bearer {other_key}"}
    )
    assert refused.status_code == 403, refused.text
    anonymous = http.post("/v1/players", json={}).json()["id"]
    assert http.post(f"/v1/admin/players/{anonymous}/ban", json={"reason": "x"}, headers=OPERATOR).status_code == 200
    assert _outboxes(redis_client) == [], "no change of an app player, no event"
    for _ in range(2):
        assert http.post(f"/v1/admin/players/{player}/ban", json={"reason": "bot"}, headers=OPERATOR).status_code == 200
    for _ in range(2):
        lifted = http.post(f"/v1/admin/players/{player}/unban", json={"reason": "appeal"}, headers=OPERATOR)
        assert lifted.status_code == 200, lifted.text
    player_outbox = keyspace.player_outbox(UUID(player))
    events = _events(redis_client, player_outbox)
    assert [(e.type, e.app, e.player) for e in events] == [("player.banned", app, player)] * 2
    assert [e.data for e in events] == [
        {"player_id": player, "external_id": "user-3", "banned": True, "reason": "bot"},
        {"player_id": player, "external_id": "user-3", "banned": False, "reason": "appeal"},
    ]
    assert events[0].at_ms <= events[1].at_ms and len({e.id for e in events}) == 2
    assert redis_client.zscore(keyspace.EVENTS_DUE, player_outbox) is not None


def _entries(store: redis.Redis, challenge: str, count: int) -> list[outbox.OutboxEvent]:
    """The challenge board's events, once there are ``count`` (the win is entered as it settles)."""
    key = keyspace.boards_of_deal(challenge_board(challenge)).outbox
    with contextlib.suppress(AssertionError):
        eventually(lambda: len(_events(store, key)) >= count, 10)
    return _events(store, key)


def test_an_app_players_challenge_entry_emits_challenge_entry_without_the_sealed_code(
    http: httpx.Client, redis_client: redis.Redis
) -> None:
    """An app player's win entering the challenge's board emits ``entered`` with the entry (no code); its ban takes
    it off (``left``), the lifted ban puts it back (``entered``), its erasure takes it off for good (``left``). An
    anonymous player's win on the same board emits nothing, and the sealed code is in no outbox."""
    key, app = _app(http)
    challenge = http.get("/v1/challenges/current").json()["id"]
    anonymous = {"Authorization": "Bearer " + http.post("/v1/players", json={}).json()["token"]}
    code = _win_the_challenge(http, anonymous, challenge, redis_client)
    player = _app_player(http, key, "user-4")
    _win_the_challenge(http, _as(key, "user-4"), challenge, redis_client)
    [entered] = _entries(redis_client, challenge, 1)
    assert (entered.type, entered.app, entered.player) == ("challenge.entry", app, player)
    data = entered.data
    assert {k: data[k] for k in ("challenge", "player_id", "external_id", "change")} == {
        "challenge": challenge, "player_id": player, "external_id": "user-4", "change": "entered",
    }  # fmt: skip
    assert data["entry"]["player"] == player and data["entry"]["moves"] > 0 and "code" not in data["entry"]
    assert http.post(f"/v1/admin/players/{player}/ban", json={"reason": "bot"}, headers=OPERATOR).status_code == 200
    assert http.post(f"/v1/admin/players/{player}/unban", json={"reason": "ok"}, headers=OPERATOR).status_code == 200
    assert http.delete("/v1/players/me", headers=_as(key, "user-4")).status_code == 204
    events = _entries(redis_client, challenge, 4)
    assert [(e.data["change"], e.data["entry"] is None) for e in events] == [
        ("entered", False), ("left", True), ("entered", False), ("left", True),
    ]  # fmt: skip
    assert {e.data["external_id"] for e in events} == {"user-4"} and {e.app for e in events} == {app}
    assert not redis_client.hgetall(keyspace.boards_of_deal(challenge_board(challenge)).event_ids), "forgotten"
    for name in _outboxes(redis_client):
        for event in _events(redis_client, name):
            assert code not in json.dumps(event.data), f"the sealed code in {name}"


def test_a_challenges_close_emits_challenge_closed_once_with_what_it_unseals(
    settings: Settings, redis_client: redis.Redis, clock: FakeClock
) -> None:
    """Two servers (two processes' worth of close tasks) on one Redis, checking every 50 ms: while the challenge is
    open nothing is emitted; once the clock passes its close, exactly one ``challenge.closed`` lands in the
    challenge's outbox, to every app, with the code, nonce and commitment (which check against each other), and the
    tasks seeing it again emit nothing more."""
    checking = settings.but(challenges={"close_check_s": 0.05}, webhooks={"delivery": False})
    apps = [create_app(checking, clock=clock), create_app(checking, clock=clock)]  # manual: the test runs the checks
    with serve_in_thread(apps[0]) as url, serve_in_thread(apps[1]):
        challenge = httpx.get(f"{url}/v1/challenges/current", timeout=30).json()
        box = keyspace.challenge_outbox(challenge["id"])
        for _ in range(3):  # several checks while it is open
            for app in apps:
                run_job(app, "challenge closes")
        assert not redis_client.exists(box), "nothing before the close"
        clock.advance((challenge_close_ms(challenge) - now_ms(clock)) / 1000 + 1)
        for _ in range(3):  # several more checks, in both servers
            for app in apps:
                run_job(app, "challenge closes")
        [closed] = _events(redis_client, box)
    assert (closed.type, closed.app, closed.player) == ("challenge.closed", "*", "")
    data = closed.data
    assert data["challenge"] == challenge["id"] and data["closed_at"] == challenge["closes_at"].replace("+00:00", "Z")
    kept = json.loads(redis_client.get(keyspace.challenge_deal(challenge["id"])) or b"{}")
    assert (data["code"], data["nonce"], data["commitment"]) == (kept["code"], kept["nonce"], challenge["commitment"])
    assert commitment(data["code"], data["nonce"]) == data["commitment"]
    assert redis_client.zscore(keyspace.EVENTS_DUE, box) is not None


def test_an_app_players_erasure_while_redis_is_full_answers_204_and_keeps_its_event(
    http: httpx.Client, redis_client: redis.Redis, settings: Settings, clock: FakeClock
) -> None:
    """Redis at its ``maxmemory`` (a real one of 1 byte): the app player's erasure still answers 204, and its
    ``player.erased`` is in the app's outbox (written by the step that frees the binding), found by the sweep once
    room comes back, though marking it due was refused."""
    key, app = _app(http)
    player = _app_player(http, key, "user-5")
    redis_client.config_set("maxmemory", "1")
    try:
        erased = http.delete("/v1/players/me", headers=_as(key, "user-5"))
    finally:
        redis_client.config_set("maxmemory", "0")
    assert erased.status_code == 204, erased.text
    app_outbox = keyspace.app_outbox(app)
    [event] = _events(redis_client, app_outbox)
    assert event.type == "player.erased" and event.data == {"player_id": player, "external_id": "user-5"}
    assert redis_client.zscore(keyspace.EVENTS_DUE, app_outbox) is None, "Redis refused the mark while full"

    async def sweep() -> int:
        client = connect(settings.redis)
        try:
            return await outbox.sweep(client, now_ms(clock))
        finally:
            await client.aclose()

    assert asyncio.run(sweep()) == 1
    assert redis_client.zscore(keyspace.EVENTS_DUE, app_outbox) is not None, "due once the sweep ran"
