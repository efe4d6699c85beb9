"""Webhooks (issue 47, item 1): an app's endpoints get its players' finished games, signed as Standard Webhooks says,
at least once and in order, from the outbox in Redis; the address guard. Real HTTP on loopback: the service (in
process, or a real ``pyramide serve`` killed with SIGKILL) and a receiving server started by each test."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import psutil
import pytest
from standardwebhooks import Webhook

from pyramide.service.events.delivery import LEASE_MS
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import LimitName, Settings
from tests.support.challenges import _deal, _win
from tests.support.deals import EASY_CODE, WINNING
from tests.support.layouts import dead_end_moves, dead_end_start
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.serving import _free_port, serving
from tests.support.waiting import eventually, run_due, run_job
from tests.support.webhooks import (
    ALL_GAME_EVENTS,
    abandon,
    as_user,
    bearer,
    new_app,
    receiving,
    register,
    service,
)

FAST = (0, *[1] * 19)
"""A retry schedule of seconds: a receiver down for a while is tried every second."""


def deliveries_once(
    client: Any, key: str, endpoint: str, done: Callable[[list[dict[str, Any]]], bool], seconds: float = 10
) -> dict[str, Any]:
    """The endpoint's deliveries log once ``done(entries)`` (polled for at most ``seconds``, then the test fails): the
    receiver has a request before the service has its answer, whose outcome is logged a moment later."""

    def logged() -> dict[str, Any] | None:
        log: dict[str, Any] = client.get(f"/v1/apps/me/webhooks/{endpoint}/deliveries", headers=bearer(key)).json()
        assert done(log["entries"]), f"the deliveries log stayed {log['entries']!r} for {seconds} s"
        return log

    found = eventually(logged, seconds, what="the deliveries log")
    assert found is not None
    return found


def win(http: Any, headers: dict[str, str]) -> str:
    game = http.post("/v1/games", json={"code": EASY_CODE}, headers=headers)
    assert game.status_code == 201, game.text
    for move in WINNING:
        played = http.post(f"/v1/games/{game.json()['id']}/moves", json=move, headers=headers)
        assert played.status_code == 200, played.text
    return str(game.json()["id"])


def lose(http: Any, headers: dict[str, str]) -> str:
    game = http.post("/v1/games", json={"layout": dead_end_start().code.to_json()}, headers=headers)
    assert game.status_code == 201, game.text
    for move in dead_end_moves():
        played = http.post(f"/v1/games/{game.json()['id']}/moves", json=move_body(move), headers=headers)
        assert played.status_code == 200, played.text
    assert played.json()["status"] == "stuck", played.text
    return str(game.json()["id"])


def test_an_app_gets_its_players_won_lost_and_abandoned_games_once_signed(settings: Settings) -> None:
    """An app registers an endpoint (its secret shown once, never listed); its player wins, reaches a dead end and
    abandons through HTTP: the receiver gets each event once, in that order, with the payload, and each verifies
    with the secret (Standard Webhooks). An anonymous player's win sends nothing."""
    with service(settings) as client, receiving() as receiver:
        key = new_app(client)
        endpoint = register(client, key, receiver.url)
        assert endpoint["id"].startswith("wh_") and len(endpoint["id"]) == 29
        assert endpoint["secret"].startswith("whsec_")
        listed = client.get("/v1/apps/me/webhooks", headers=bearer(key)).json()["entries"]
        assert [e["id"] for e in listed] == [endpoint["id"]] and "secret" not in listed[0]
        anonymous = {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}
        win(client, anonymous)
        user = as_user(key, "user-1")
        games = [win(client, user), lose(client, user), abandon(client, user)]
        receiver.wait(3)
        run_job(client, "webhook delivery")  # a delivery pass more, every delivery it starts ended: no repeat
        events = receiver.events(endpoint["secret"])
        assert [e["type"] for e in events] == ALL_GAME_EVENTS
        assert [e["data"]["game_id"] for e in events] == games
        player = client.get("/v1/players/me", headers=user).json()["id"]
        won = events[0]
        assert won["id"].startswith("evt_") and receiver.got[0][0]["webhook-id"] == won["id"]
        assert won["data"] == {
            "game_id": games[0], "player_id": player, "external_id": "user-1", "code": EASY_CODE,
            "challenge": None, "rules": EASY_CODE.split("-")[1], "moves": len(WINNING), "undos": 0, "hints": 0,
            "score": won["data"]["score"], "elapsed_ms": won["data"]["elapsed_ms"],
            "finished_at": won["data"]["finished_at"],
        }  # fmt: skip
        assert won["data"]["score"] > 0 and won["timestamp"].endswith("Z")
        assert won["data"]["rules"] == "N"  # the preset, as the schema and docs/events.md say (was an object)
        with pytest.raises(Exception):  # noqa: B017,PT011 - any verification failure
            Webhook("whsec_" + "A" * 44).verify(receiver.got[0][1], receiver.got[0][0])


