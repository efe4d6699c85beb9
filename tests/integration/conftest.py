"""Integration fixtures: one real Redis server (the embedded one) for the session, emptied before each test."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
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
from pyramide.service.infra.clock import FakeClock, utc_now
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.settings import LimitName, Quotas, Settings
from tests.support.waiting import eventually

TEST_LIMITS: dict[str, Any] = {
    "limits": {
        "per_minute": dict.fromkeys(LimitName, 100_000),
        "per_day": dict.fromkeys(Quotas.model_fields, 1_000_000),
    },
    "caps": {"max_unfinished_games": 100_000},
    "challenges": {"min_move_ms": 0, "days_ahead": 0},
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
def settings(redis_server: EmbeddedRedis, redis_client: redis.Redis, clock: FakeClock) -> Settings:
    """Settings for an app under test. ``test_clock_file``: an app a test builds from them (``create_app``, a
    served copy with other limits) reads the test's :func:`clock` too, through the file it writes."""
    return Settings(
        redis={"url": redis_server.url},
        embedded={"data_dir": Path(redis_server.data_dir)},
        clock={"test_clock_file": clock.path},
        solver={"time_limit_s": 0.5, "workers": 1},
        **TEST_LIMITS,
    )


@pytest.fixture
def app(settings: Settings, clock: FakeClock) -> Litestar:
    return create_app(settings, clock=clock)


@pytest.fixture
def client(app: Litestar) -> Iterator[TestClient[Any]]:
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture
def clock(tmp_path: Path) -> FakeClock:
    """The time of the service under test: it starts at :data:`WEDNESDAY_10H` and moves only when the test moves
    it (``advance``, ``set``). The ``app`` fixture is built with it; a test that builds its own app passes it
    (``create_app(settings, clock=clock)``), and a server in another process reads it from its file
    (:func:`clock_env`)."""
    return FakeClock(WEDNESDAY_10H, tmp_path / "clock")


def clock_env(clock: FakeClock) -> dict[str, str]:
    """The environment that gives a server process started by a test the test's fake clock."""
    assert clock.path is not None
    return {"PYRAMIDE_TEST_CLOCK_FILE": str(clock.path)}


def browser_clock(clock: FakeClock) -> str:
    """An init script that sets a page's ``Date`` to the service's clock as it stands (then running on from there):
    for a page that reads the browser's day, as the calendar does."""
    return (
        f"(() => {{ const shift = {clock.time() * 1000!r} - Date.now(); const Real = Date;"
        " class Shifted extends Real { constructor(...a) { if (a.length) super(...a); else super(Real.now() + shift); }"
        " static now() { return Real.now() + shift; } }; globalThis.Date = Shifted; })();"
    )


def next_midnight(clock: FakeClock) -> float:
    """The next midnight UTC after the clock's time, in seconds since the epoch: where the daily challenges close."""
    now = utc_now(clock)
    return (datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)).timestamp()


def past_the_close(clock: FakeClock) -> None:
    """Moves the clock a minute past the next midnight UTC: today's challenges closed, tomorrow's open."""
    clock.advance(next_midnight(clock) + 60 - clock.time())


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
        watcher = redis.Redis.from_url(url)
        eventually(lambda: any(c.get("cmd") == "monitor" for c in watcher.client_list()), 5, what="MONITOR begun")
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

    def started() -> bool:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        return bool(server.started)

    eventually(started, 60, what="uvicorn started")
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
