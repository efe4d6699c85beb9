"""An endpoint that stays dead is disabled, not retried for ever (issue 47): its health (failing since when, the last
success) is kept in Redis; failing without a single success for ``PYRAMIDE_WEBHOOK_DISABLE_AFTER_S`` disables it, its
later events are ``skipped`` and its outboxes drain; ``enableWebhook`` brings it back. A failing endpoint is probed by
one attempt at a time, not by every outbox. Real HTTP on loopback: the service under uvicorn in a thread, a real
receiver (or a closed port), the outboxes read in the real Redis."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import httpx
from litestar import Litestar
from redis import Redis

from pyramide.service.app import create_app
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from tests.support.operators import OPERATOR_KEY
from tests.support.serving import _free_port, serve_in_thread
from tests.support.waiting import eventually, run_due, run_job
from tests.support.webhook_games import _abandon, _started_games
from tests.support.webhooks import abandon, as_user, bearer, new_app, receiving, register

SHORT = (0, 1, 1)
"""A retry schedule of seconds: three attempts, a second apart."""


@contextmanager
def service(settings: Settings, clock: FakeClock, **changes: Any) -> Iterator[tuple[httpx.Client, Litestar]]:
    """The service served by uvicorn on a loopback port (real HTTP), delivering to loopback endpoints, on the test's
    clock: it delivers when the test runs its due jobs (:func:`elapse`), its retries due as the test moves time."""
    loopback = settings.but(secrets={"operator_key": OPERATOR_KEY}, webhooks={"allow_loopback": True})
    app = create_app(loopback.but(**changes), clock=clock)
    with serve_in_thread(app) as url, httpx.Client(base_url=url) as http:
        yield http, app


def elapse(app: Litestar, clock: FakeClock, seconds: float, step_s: float = 0.5) -> None:
    """Lets ``seconds`` pass on the service's clock, ``step_s`` at a time, running the jobs due at each step."""
    run_due(app)
    for _ in range(round(seconds / step_s)):
        clock.advance(step_s)
        run_due(app)


def _until(check: Any, seconds: float = 10) -> Any:
    """``check()`` once it is truthy, polled for at most ``seconds``."""
    return eventually(check, seconds)


def _log(client: Any, key: str, endpoint: str) -> list[dict[str, Any]]:
    """The endpoint's deliveries, newest first."""
    answer = client.get(f"/v1/apps/me/webhooks/{endpoint}/deliveries", headers=bearer(key))
    assert answer.status_code == 200, answer.text
    entries: list[dict[str, Any]] = answer.json()["entries"]
    return entries