def test_a_rotated_secret_signs_beside_the_old_one(settings: Settings) -> None:
    """After a rotation, each delivery carries a signature by the new secret and one by the old (24 h grace): a
    receiver still on the old secret verifies it, and so does one on the new."""
    with service(settings) as client, receiving() as receiver:
        key = new_app(client)
        endpoint = register(client, key, receiver.url)
        rotated = client.post(f"/v1/apps/me/webhooks/{endpoint['id']}/secret", headers=bearer(key))
        assert rotated.status_code == 200, rotated.text
        new = rotated.json()["secret"]
        assert new != endpoint["secret"] and new.startswith("whsec_")
        win(client, as_user(key, "u"))
        receiver.wait(1)
        assert len(receiver.got[0][0]["webhook-signature"].split(" ")) == 2
        assert receiver.events([endpoint["secret"], new])[0]["type"] == "game.won"


def test_a_receiver_that_fails_for_a_while_gets_everything_in_order(settings: Settings) -> None:
    """The receiver answers 500 to its first 4 requests: after it recovers it has every event, in the order the
    games ended, each body exactly as signed; the log says each was delivered after more than one attempt."""
    with service(settings, webhooks={"retry_schedule_s": FAST}) as client, receiving(
        answer=lambda n: 500 if n < 4 else 200
    ) as receiver:  # fmt: skip
        key = new_app(client)
        endpoint = register(client, key, receiver.url)
        user = as_user(key, "u")
        games = [win(client, user), lose(client, user), abandon(client, user), win(client, user)]
        receiver.wait(8, seconds=20)
        run_job(client, "webhook delivery")  # a delivery pass more, every delivery it starts ended: no repeat
        delivered = [json.loads(b) for h, b in receiver.got[4:]]
        assert [e["data"]["game_id"] for e in delivered] == games
        assert [Webhook(endpoint["secret"]).verify(b, h)["id"] for h, b in receiver.got[4:]] == [
            e["id"] for e in delivered
        ]
        assert all(h["webhook-id"] == json.loads(b)["id"] for h, b in receiver.got)
        log = deliveries_once(client, key, endpoint["id"], lambda log: [e["status"] for e in log] == ["delivered"] * 4)
        assert [e["status"] for e in log["entries"]] == ["delivered"] * 4
        assert log["entries"][-1]["attempts"] == 5 and log["entries"][-1]["last_status"] == 200


def test_one_failing_endpoint_holds_no_other(settings: Settings) -> None:
    """Two endpoints of one app; the first answers 500 every time and then waits 30 s to be tried again: the other
    gets both of the player's wins at once (the failing one's wait holds only itself)."""
    slow_retry = (0, 30, 30)
    with service(settings, webhooks={"retry_schedule_s": slow_retry}) as client, \
            receiving(answer=lambda _: 500) as failing, \
            receiving() as healthy:  # fmt: skip
        key = new_app(client)
        register(client, key, failing.url)
        register(client, key, healthy.url)
        user = as_user(key, "u")
        win(client, user)
        started = time.monotonic()
        healthy.wait(1, seconds=3)
        win(client, user)
        healthy.wait(2, seconds=3)
        assert time.monotonic() - started < 3
        assert len(failing.got) == 1


