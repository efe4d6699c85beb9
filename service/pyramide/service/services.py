"""The service's objects, built once per app start over one Redis client, and the dependencies handlers ask for.

Handlers name what they need (``games: Injected[GameReading]``); :class:`ServicesPlugin` registers the providers for
every route and starts and stops the services with the app, so no handler looks anything up in the application
state and every route gets its services the same way."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.config.app import AppConfig
from litestar.di import Provide
from litestar.plugins import InitPluginProtocol

from pyramide.service.accounts import AppPlayers, AppStore, PlayerStore
from pyramide.service.challenges.deals import REFILL_S
from pyramide.service.http.limits import AddressLimits, MoveAllowance
from pyramide.service.infra import address_moves
from pyramide.service.infra.clock import Clock, FakeClock, FileClock, SystemClock
from pyramide.service.infra.disk import CHECK_INTERVAL_S
from pyramide.service.infra.meters import process_meters
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.redis_probe import PROBE_S, RedisProbe
from pyramide.service.infra.reserve import CHECK_INTERVAL_S as RESERVE_CHECK_S
from pyramide.service.infra.reserve import MemoryReserve
from pyramide.service.infra.settings import Durability, EmbeddedRedis, Settings
from pyramide.service.infra.tasks import TaskRegistry
from pyramide.service.wiring.running import Running, group_of

STOP_WITHIN_S = 2.0
"""How long a stopping app waits for its background tasks (a par's search, an outbox's delivery) before it cancels
them: work cut short is redone (a par is claimed again, an outbox's claim runs out)."""


class Services:
    """The running services of one app, between its start and its stop, and the registry of their background work
    (:attr:`tasks`, new at each start: a test reaches it through :class:`ServicesPlugin`)."""

    def __init__(self, settings: Settings, clock: Clock | None = None) -> None:
        self.settings = settings
        self.clock = clock_of(settings) if clock is None else clock
        """The one clock of the app, created at its start-up (:func:`clock_of`) unless a test passed its own."""
        self.tasks = task_registry(self.clock)
        self._running: Running | None = None

    @property
    def running(self) -> Running:
        if self._running is None:
            raise RuntimeError("the service is not started")
        return self._running

    def start(self) -> None:
        self.tasks = tasks = task_registry(self.clock)
        self._running = running = Running.start(self.settings, self.clock, tasks)
        if running.disk is not None:
            tasks.every("disk watch", CHECK_INTERVAL_S, running.disk.watch, first_s=CHECK_INTERVAL_S)
        if running.reserve is not None:
            tasks.every("memory reserve", RESERVE_CHECK_S, running.reserve.refill)
        flush_s = address_moves.FLUSH_INTERVAL_S  # read at each start: a test may set it
        tasks.every("move counts flush", flush_s, running.plumbing.move_allowance.flush, first_s=flush_s)
        deals = running.challenges.challenges.deals
        if deals.days_ahead > 0:
            tasks.every("challenge choice ahead", REFILL_S, deals.refill)
        closes = running.challenges.closes
        tasks.every("challenge closes", closes.every_s, closes.check)
        probe = RedisProbe(running.redis, process_meters().redis_round_trip)
        tasks.every("redis round trip", PROBE_S, probe.probe)
        if self.settings.webhooks.delivery:
            running.events.deliverer.schedule()
        tasks.start()

    async def stop(self) -> None:
        """Stops the background work (pars at once; what else runs is given a moment to end: ``STOP_WITHIN_S``),
        then the services."""
        running, self._running = self._running, None
        if running is not None:
            running.deals.pars.close()
        await self.tasks.stop(STOP_WITHIN_S)
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

    def reserve(self) -> MemoryReserve | None:
        return self.running.reserve

    def app_players(self) -> AppPlayers:
        return self.running.accounts.app_players

    def address_limits(self) -> AddressLimits:
        return self.running.plumbing.address_limits

    def must_confirm(self) -> bool:
        """Whether a write's answer waits for Redis to confirm its append-only file (with ``confirm_writes``
        ``auto``: while the embedded Redis's disk is low)."""
        disk = self.running.disk
        return self.settings.durability.confirm_writes == "always" or disk is None or disk.low

    def disk_short(self) -> bool:
        """Whether the embedded Redis's disk has less than the disk reserve free: then only moderation and erasure
        write (``http/full.py``)."""
        disk = self.running.disk
        return disk is not None and disk.short

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
        retention, embedded = self.settings.retention, self.settings.embedded
        return {name: provide(name) for name in fields} | {
            "retention": Provide(lambda: retention, sync_to_thread=False, use_cache=True),
            "embedded": Provide(lambda: embedded, sync_to_thread=False, use_cache=True),
            "tasks": Provide(lambda: self.tasks, sync_to_thread=False),
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
    test_clock_file = settings.clock.test_clock_file
    return SystemClock() if test_clock_file is None else FileClock(test_clock_file)


def task_registry(clock: Clock) -> TaskRegistry:
    """The registry of an app's background work: paced by real sleeps, except over a test's :class:`FakeClock`, where
    nothing runs by itself: the test moves the clock and calls ``run_due``."""
    return TaskRegistry(clock, automatic=not isinstance(clock, FakeClock))


def confirms_writes(durability: Durability, embedded: EmbeddedRedis) -> bool:
    """Whether writes are ever confirmed on disk: ``always``, or ``auto`` over the embedded Redis (whose disk the
    service can watch; an external Redis's durability is its operator's)."""
    if durability.confirm_writes == "auto":
        return embedded.supervisor_state is not None
    return durability.confirm_writes == "always"
