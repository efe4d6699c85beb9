"""Integration fixtures: one real Redis server (the embedded one) for the session, emptied before each test."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
import uvicorn
from litestar import Litestar
from litestar.testing import TestClient
from playwright.sync_api import sync_playwright

from pyramide.service.app import create_app
from pyramide.service.http.connection_limits import HttpLimits
from pyramide.service.http.server import server_config
from pyramide.service.infra import address_moves
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.settings import LIMIT_NAMES, Settings

TEST_LIMITS: dict[str, Any] = {
    **{f"limit_{name}": 100_000 for name in LIMIT_NAMES},
    **{f"quota_{name}": 1_000_000 for name in ("players", "games")},
    "max_unfinished_games": 100_000,
    "min_move_ms": 0,
    "challenge_days_ahead": 0,
}
"""Limits, quotas and caps the tests' bursts do not reach (they run far faster than a person, from one address; so
their challenge wins rank without waiting for a review); tests of the limits set their own. No challenge is chosen
ahead in the background (every test's app would solve sixteen on its fresh Redis); tests of commitments set 7."""

WEDNESDAY_10H = datetime(2042, 6, 11, 10, tzinfo=UTC).timestamp()
"""Where a test's fake clock starts: an ordinary moment (a Wednesday, 10:00 UTC, far from any day's or minute's
end), the same in every run. In the future on purpose: Redis keeps its own clock (``docs/time.md``), and the
service's clock must not be behind it."""


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture
def redis_client(redis_server: EmbeddedRedis) -> Iterator[redis.Redis]:
    if not redis_server.running:
        redis_server.start()
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def settings(redis_server: EmbeddedRedis, redis_client: redis.Redis) -> Settings:
    return Settings(
        redis_url=redis_server.url,
        data_dir=Path(redis_server.data_dir),
        solver_time_limit_s=0.5,
        solver_workers=1,
        **TEST_LIMITS,
    )


@pytest.fixture
def app(settings: Settings) -> Litestar:
    return create_app(settings)


@pytest.fixture
def client(app: Litestar) -> Iterator[TestClient[Any]]:
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


class ServiceClock:
    """The wall clock of the service served in this process (``time.time``, what it reads for the UTC day, the
    challenges' opening and closing, and the time of a win), kept at least :data:`DAY_MARGIN_S` before the next
    midnight UTC: a test that starts in the day's last hour has it moved a minute past that midnight, so that the
    day it reads once (today's challenge, open; tomorrow's, not yet) is the day every later request falls in.
    ``offset_s`` moves it further, as if the test waited."""

    DAY_MARGIN_S: float = 3600.0

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real = time.time
        self.offset_s = 0.0
        monkeypatch.setattr(time, "time", lambda: real() + self.offset_s)
        if self._to_midnight_s() < self.DAY_MARGIN_S:
            self.offset_s = self._to_midnight_s() + 60

    def now(self) -> datetime:
        return datetime.fromtimestamp(time.time(), UTC)

    def today(self) -> date:
        """The service's UTC day."""
        return self.now().date()

    def _to_midnight_s(self) -> float:
        now = self.now()
        return (datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1) - now).total_seconds()

    def past_the_close(self) -> None:
        """A minute past the next midnight UTC: today's challenges closed."""
        self.offset_s += self._to_midnight_s() + 60


@pytest.fixture
def service_clock(monkeypatch: pytest.MonkeyPatch) -> ServiceClock:
    return ServiceClock(monkeypatch)


def in_one_minute_window(needed_s: float = 12.0) -> None:
    """The per-address allowances of moves count in fixed minute windows of the wall clock (``time.time``; see
    ``infra/address_moves.py``), and a window's end gives the address its whole allowance again: a test that spends
    one and expects the next move refused starts its moves with at least ``needed_s`` left of a window (waiting for
    the next one when fewer are left)."""
    left = 60 - time.time() % 60
    if left < needed_s:
        time.sleep(left + 0.5)


def metric_values(client: TestClient[Any]) -> dict[str, float]:
    """Every sample ``/metrics`` shows, by its name with labels."""
    lines = client.get("/metrics").text.splitlines()
    return {line.rpartition(" ")[0]: float(line.rpartition(" ")[2]) for line in lines if line[:1] != "#"}


def new_player(client: TestClient[Any], **settings: object) -> dict[str, str]:
    """Headers that authenticate a fresh player."""
    response = client.post("/v1/players", json=settings)
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


@pytest.fixture
def player(client: TestClient[Any]) -> dict[str, str]:
    return new_player(client)


@contextmanager
def client_commands(url: str) -> Iterator[list[str]]:
    """The commands that clients send to Redis while the block runs, as Redis's MONITOR shows them (commands run
    inside a script are left out: they are not round trips)."""
    seen: list[str] = []
    stop = "pyramide-monitor-stop"
    with redis.Redis.from_url(url).monitor() as monitor:  # type: ignore[no-untyped-call]
        thread = threading.Thread(target=_listen, args=(monitor, seen, stop), daemon=True)
        thread.start()
        time.sleep(0.05)
        try:
            yield seen
        finally:
            redis.Redis.from_url(url).echo(stop)
            thread.join(timeout=5)


_HANDSHAKE = frozenset({"HELLO", "CLIENT", "SELECT"})
"""What a connection sends once when it opens (the stop signal's own connection among them): not a request's."""
_BACKGROUND = ("pyr:{events}:", "pyr:*:outbox")
"""What the webhook delivery task polls and sweeps in every process (``events/delivery.py``): not a request's."""


def without_address_flushes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every process adds the moves it served per address to Redis once a second, off the request path
    (``infra/address_moves.py``): an EVALSHA that lands in any window :func:`client_commands` watches, one time in
    a dozen or so. A test that counts a request's own commands calls this before its app starts: no flush comes."""
    monkeypatch.setattr(address_moves, "FLUSH_INTERVAL_S", 3600.0)


def _listen(monitor: Any, seen: list[str], stop: str) -> None:
    for event in monitor.listen():
        command = event["command"]
        if stop in command:
            return
        name = command.split(" ")[0].upper()
        if any(mark in command for mark in _BACKGROUND):
            continue
        if event.get("client_type") != "lua" and name not in _HANDSHAKE:
            seen.append(name)


@contextmanager
def serve_in_thread(app: Litestar, header_timeout_s: float = 10.0, **limits: Any) -> Iterator[str]:
    """The app served by uvicorn on a free loopback port, in a thread of this process: real HTTP and real
    concurrency, in-process. ``limits``: other :class:`HttpLimits` than the defaults."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        server_config(app, "127.0.0.1", port, HttpLimits(header_timeout_s, **limits), log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def live_url(app: Litestar) -> Iterator[str]:
    with serve_in_thread(app) as url:
        yield url


CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.fail("no Chromium: install Debian's `chromium` package (scripts/browser.sh does, as root)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()