def test_a_slow_endpoint_holds_no_other(settings: Settings) -> None:
    """One endpoint answers only after 4 s, past the 1 s timeout: the other gets the event within a second, and the
    slow one's log says `timeout`."""
    with service(settings, webhooks={"timeout_s": 1, "retry_schedule_s": FAST}) as client, receiving(
        delay_s=4
    ) as slow, receiving() as fast:  # fmt: skip
        key = new_app(client)
        slow_endpoint = register(client, key, slow.url)
        register(client, key, fast.url)
        win(client, as_user(key, "u"))
        started = time.monotonic()
        fast.wait(1, seconds=1)
        assert time.monotonic() - started < 1
        slow.wait(1, seconds=3)  # its timeout is noted in the log a second later, or more on a loaded machine
        log = deliveries_once(client, key, slow_endpoint["id"], bool)
        assert log["entries"][0]["last_error"] == "timeout" and log["entries"][0]["status"] == "retrying"


def test_the_deliveries_log_and_a_redelivery(settings: Settings) -> None:
    """The log lists each delivery, newest first, paged; a redelivery sends the same id and body again, with a new
    signature that verifies. Unknown ids are 404 with their codes, in English on request."""
    with service(settings) as client, receiving() as receiver:
        key = new_app(client)
        endpoint = register(client, key, receiver.url)
        user = as_user(key, "u")
        win(client, user)
        lose(client, user)
        receiver.wait(2)  # each outcome is logged once its answer is in, a moment after the receiver has it:
        deliveries_once(client, key, endpoint["id"], lambda log: [e["status"] for e in log] == ["delivered"] * 2)
        base = f"/v1/apps/me/webhooks/{endpoint['id']}"
        first = client.get(f"{base}/deliveries?limit=1", headers=bearer(key)).json()
        assert [e["type"] for e in first["entries"]] == ["game.lost"] and first["next_cursor"] == "1"
        second = client.get(f"{base}/deliveries?limit=1&cursor=1", headers=bearer(key)).json()
        assert [e["type"] for e in second["entries"]] == ["game.won"] and second["next_cursor"] is None
        won = second["entries"][0]
        assert won["status"] == "delivered" and won["attempts"] == 1 and won["last_status"] == 204
        again = client.post(f"{base}/deliveries/{won['event_id']}/redeliver", headers=bearer(key))
        assert again.status_code == 202, again.text
        receiver.wait(3)
        assert receiver.got[2][1] == receiver.got[0][1]
        assert Webhook(endpoint["secret"]).verify(receiver.got[2][1], receiver.got[2][0])["id"] == won["event_id"]
        english = {**bearer(key), "Accept-Language": "en"}
        missing = client.post(f"{base}/deliveries/evt_{'a' * 26}/redeliver", headers=english)
        assert missing.status_code == 404 and missing.json()["code"] == "delivery_not_found", missing.text
        assert missing.headers["content-type"].startswith("application/problem+json")
        unknown = client.get(f"/v1/apps/me/webhooks/wh_{'a' * 26}", headers=bearer(key))
        assert unknown.status_code == 404 and unknown.json()["code"] == "webhook_not_found", unknown.text
        assert client.delete(base, headers=bearer(key)).status_code == 204
        assert client.get(base, headers=bearer(key)).status_code == 404


def test_bad_registrations_are_refused_clearly(settings: Settings) -> None:
    """An unknown event type is 422 `validation_failed`; an 11th endpoint 409 `too_many_webhooks`; a player's token
    401: each a localised problem."""
    with service(settings) as client, receiving() as receiver:
        key = new_app(client)
        bad = client.post("/v1/apps/me/webhooks", json={"url": receiver.url, "events": ["game.tied"]},
                          headers=bearer(key))  # fmt: skip
        assert bad.status_code == 422 and bad.json()["code"] == "validation_failed", bad.text
        for _ in range(10):
            register(client, key, receiver.url)
        full = client.post("/v1/apps/me/webhooks", json={"url": receiver.url, "events": ["game.won"]},
                           headers={**bearer(key), "Accept-Language": "en"})  # fmt: skip
        assert full.status_code == 409 and full.json()["code"] == "too_many_webhooks", full.text
        assert "10" in full.json()["detail"] and full.headers["content-language"] == "en"
        hungarian = client.post("/v1/apps/me/webhooks", json={"url": receiver.url, "events": ["game.won"]},
                                headers=bearer(key))  # fmt: skip
        assert hungarian.headers["content-language"] == "hu" and hungarian.json()["detail"] != full.json()["detail"]


