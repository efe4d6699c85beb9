"""The service's objects, built once per app start over one Redis client, and the dependencies handlers ask for.

Handlers name what they need (``games: Injected[GameReading]``); :class:`ServicesPlugin` registers the providers for
every route and starts and stops the services with the app, so no handler looks anything up in the application
state and every route gets its services the same way."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.config.app import AppConfig
from litestar.di import Provide
from litestar.plugins import InitPluginProtocol

from pyramide.service.accounts import AppPlayers, AppStore, PlayerStore
from pyramide.service.http.limits import AddressLimits, MoveAllowance
from pyramide.service.infra.clock import Clock, FileClock, SystemClock
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.settings import Settings
from pyramide.service.wiring.running import Running, group_of


class Services:
    """The running services of one app, between its start and its stop."""

    def __init__(self, settings: Settings, clock: Clock | None = None) -> None:
        self.settings = settings
        self.clock = clock_of(settings) if clock is None else clock
        """The one clock of the app, created at its start-up (:func:`clock_of`) unless a test passed its own."""
        self._running: Running | None = None
        self._disk_task: asyncio.Task[None] | None = None
        self._moves_task: asyncio.Task[None] | None = None
        self._ahead_task: asyncio.Task[None] | None = None
        self._closes_task: asyncio.Task[None] | None = None
        self._delivery_task: asyncio.Task[None] | None = None

    @property
    def running(self) -> Running:
        if self._running is None:
            raise RuntimeError("the service is not started")
        return self._running

    def start(self) -> None:
        self._running = running = Running.start(self.settings, self.clock)
        if running.disk is not None:
            self._disk_task = asyncio.get_running_loop().create_task(running.disk.run())
        self._moves_task = asyncio.get_running_loop().create_task(running.plumbing.move_allowance.run())
        self._ahead_task = asyncio.get_running_loop().create_task(running.challenges.challenges.deals.run())
        self._closes_task = asyncio.get_running_loop().create_task(running.challenges.closes.run())
        if self.settings.webhook_delivery:
            self._delivery_task = asyncio.get_running_loop().create_task(running.events.deliverer.run())

    async def stop(self) -> None:
        if self._disk_task is not None:
            self._disk_task.cancel()
            self._disk_task = None
        if self._moves_task is not None:
            self._moves_task.cancel()
            self._moves_task = None
        if self._ahead_task is not None:
            self._ahead_task.cancel()
            self._ahead_task = None
        if self._closes_task is not None:
            self._closes_task.cancel()
            self._closes_task = None
        if self._delivery_task is not None:
            self._delivery_task.cancel()
            self._delivery_task = None
        running, self._running = self._running, None
        if running is not None:
            await running.stop()

    def players(self) -> PlayerStore:
        return self.running.accounts.players

    def move_allowance(self) -> MoveAllowance:
        return self.running.plumbing.move_allowance

    def apps(self) -> AppStore:
        return self.running.accounts.apps

    def redis(self) -> RedisClient:
        return self.running.redis

    def app_players(self) -> AppPlayers:
        return self.running.accounts.app_players

    def address_limits(self) -> AddressLimits:
        return self.running.plumbing.address_limits

    def must_confirm(self) -> bool:
        """Whether a write's answer waits for Redis to confirm its append-only file (with ``confirm_writes``
        ``auto``: while the embedded Redis's disk is low)."""
        disk = self.running.disk
        return disk is None or disk.low

    def dependencies(self) -> dict[str, Any]:
        """What handlers may ask for by name."""

        def provide(name: str) -> Provide:
            group = group_of(name)

            def get_own() -> object:
                return getattr(self.running, name)

            if group is None:
                return Provide(get_own, sync_to_thread=False)
            held = group

            def get() -> object:
                return getattr(getattr(self.running, held), name)

            return Provide(get, sync_to_thread=False)

        fields = (
            "redis",
            "players",
            "solver",
            "pars",
            "stats",
            "leaderboards",
            "reviews",
            "settlement",
            "games",
            "creation",
            "hints",
            "game_reviews",
            "game_writes",
            "address_limits",
            "privacy",
            "challenges",
            "apps",
            "app_players",
            "audit",
            "bans",
            "annulments",
            "signing",
            "certificates",
            "webhooks",
            "deliverer",
            "streams",
        )
        settings = self.settings
        return {name: provide(name) for name in fields} | {
            "settings": Provide(lambda: settings, sync_to_thread=False, use_cache=True)
        }


class ServicesPlugin(InitPluginProtocol):
    """The one way handlers get services: registers every provider of :meth:`Services.dependencies` on the app (so
    every controller and route may name them) and runs the services for the app's lifetime."""

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        app_config.dependencies.update(self.services.dependencies())
        app_config.lifespan.append(self._running)
        return app_config

    @asynccontextmanager
    async def _running(self, _: Litestar) -> AsyncIterator[None]:
        self.services.start()
        try:
            yield
        finally:
            await self.services.stop()


def clock_of(settings: Settings) -> Clock:
    """The system clock; for a server started by a test (the test-only setting ``test_clock_file``), the time its
    fake clock writes to that file."""
    return SystemClock() if settings.test_clock_file is None else FileClock(settings.test_clock_file)


def confirms_writes(settings: Settings) -> bool:
    """Whether writes are ever confirmed on disk: ``always``, or ``auto`` over the embedded Redis (whose disk the
    service can watch; an external Redis's durability is its operator's)."""
    if settings.confirm_writes == "auto":
        return settings.supervisor_state is not None
    return settings.confirm_writes == "always"