def test_a_dead_endpoint_is_disabled_its_events_skipped_and_enabled_again(
    settings: Settings, redis_client: Redis, clock: FakeClock
) -> None:
    """The receiver's port is closed. An app player abandons a game: after 1.9 s of failures with no success the
    endpoint shows `disabled` (`failing`, with when), at the third attempt, 2 s after the first. The player abandons
    3 more games: nothing is tried, each is `skipped` in the log and the player's outbox is empty (before, each event
    took the whole schedule again, and the outbox kept them). The receiver comes up; `enable`: the next game's event
    arrives signed, none of the skipped ones; a skipped one is redelivered by hand, the same id, signed."""
    port = _free_port()
    with service(settings, clock, webhooks={"retry_schedule_s": SHORT, "disable_after_s": 1.9}) as (client, app):
        key = new_app(client)
        endpoint = register(client, key, f"http://127.0.0.1:{port}/hook", ["game.abandoned"])
        base = f"/v1/apps/me/webhooks/{endpoint['id']}"
        assert client.get(base, headers=bearer(key)).json()["status"] == "enabled"
        user = as_user(key, "u")
        abandon(client, user)
        elapse(app, clock, 2)
        view = _until(lambda: (v := client.get(base, headers=bearer(key)).json())["status"] == "disabled" and v)
        assert view["disabled_reason"] == "failing" and view["disabled_at"] and view["failing_since"]
        assert view["last_success_at"] is None
        listed = client.get("/v1/apps/me/webhooks", headers=bearer(key)).json()["entries"]
        assert listed[0]["status"] == "disabled"
        # the endpoint is disabled a moment before the delivery loop notes the last attempt in the log
        [given_up] = _until(lambda: (e := _log(client, key, endpoint["id"]))[0]["status"] != "retrying" and e)
        assert given_up["status"] == "failed" and given_up["attempts"] == 3
        for _ in range(3):
            abandon(client, user)
        elapse(app, clock, 1)
        skipped = _until(lambda: len(e := _log(client, key, endpoint["id"])) == 4 and e)
        assert [e["status"] for e in skipped] == ["skipped"] * 3 + ["failed"]
        assert all(e["attempts"] == 0 for e in skipped[:3])
        player = client.get("/v1/players/me", headers=user).json()["id"]
        outbox = keyspace.player_outbox(UUID(player))
        _until(lambda: redis_client.xlen(outbox) == 0, seconds=5)
        with receiving(port=port) as receiver:
            enabled = client.post(f"{base}/enable", headers=bearer(key))
            assert enabled.status_code == 200, enabled.text
            assert enabled.json()["status"] == "enabled" and enabled.json()["failing_since"] is None
            game = abandon(client, user)
            run_due(app)
            receiver.wait(1)
            run_due(app)  # a delivery pass more, every delivery it starts ended: no stray skipped event
            [event] = receiver.events(endpoint["secret"])
            assert event["data"]["game_id"] == game
            again = client.post(f"{base}/deliveries/{skipped[0]['event_id']}/redeliver", headers=bearer(key))
            assert again.status_code == 202, again.text
            run_job(app, "webhook delivery")  # the poll takes the redeliveries asked for
            receiver.wait(2)
            assert receiver.events(endpoint["secret"])[1]["id"] == skipped[0]["event_id"]
        view = client.get(base, headers=bearer(key)).json()
        assert view["status"] == "enabled" and view["last_success_at"] is not None


def test_an_endpoint_that_fails_now_and_then_is_never_disabled(settings: Settings, clock: FakeClock) -> None:
    """The receiver fails every other request; the disabling bound is 1.5 s. An app player abandons 4 games, each
    retried a second after its failure and then delivered: over 4 s of failures, but a success between each, so the
    endpoint stays `enabled` and every event is `delivered`."""
    with service(settings, clock, webhooks={"retry_schedule_s": SHORT, "disable_after_s": 1.5}) as (client, app), \
            receiving(answer=lambda n: 500 if n % 2 == 0 else 204) as receiver:  # fmt: skip
        key = new_app(client)
        endpoint = register(client, key, receiver.url, ["game.abandoned"])
        user = as_user(key, "u")
        games = [abandon(client, user) for _ in range(4)]
        elapse(app, clock, 5)
        receiver.wait(8, seconds=15)
        assert [e["data"]["game_id"] for e in receiver.events(endpoint["secret"])[1::2]] == games
        # the receiver has the last request before the service has its answer: its outcome is recorded just after
        _until(lambda: all(e["status"] == "delivered" for e in _log(client, key, endpoint["id"])))
        view = client.get(f"/v1/apps/me/webhooks/{endpoint['id']}", headers=bearer(key)).json()
        assert view["status"] == "enabled" and view["failing_since"] is None and view["last_success_at"]
        assert [e["status"] for e in _log(client, key, endpoint["id"])] == ["delivered"] * 4