def test_the_guard_refuses_loopback_at_registration_and_at_delivery(settings: Settings) -> None:
    """With loopback not allowed (the default), `http://127.0.0.1`, `https://127.0.0.1`, `https://[::1]` and
    `https://localhost` (a name that resolves to loopback) are 422 `webhook_url_refused`, the detail saying why.
    An endpoint registered while loopback was allowed is not called once the service restarts with it disallowed:
    the receiver counts no request, and the log says the address was refused."""
    with receiving() as receiver:
        with service(settings) as client:
            key = new_app(client)
            endpoint = register(client, key, receiver.url)
        with service(settings, webhooks={"allow_loopback": False, "retry_schedule_s": FAST}) as client:
            port = receiver.port
            english = {**bearer(key), "Accept-Language": "en"}
            for url, why in [
                (f"http://127.0.0.1:{port}/", "only https://"),
                (f"https://127.0.0.1:{port}/", "not public"),
                (f"https://[::1]:{port}/", "not public"),
                (f"https://localhost:{port}/", "not public"),
            ]:
                refused = client.post("/v1/apps/me/webhooks", json={"url": url, "events": ["game.won"]},
                                      headers=english)  # fmt: skip
                assert refused.status_code == 422, refused.text
                assert refused.json()["code"] == "webhook_url_refused" and why in refused.json()["detail"], url
            hungarian = client.post("/v1/apps/me/webhooks", json={"url": receiver.url, "events": ["game.won"]},
                                    headers=bearer(key))  # fmt: skip
            assert hungarian.status_code == 422 and "https://" in hungarian.json()["detail"]
            win(client, as_user(key, "u"))
            base = f"/v1/apps/me/webhooks/{endpoint['id']}/deliveries"
            entry = eventually(lambda: client.get(base, headers=bearer(key)).json()["entries"], 5)[0]
            assert entry["last_error"] == "refused: webhook_not_https" and entry["last_status"] is None
            again = eventually(lambda: client.get(base, headers=bearer(key)).json()["entries"][0]["attempts"] >= 2, 5)
            assert again, "a second attempt, refused too"
            run_job(client, "webhook delivery")
        assert receiver.got == []


def test_a_win_survives_a_killed_server(tmp_path: Path) -> None:
    """A real `pyramide serve`; the receiver is down (its port closed). An app player wins; right after the
    winning move's answer the server and all its processes are killed with SIGKILL. A new server on the same
    data starts, the receiver comes up: it gets the win, signed."""
    port = _free_port()
    env = {
        "PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY,
        "PYRAMIDE_WEBHOOK_ALLOW_LOOPBACK": "true",
        "PYRAMIDE_WEBHOOK_RETRY_SCHEDULE_S": ",".join(map(str, FAST)),
    }
    data = tmp_path / "data"
    with serving(data, tmp_path, "--workers", "1", env=env) as served:
        key = new_app(httpx.Client(base_url=served.url))
        with httpx.Client(base_url=served.url) as http:
            endpoint = register(http, key, f"http://127.0.0.1:{port}/hook")
            game = win(http, as_user(key, "u"))
            for process in served.family():
                process.kill()
            psutil.wait_procs(served.family(), timeout=10)
    with serving(data, tmp_path, "--workers", "1", env=env), receiving(port=port) as receiver:
        receiver.wait(1, seconds=15)
        event = receiver.events(endpoint["secret"])[0]
        assert event["type"] == "game.won" and event["data"]["game_id"] == game


def test_a_challenge_games_event_keeps_the_code_sealed(settings: Settings, redis_client: Any) -> None:
    """An app player wins today's open challenge: the `game.won` event names the challenge, and its `code` is null
    (the deal stays sealed until the close): the body carries no trace of the code."""
    with service(settings) as client, receiving() as receiver:
        key = new_app(client)
        endpoint = register(client, key, receiver.url, ["game.won"])
        user = as_user(key, "u")
        challenge = client.get("/v1/challenges/current", headers=user).json()["id"]
        game = client.post("/v1/games", json={"challenge": challenge}, headers=user)
        assert game.status_code == 201, game.text
        code = _deal(redis_client, challenge)
        _win(client, user, game.json(), code)
        receiver.wait(1)
        event = receiver.events(endpoint["secret"])[0]
        assert event["data"]["challenge"] == challenge and event["data"]["code"] is None
        assert str(code) not in receiver.got[0][1].decode()


