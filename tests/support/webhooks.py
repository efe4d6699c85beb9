"""Webhook receivers, apps and their players: a receiving HTTP server and the API calls that register endpoints."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from litestar.testing import TestClient
from standardwebhooks import Webhook

from pyramide.service.app import create_app
from pyramide.service.infra.clock import FakeClock, SystemClock
from pyramide.service.infra.settings import Settings
from tests.support.deals import EASY_CODE, WINNING
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.waiting import eventually
from tests.support.webhook_schema import check_event


class Receiver:
    """A receiving HTTP server on 127.0.0.1: answers each POST with ``answer(n)`` (n: the request's number, from 0)
    after ``delay_s``, and keeps every request's headers and body."""

    def __init__(self, answer: Callable[[int], int] = lambda _: 204, delay_s: float = 0.0, port: int = 0) -> None:
        self.got: list[tuple[dict[str, str], bytes]] = []
        self.answer, self.delay_s = answer, delay_s
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                number = len(receiver.got)
                receiver.got.append(({k.lower(): v for k, v in self.headers.items()}, body))
                time.sleep(receiver.delay_s)
                self.send_response(receiver.answer(number))
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def events(self, secret: str | list[str]) -> list[dict[str, Any]]:
        """The bodies received, each verified with ``secret`` (every one of a list) and held to its type's published
        schema."""
        found = []
        for headers, body in list(self.got):
            for each in [secret] if isinstance(secret, str) else secret:
                found.append(check_event(Webhook(each).verify(body, headers)))
        return found[:: 1 if isinstance(secret, str) else len(secret)]

    def wait(self, count: int, seconds: float = 10) -> None:
        eventually(lambda: len(self.got) >= count, seconds, what=f"{count} deliveries (got {len(self.got)})")


@contextmanager
def receiving(**options: Any) -> Iterator[Receiver]:
    receiver = Receiver(**options)
    try:
        yield receiver
    finally:
        receiver.close()


@contextmanager
def service(settings: Settings, *, clock: FakeClock | None = None, **changes: Any) -> Iterator[Any]:
    """The service on the system clock: most of these tests wait in real time for deliveries, their retries and
    timeouts (the delivery task's own pace), which a test's fake clock would hold still. Given ``clock``, the
    service runs on it instead and delivers only when the test runs its due jobs (``run_due``)."""
    loopback = settings.but(secrets={"operator_key": OPERATOR_KEY}, webhooks={"allow_loopback": True})
    app = create_app(loopback.but(**changes), clock=SystemClock() if clock is None else clock)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def new_app(client: Any) -> str:
    response = client.post("/v1/admin/apps", json={"name": "Kártya Klub", "scopes": ["players"]}, headers=OPERATOR)
    assert response.status_code == 201, response.text
    return str(response.json()["key"])


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def as_user(key: str, external_id: str) -> dict[str, str]:
    return {**bearer(key), "Pyramide-Player": external_id}


ALL_GAME_EVENTS = ["game.won", "game.lost", "game.abandoned"]


def register(client: Any, key: str, url: str, events: list[str] | None = None) -> dict[str, Any]:
    response = client.post("/v1/apps/me/webhooks", json={"url": url, "events": events or ALL_GAME_EVENTS},
                           headers=bearer(key))  # fmt: skip
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def abandon(http: Any, headers: dict[str, str]) -> str:
    game = http.post("/v1/games", json={"code": EASY_CODE}, headers=headers)
    assert game.status_code == 201, game.text
    assert http.post(f"/v1/games/{game.json()['id']}/moves", json=WINNING[0], headers=headers).status_code == 200
    assert http.post(f"/v1/games/{game.json()['id']}/abandon", headers=headers).status_code == 200
    return str(game.json()["id"])
