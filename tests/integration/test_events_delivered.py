"""Every event type of this part of issue 47 reaches an app's endpoint, signed, once the delivery lands: a real
receiving HTTP server on 127.0.0.1, an endpoint registered through ``POST /v1/apps/me/webhooks``, the change made
through the API, and the request verified with ``standardwebhooks``. Skipped while the service has no webhooks
route (probed once); it runs as soon as the delivery is merged."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from standardwebhooks import Webhook

from pyramide.service.app import create_app
from pyramide.service.infra.clock import FakeClock, SystemClock, now_ms
from pyramide.service.infra.settings import Settings
from tests.support.events import OPERATOR, OPERATOR_KEY, _app, _app_player, _as, _win_the_challenge, challenge_close_ms
from tests.support.serving import serve_in_thread
from tests.support.waiting import eventually
from tests.support.webhook_schema import check_event


def _has_webhooks() -> bool:
    """Whether the service has the webhooks route (probed once, on an app that never reaches Redis)."""
    app = create_app(Settings(redis={"url": "redis://unused"}))
    return any(route.path.startswith("/v1/apps/me/webhooks") for route in app.routes)


pytestmark = pytest.mark.skipif(not _has_webhooks(), reason="no webhooks route yet (the delivery part of issue 47)")


class Receiver:
    """A real HTTP server on loopback that keeps every request it receives (body and headers) and answers 204."""

    def __init__(self) -> None:
        self.received: list[tuple[bytes, dict[str, str]]] = []
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                received.append((body, {k.lower(): v for k, v in self.headers.items()}))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def events(self, secret: str, kind: str, count: int, within_s: float = 20) -> list[dict[str, Any]]:
        """The first ``count`` events of type ``kind``, each verified with ``secret`` and held to its type's published
        schema (raises if one is not), a repeat
        of an event id dropped as the receivers are told to (a delivery in flight when its player is erased goes again
        from the app's outbox, under its id)."""

        def received() -> list[dict[str, Any]]:
            found = [check_event(Webhook(secret).verify(body, headers)) for body, headers in list(self.received)]
            firsts = [e for at, e in enumerate(found) if all(e["id"] != f["id"] for f in found[:at])]
            chosen = [event for event in firsts if event["type"] == kind]
            assert len(chosen) >= count, f"{kind}: {count} not received within {within_s} s"
            return chosen[:count]

        return eventually(received, within_s)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[httpx.Client, Receiver]]:
    """On the system clock: a delivery that waits for another to the same endpoint is due again a moment later in the
    service's time, which a test's fake clock would hold still."""
    update: dict[str, Any] = {"secrets": {"operator_key": OPERATOR_KEY}, "webhooks": {"allow_loopback": True}}
    receiver = Receiver()
    app = create_app(settings.but(**update), clock=SystemClock())
    with serve_in_thread(app) as url, httpx.Client(base_url=url) as http:
        yield http, receiver
    receiver.close()


def _endpoint(http: httpx.Client, key: str, url: str, events: list[str]) -> str:
    created = http.post(
        "/v1/apps/me/webhooks", json={"url": url, "events": events}, headers={"Authorization": f"Bearer {key}"}
    )
    assert created.status_code == 201, created.text
    secret: str = created.json()["secret"]
    assert secret.startswith("whsec_")
    return secret


def test_player_banned_and_erased_reach_the_apps_endpoint_signed(served: tuple[httpx.Client, Receiver]) -> None:
    http, receiver = served
    key, _ = _app(http)
    secret = _endpoint(http, key, receiver.url, ["player.banned", "player.erased"])
    player = _app_player(http, key, "user-9")
    assert http.post(f"/v1/admin/players/{player}/ban", json={"reason": "bot"}, headers=OPERATOR).status_code == 200
    assert http.post(f"/v1/admin/players/{player}/unban", json={"reason": "ok"}, headers=OPERATOR).status_code == 200
    assert http.delete("/v1/players/me", headers=_as(key, "user-9")).status_code == 204
    banned = receiver.events(secret, "player.banned", 2)
    assert [e["data"]["banned"] for e in banned] == [True, False], "in order"
    [erased] = receiver.events(secret, "player.erased", 1)
    assert erased["data"] == {"player_id": player, "external_id": "user-9"}
    assert erased["id"].startswith("evt_")


def test_challenge_entry_reaches_the_apps_endpoint_signed_without_the_code(
    served: tuple[httpx.Client, Receiver], redis_client: Any
) -> None:
    http, receiver = served
    key, _ = _app(http)
    secret = _endpoint(http, key, receiver.url, ["challenge.entry"])
    challenge = http.get("/v1/challenges/current").json()["id"]
    player = _app_player(http, key, "user-10")
    code = _win_the_challenge(http, _as(key, "user-10"), challenge, redis_client)
    [entry] = receiver.events(secret, "challenge.entry", 1)
    assert entry["data"]["player_id"] == player and entry["data"]["change"] == "entered"
    assert code not in json.dumps(entry)


def test_challenge_closed_reaches_every_apps_endpoint_signed_after_the_close(
    settings: Settings, clock: FakeClock
) -> None:
    update: dict[str, Any] = {
        "secrets": {"operator_key": OPERATOR_KEY},
        "webhooks": {"allow_loopback": True},
        "challenges": {"close_check_s": 0.05},
    }
    receivers = [Receiver(), Receiver()]
    try:
        with serve_in_thread(create_app(settings.but(**update))) as url, httpx.Client(base_url=url) as http:
            secrets = [_endpoint(http, _app(http)[0], r.url, ["challenge.closed"]) for r in receivers]
            challenge = http.get("/v1/challenges/current").json()
            clock.advance((challenge_close_ms(challenge) - now_ms(clock)) / 1000 + 1)
            for receiver, secret in zip(receivers, secrets, strict=True):  # every app's endpoint, with its secret
                [closed] = receiver.events(secret, "challenge.closed", 1)
                assert closed["data"]["challenge"] == challenge["id"]
                assert closed["data"]["commitment"] == challenge["commitment"]
    finally:
        for receiver in receivers:
            receiver.close()