def test_a_url_that_cannot_be_sent_as_registered_is_refused(settings: Settings) -> None:
    """A name with letters beyond ASCII (it must be given in its `xn--` form) and a path with a control character
    are refused at registration with `webhook_url_refused`: such a URL once passed the guard and then made every
    delivery of its outbox raise, holding every other endpoint of that outbox for good."""
    with service(settings) as client, receiving() as receiver:
        key = new_app(client)
        port = receiver.url.rsplit(":", 1)[1].split("/")[0]
        for url in (f"http://bücher.localhost:{port}/hook", f"{receiver.url}a\x01b", f"{receiver.url}a b"):
            refused = client.post("/v1/apps/me/webhooks", json={"url": url, "events": ["game.won"]},
                                  headers={**bearer(key), "Accept-Language": "en"})  # fmt: skip
            assert refused.status_code == 422 and refused.json()["code"] == "webhook_url_refused", (url, refused.text)
        assert receiver.got == []


def test_a_revoked_apps_endpoints_get_nothing_more(settings: Settings, clock: FakeClock) -> None:
    """An app's key is revoked while its endpoint is failing and its player's win waits to be tried again: the
    endpoint is called no more (a leaked key's owner keeps no feed of the players' results), and its endpoints and
    logs are gone."""
    with service(settings, clock=clock, webhooks={"retry_schedule_s": FAST}) as client, \
            receiving(answer=lambda _: 500) as receiver:  # fmt: skip
        key = new_app(client)
        register(client, key, receiver.url)
        win(client, as_user(key, "u"))
        run_due(client)
        clock.advance(1)  # the schedule's first wait
        run_due(client)
        receiver.wait(2, seconds=10)
        app_id = str(UUID(key.split("_")[1]))
        assert client.delete(f"/v1/admin/apps/{app_id}", headers=OPERATOR).status_code == 204
        called = len(receiver.got)
        for _ in range(3):  # three more waits of the schedule
            clock.advance(1)
            run_due(client)
        assert len(receiver.got) == called, "the revoked app's endpoint is still called"


def test_a_players_next_event_during_a_slow_delivery_is_not_sent_twice(settings: Settings) -> None:
    """The receiver takes 0.8 s to answer each delivery. An app player abandons a game, then, while that event is
    being delivered, abandons two more: the receiver gets the three events once each, in order. (Before, the second
    event marked the outbox due again while it was claimed: a second claim sent the first event again.)"""
    with service(settings) as client, receiving(delay_s=0.8) as receiver:
        key = new_app(client)
        endpoint = register(client, key, receiver.url)
        user = as_user(key, "u")
        games = [abandon(client, user)]
        receiver.wait(1, seconds=3)
        games += [abandon(client, user), abandon(client, user)]
        receiver.wait(3, seconds=8)
        run_job(client, "webhook delivery")  # a delivery pass more, every delivery it starts ended: no repeat
        events = receiver.events(endpoint["secret"])
        assert [e["data"]["game_id"] for e in events] == games


def test_an_event_leaves_at_once_not_at_the_next_poll(settings: Settings) -> None:
    """An app player abandons 9 games one after another, each once the last one's event arrived: the median time
    from the abandon's answer to the event's arrival at the receiver is under 70 ms (before, the delivery waited for
    its next poll, 200 ms apart: about 100 ms and more)."""
    arrived: list[float] = []

    def noted(_: int) -> int:
        arrived.append(time.monotonic())
        return 204

    with service(settings) as client, receiving(answer=noted) as receiver:
        key = new_app(client)
        register(client, key, receiver.url)
        user = as_user(key, "u")
        latency = []
        for count in range(1, 10):
            game = client.post("/v1/games", json={"code": EASY_CODE}, headers=user).json()["id"]
            assert client.post(f"/v1/games/{game}/moves", json=WINNING[0], headers=user).status_code == 200
            assert client.post(f"/v1/games/{game}/abandon", headers=user).status_code == 200
            answered = time.monotonic()
            receiver.wait(count, seconds=3)

            def all_noted(n: int = count) -> bool:
                return len(arrived) >= n

            eventually(all_noted, 1)  # noted just after the request is kept
            latency.append(arrived[count - 1] - answered)
        assert sorted(latency)[4] < 0.070, [round(s * 1000) for s in latency]


