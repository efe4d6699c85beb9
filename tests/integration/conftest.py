"""Integration fixtures: one real Redis server (the embedded one) for the session, so one per pytest-xdist worker,
emptied before each test."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient
from playwright.sync_api import sync_playwright

from pyramide.service.app import create_app
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.settings import Settings
from tests.support.clock import WEDNESDAY_10H
from tests.support.limits import TEST_LIMITS
from tests.support.players import new_player
from tests.support.serving import serve_in_thread


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


@pytest.fixture
def player(client: TestClient[Any]) -> dict[str, str]:
    return new_player(client)


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
        pytest.fail("no Chromium: install Debian's `chromium` package (scripts/debian-tools.sh does, as root)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()