def test_a_failing_endpoint_is_probed_once_not_by_every_players_outbox(settings: Settings, clock: FakeClock) -> None:
    """The receiver answers 500. Six players of one app abandon a game each (six outboxes): over 3.5 s the endpoint
    gets at most 4 requests, a probe every 2 s (before, each outbox tried it on its own: 12). Once it answers 204,
    every player's event arrives within 4 s."""
    failing = [True]
    with service(settings, clock, webhooks={"retry_schedule_s": (0, 2, 2, 2, 2, 2)}) as (client, app), receiving(
        answer=lambda _: 500 if failing[0] else 204
    ) as receiver:  # fmt: skip
        key = new_app(client)
        endpoint = register(client, key, receiver.url, ["game.abandoned"])
        games = []
        for n in range(6):  # each delivered at once, as the service does when the game ends
            games.append(abandon(client, as_user(key, f"u{n}")))
            run_due(app)
        elapse(app, clock, 3.5)
        assert len(receiver.got) <= 4, len(receiver.got)
        failing[0] = False
        tried = len(receiver.got)
        elapse(app, clock, 4)
        receiver.wait(tried + 6, seconds=4)
        delivered = [e["data"]["game_id"] for e in receiver.events(endpoint["secret"])[tried:]]
        assert sorted(delivered) == sorted(games)


def test_attempts_that_fail_together_count_as_one_failure(settings: Settings, clock: FakeClock) -> None:
    """Eight players' events are in flight at once (the receiver takes 1 s) when the endpoint begins to fail: those
    eight 500s are one outage, not eight failures in a row, so the next probe comes after the schedule's wait for one
    failure (1 s), and once the endpoint answers every event arrives within 4 s (before, each counted: eight failures
    in a row put the next probe 300 s away, and every player's event waited for it)."""
    schedule = (0, 1, 300, 300, 300, 300, 300, 300, 300)
    with service(settings, clock, webhooks={"retry_schedule_s": schedule}) as (client, app), receiving(
        answer=lambda n: 500 if n < 8 else 204, delay_s=1.0
    ) as receiver:  # fmt: skip
        key = new_app(client)
        endpoint = register(client, key, receiver.url, ["game.abandoned"])
        games = _started_games(client, key, 8)
        _abandon(client, games)
        run_due(app)
        receiver.wait(8, seconds=5)
        elapse(app, clock, 4)
        receiver.wait(16, seconds=4 + 1)
        delivered = [e["data"]["game_id"] for e in receiver.events(endpoint["secret"])[8:]]
        assert sorted(delivered) == sorted(game for _, game in games)
        view = client.get(f"/v1/apps/me/webhooks/{endpoint['id']}", headers=bearer(key)).json()
        assert view["failing_since"] is None and view["status"] == "enabled"


def test_a_redelivery_that_succeeds_ends_the_failing(settings: Settings, clock: FakeClock) -> None:
    """The receiver fails the first request; its retry is 300 s away. The app redelivers the event by hand and the
    receiver takes it: the endpoint is failing no more (`failing_since` null, `last_success_at` set), so the other
    events go on at once instead of waiting for the probe (before, only the schedule's own attempts counted)."""
    with service(settings, clock, webhooks={"retry_schedule_s": (0, 300, 300)}) as (client, app), receiving(
        answer=lambda n: 500 if n == 0 else 204
    ) as receiver:  # fmt: skip
        key = new_app(client)
        endpoint = register(client, key, receiver.url, ["game.abandoned"])
        base = f"/v1/apps/me/webhooks/{endpoint['id']}"
        abandon(client, as_user(key, "u1"))
        run_due(app)
        failing = _until(lambda: (v := client.get(base, headers=bearer(key)).json())["failing_since"] and v)
        assert failing["last_success_at"] is None
        [failed] = _until(lambda: _log(client, key, endpoint["id"]))  # noted a moment after the endpoint's health
        again = client.post(f"{base}/deliveries/{failed['event_id']}/redeliver", headers=bearer(key))
        assert again.status_code == 202, again.text
        run_job(app, "webhook delivery")  # the poll takes the redeliveries asked for
        receiver.wait(2, seconds=5)
        view = _until(lambda: (v := client.get(base, headers=bearer(key)).json())["last_success_at"] and v)
        assert view["failing_since"] is None
        other = abandon(client, as_user(key, "u2"))
        run_due(app)
        receiver.wait(3, seconds=3)
        assert receiver.events(endpoint["secret"])[2]["data"]["game_id"] == other