def test_a_delivery_longer_than_the_lease_is_not_sent_twice(settings: Settings) -> None:
    """The receiver takes 12 s to answer (the timeout is 20 s), longer than a claim's 10 s lease: the claim is renewed
    while the delivery runs, so no other claim takes the outbox and sends the event again."""
    with service(settings, webhooks={"timeout_s": 20}) as client, receiving(delay_s=12) as receiver:
        key = new_app(client)
        register(client, key, receiver.url)
        abandon(client, as_user(key, "u"))
        receiver.wait(1, seconds=3)
        time.sleep(LEASE_MS / 1000 + 2.5)  # past the lease, the delivery still running
        assert len(receiver.got) == 1


def test_a_failing_endpoint_with_a_page_of_events_waiting_holds_no_other(settings: Settings) -> None:
    """One endpoint of an app fails (tried again in 30 s) while its player abandons more games than a delivery
    reads at once (a page of 100): the healthy endpoint still gets every one of them at once, the ones past the
    first page too (before, it waited for the failing endpoint's next try)."""
    burst = (LimitName.ADDRESS_GAMES, LimitName.ADDRESS_MOVES, LimitName.ADDRESS_KEYED_MOVES)
    lifted = {
        "per_minute": dict.fromkeys((LimitName.GAMES, LimitName.MOVES, *burst), 0),
        "app_per_minute": dict.fromkeys(burst, 0),
    }
    with service(settings, limits=lifted, webhooks={"retry_schedule_s": (0, 30, 30)}) as client, \
            receiving(answer=lambda _: 500) as failing, receiving() as healthy:  # fmt: skip
        key = new_app(client)
        register(client, key, failing.url, ["game.abandoned"])
        register(client, key, healthy.url, ["game.abandoned"])
        user = as_user(key, "u")
        games = [abandon(client, user) for _ in range(105)]
        healthy.wait(105, seconds=20)
        assert [json.loads(body)["data"]["game_id"] for _, body in healthy.got] == games
        assert len(failing.got) == 1


def test_a_game_abandoned_before_its_first_move_sends_no_event(settings: Settings) -> None:
    """docs/events.md says so (issue 59): a game nobody moved in never counted, so its abandon tells the app nothing.
    Events of one player arrive in order: the first one to arrive is the abandon of the game that was played."""
    with service(settings) as client, receiving() as receiver:
        key = new_app(client)
        endpoint = register(client, key, receiver.url)
        user = as_user(key, "user-2")
        untouched = client.post("/v1/games", json={"code": EASY_CODE}, headers=user).json()["id"]
        assert client.post(f"/v1/games/{untouched}/abandon", headers=user).status_code == 200
        played = abandon(client, user)
        receiver.wait(1)
        run_job(client, "webhook delivery")
        events = receiver.events(endpoint["secret"])
        assert [(e["type"], e["data"]["game_id"]) for e in events] == [("game.abandoned", played)]


def test_a_test_event_reaches_one_endpoint_signed_and_logged(settings: Settings) -> None:
    """An app can try its endpoint without playing a game (issue 59): ``sendTestWebhook`` sends ``webhook.test`` to
    that endpoint alone, whatever it subscribes to, signed; the deliveries log shows it delivered."""
    with service(settings) as client, receiving() as receiver, receiving() as other:
        key = new_app(client)
        endpoint = register(client, key, receiver.url, ["game.won"])
        register(client, key, other.url, ["game.won"])
        sent = client.post(f"/v1/apps/me/webhooks/{endpoint['id']}/test", headers=bearer(key))
        assert sent.status_code == 202, sent.text
        receiver.wait(1)
        [event] = receiver.events(endpoint["secret"])
        assert event["id"] == sent.json()["event_id"] and event["type"] == "webhook.test"
        assert event["data"]["webhook_id"] == endpoint["id"]
        deliveries_once(client, key, endpoint["id"], lambda entries: entries[0]["status"] == "delivered")
        assert other.got == [], "only the endpoint named"
        missing = client.post("/v1/apps/me/webhooks/wh_aaaaaaaaaaaaaaaaaaaaaaaaaa/test", headers=bearer(key))
        assert missing.status_code == 404
