"""Housekeeping of issue 47's events: once delivered, nothing is left in Redis that is no longer anybody's. A real
``pyramide`` app served over a loopback socket, the embedded Redis, and a real receiving HTTP server on 127.0.0.1
(slow where a delivery must be in flight); every change made through the API."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import httpx
import pytest
import redis
from litestar import Litestar

from pyramide.service.app import create_app
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import FakeClock, now_ms
from pyramide.service.infra.settings import Settings
from tests.support.events import challenge_close_ms
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.serving import serve_in_thread
from tests.support.waiting import drain, eventually, run_job
from tests.support.webhooks import abandon, as_user, bearer, new_app, receiving


@contextmanager
def served(settings: Settings, **changes: Any) -> Iterator[tuple[httpx.Client, Litestar]]:
    """The service on a real loopback socket, loopback endpoints allowed; the app, for its background work."""
    loopback = settings.but(secrets={"operator_key": OPERATOR_KEY}, webhooks={"allow_loopback": True})
    app = create_app(loopback.but(**changes))
    with serve_in_thread(app) as url, httpx.Client(base_url=url) as http:
        yield http, app


def endpoint(http: httpx.Client, key: str, url: str, events: list[str]) -> str:
    created = http.post("/v1/apps/me/webhooks", json={"url": url, "events": events}, headers=bearer(key))
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def leftovers(redis_client: redis.Redis) -> list[str]:
    """Every outbox stream and every delivery cursor hash in Redis (whatever the cursors' key names)."""
    found = {k.decode() for k in redis_client.scan_iter(match=keyspace.OUTBOX_PATTERN, _type="stream")}
    found |= {k.decode() for k in redis_client.scan_iter(match="*cursor*")}
    return sorted(found)


def settled(redis_client: redis.Redis, within_s: float = 5) -> list[str]:
    """The leftovers once there are none (an outbox emptied at one delivery pass is deleted at the next), or after
    ``within_s``."""
    with contextlib.suppress(AssertionError):
        eventually(lambda: not leftovers(redis_client), within_s)
    return leftovers(redis_client)


def due(redis_client: redis.Redis, within_s: float = 5) -> int:
    """How many outboxes are due once none is, or after ``within_s``: a delivery settles its outbox (deleting it)
    first and lets go of its claim in ``EVENTS_DUE`` a moment later."""
    with contextlib.suppress(AssertionError):
        eventually(lambda: not redis_client.zcard(keyspace.EVENTS_DUE), within_s)
    return int(redis_client.zcard(keyspace.EVENTS_DUE))


def app_id(key: str) -> UUID:
    return UUID(key.split("_")[1])


def test_delivered_outboxes_leave_no_stream_nor_cursor_and_the_next_event_still_arrives(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """30 app players each abandon a game; once the receiver has the 30 events, Redis holds no outbox stream and no
    cursor hash (before, each player's empty stream and its cursors stayed for good, and the sweep walked them all),
    and nothing is due. A player's next event, emitted after its outbox was deleted, still arrives, once."""
    with served(settings) as (http, service), receiving() as receiver:
        key = new_app(http)
        endpoint(http, key, receiver.url, ["game.abandoned"])
        games = [abandon(http, as_user(key, f"user-{n}")) for n in range(30)]
        receiver.wait(30)
        assert settled(redis_client) == []
        assert due(redis_client) == 0
        games.append(abandon(http, as_user(key, "user-0")))
        receiver.wait(31)
        run_job(service, "webhook delivery")  # a delivery pass more, every delivery it starts ended: no repeat

        arrived = [json.loads(body)["data"]["game_id"] for _, body in receiver.got]
        assert sorted(arrived) == sorted(games), "every event once"  # between outboxes no order (docs/events.md)
        assert arrived.index(games[0]) < arrived.index(games[30]), "user-0's outbox in the order written"
        assert settled(redis_client) == []


@pytest.mark.parametrize("how", ["endpoint deleted", "app revoked"])
def test_an_endpoint_gone_while_its_delivery_is_in_flight_leaves_no_log(
    settings: Settings, redis_client: redis.Redis, how: str
) -> None:
    """The receiver takes 1 s to answer; the app deletes its endpoint (or the operator revokes the app) while a
    delivery to it is in flight: once the delivery ends, no key of the endpoint exists (log, deliveries, health),
    nor the outbox and its cursors (before, the delivery wrote the log again after the deletion, and it stayed for
    good), and the app is out of the apps set."""
    with served(settings) as (http, service), receiving(delay_s=1.0) as receiver:
        key = new_app(http)
        app = app_id(key)
        hook = endpoint(http, key, receiver.url, ["game.abandoned"])
        abandon(http, as_user(key, "u"))
        receiver.wait(1, seconds=5)
        if how == "endpoint deleted":
            assert http.delete(f"/v1/apps/me/webhooks/{hook}", headers=bearer(key)).status_code == 204
        else:
            assert http.delete(f"/v1/admin/apps/{app}", headers=OPERATOR).status_code == 204
        drain(service)  # the delivery in flight ends, and its log would be written
        assert redis_client.exists(keyspace.webhook_log(app, hook), keyspace.webhook_deliveries(app, hook)) == 0
        assert [k.decode() for k in redis_client.scan_iter(match=f"*{hook}*")] == []  # its health neither
        assert settled(redis_client) == []
        assert not redis_client.sismember(keyspace.WEBHOOK_APPS, str(app))


def test_a_player_erased_while_its_delivery_is_in_flight_leaves_no_cursor(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """The receiver takes 1 s to answer; an app player is erased (through the API) while its event is being
    delivered: once the deliveries end (the event goes again from the app's outbox, under its id), no key of the
    player but its tombstone exists, and no outbox or cursor hash is left (before, the delivery in flight wrote the
    erased outbox's cursors again, for good)."""
    with served(settings) as (http, service), receiving(delay_s=1.0) as receiver:
        key = new_app(http)
        endpoint(http, key, receiver.url, ["game.abandoned"])
        user = as_user(key, "u")
        player = http.get("/v1/players/me", headers=user).json()["id"]
        abandon(http, user)
        receiver.wait(1, seconds=5)
        assert http.delete("/v1/players/me", headers=user).status_code == 204
        drain(service)  # the delivery in flight ends
        receiver.wait(2, seconds=5)  # the handed-over event, again under its id
        assert receiver.got[1][0]["webhook-id"] == receiver.got[0][0]["webhook-id"]
        drain(service)  # that delivery ends too
        naming = {k.decode() for k in redis_client.scan_iter(match=f"*{{p:{player}}}*")}  # the cursors' too
        assert naming <= {keyspace.tombstone(UUID(player))}
        assert settled(redis_client) == []


def test_an_app_without_endpoints_leaves_the_apps_set_and_a_new_one_gets_challenge_closed(
    settings: Settings, redis_client: redis.Redis, clock: FakeClock
) -> None:
    """An app deletes its only endpoint: it is no longer among the apps every ``challenge.closed`` is read for
    (before, it stayed in the set for good); another app is revoked: out of it too. The first app registers a new
    endpoint: it is back in the set, and that endpoint gets the challenge's ``challenge.closed`` when it closes."""
    with served(settings, challenges={"close_check_s": 0.05}) as (http, service), receiving() as receiver:
        key, other = new_app(http), new_app(http)
        first = endpoint(http, key, receiver.url, ["challenge.closed"])
        endpoint(http, other, receiver.url, ["challenge.closed"])
        assert redis_client.smembers(keyspace.WEBHOOK_APPS) == {str(app_id(k)).encode() for k in (key, other)}
        assert http.delete(f"/v1/apps/me/webhooks/{first}", headers=bearer(key)).status_code == 204
        assert http.delete(f"/v1/admin/apps/{app_id(other)}", headers=OPERATOR).status_code == 204
        assert redis_client.smembers(keyspace.WEBHOOK_APPS) == set()
        endpoint(http, key, receiver.url, ["challenge.closed"])
        assert redis_client.smembers(keyspace.WEBHOOK_APPS) == {str(app_id(key)).encode()}
        challenge = http.get("/v1/challenges/current").json()
        clock.advance((challenge_close_ms(challenge) - now_ms(clock)) / 1000 + 1)
        receiver.wait(1, seconds=10)
        run_job(service, "webhook delivery")  # a delivery pass more, every delivery it starts ended: no stray event

        [closed] = [json.loads(body) for _, body in receiver.got]
        assert closed["type"] == "challenge.closed" and closed["data"]["challenge"] == challenge["id"]
        assert settled(redis_client) == []
