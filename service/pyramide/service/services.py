"""The service's objects, built once per app start over one Redis client, and the dependencies handlers ask for.

Handlers name what they need (``games: Injected[GameReading]``); :class:`ServicesPlugin` registers the providers for
every route and starts and stops the services with the app, so no handler looks anything up in the application
state and every route gets its services the same way."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from litestar import Litestar
from litestar.config.app import AppConfig
from litestar.di import Provide
from litestar.plugins import InitPluginProtocol

from pyramide.engine import DealCode
from pyramide.service.accounts import Annulments, AppPlayers, AppStore, AuditLog, Bans, PlayerStore
from pyramide.service.accounts.privacy import PlayerData
from pyramide.service.accounts.rewrites import Rewrites
from pyramide.service.challenges import ChallengeCloses, ChallengeDeals, ChallengeService
from pyramide.service.deals.analysis import Solver
from pyramide.service.deals.par import Par, ParBook, Saved, par_shown
from pyramide.service.deals.sealed import DealSecret
from pyramide.service.events import Deliverer, WebhookStore
from pyramide.service.games.certificates import Certificates, SigningKeys
from pyramide.service.games.controller import GameWrites
from pyramide.service.games.creation import GameCreation
from pyramide.service.games.hints import GameHints
from pyramide.service.games.play import GamePlay
from pyramide.service.games.reading import GameReading
from pyramide.service.games.review import GameReviews
from pyramide.service.games.settlement import Settlement
from pyramide.service.games.store import GameStore
from pyramide.service.http.limits import AddressLimits, MoveAllowance
from pyramide.service.http.streams import LiveStreams
from pyramide.service.infra.address_moves import AddressMoves
from pyramide.service.infra.disk import DiskWatch
from pyramide.service.infra.notices import Notices
from pyramide.service.infra.ratelimit import RateLimiter
from pyramide.service.infra.redis import RedisClient, connect
from pyramide.service.infra.settings import Settings
from pyramide.service.infra.stream_leases import StreamLeases
from pyramide.service.stats import FairPlay, Reviews
from pyramide.service.stats.leaderboards import Leaderboards
from pyramide.service.stats.statistics import StatsStore


@dataclass(slots=True)
class Running:
    """Everything that lives as long as the app runs."""

    redis: RedisClient
    players: PlayerStore
    solver: Solver
    pars: ParBook
    stats: StatsStore
    leaderboards: Leaderboards
    reviews: Reviews
    settlement: Settlement
    games: GameReading
    creation: GameCreation
    hints: GameHints
    game_reviews: GameReviews
    address_limits: AddressLimits
    move_allowance: MoveAllowance
    game_writes: GameWrites
    privacy: PlayerData
    challenges: ChallengeService
    closes: ChallengeCloses
    apps: AppStore
    app_players: AppPlayers
    audit: AuditLog
    disk: DiskWatch | None
    bans: Bans
    annulments: Annulments
    signing: SigningKeys
    certificates: Certificates
    webhooks: WebhookStore
    deliverer: Deliverer
    streams: LiveStreams

    @classmethod
    def start(cls, settings: Settings) -> Running:
        redis = connect(settings)
        limiter = RateLimiter(redis)
        solver = Solver(settings.solver_workers, settings.solver_time_limit_s, settings.solver_queue, redis=redis)
        store = GameStore(redis, settings)
        stats = StatsStore(redis)
        leaderboards = Leaderboards(redis)
        reviews = Reviews(redis, settings.min_move_ms)
        fair_play = FairPlay(settings.challenge_players, settings.min_move_ms)
        settlement = Settlement(
            redis, store, stats, leaderboards, settings.settlement_grace_s, fair_play=fair_play, reviews=reviews
        )
        players = PlayerStore(redis, settings)
        secret = DealSecret(redis, settings.deal_secret)
        deals = ChallengeDeals(
            redis,
            secret,
            solver,
            settings.challenge_presets,
            settings.challenge_candidates,
            days_ahead=settings.challenge_days_ahead,
        )
        pars = ParBook(redis, solver, settings.analysis_ttl_s)
        games = GameReading(store, pars)
        signing = SigningKeys(redis, settings.signing_keys)
        audit = AuditLog(redis)
        apps = AppStore(redis)
        app_players = AppPlayers(redis, players, settings.session_ttl_s)
        webhooks = WebhookStore(redis)
        move_allowance = MoveAllowance(
            AddressMoves(redis, settings.limits.limit("address_moves")),
            AddressMoves(redis, settings.limits.limit("address_keyed_moves")),
            settings,
        )
        challenges = ChallengeService(deals, games, leaderboards, pars)
        pars.on_saved(_boards_told(leaderboards, challenges))
        return cls(
            redis=redis,
            players=players,
            solver=solver,
            pars=pars,
            stats=stats,
            leaderboards=leaderboards,
            reviews=reviews,
            settlement=settlement,
            games=games,
            creation=GameCreation(store, solver, sealed_deals=deals),
            hints=GameHints(games, solver, settlement, limiter),
            game_reviews=GameReviews(games, solver, settings.analysis_ttl_s),
            address_limits=AddressLimits(limiter, settings),
            move_allowance=move_allowance,
            game_writes=GameWrites(GamePlay(store, settings.conflict_retries, settlement, pars), move_allowance),
            privacy=PlayerData(
                redis=redis,
                players=players,
                games=games,
                stats=stats,
                boards=leaderboards,
                reviews=reviews,
                retry_window_s=settings.idempotency_ttl_s,
                limiter=limiter,
                exports_limit=settings.limits.limit("exports"),
                guard_s=settings.erasure_guard_s,
                rewrites=Rewrites(redis, settings.erasure_rewrite_s) if settings.erasure_rewrite_s > 0 else None,
                audit=audit,
            ),
            challenges=challenges,
            closes=ChallengeCloses(redis, deals, settings.challenge_close_check_s, challenges.touch_board),
            apps=apps,
            app_players=app_players,
            disk=_disk_watch(settings),
            audit=audit,
            bans=Bans(players, leaderboards, audit, apps, app_players),
            annulments=Annulments(players, leaderboards, audit),
            signing=signing,
            certificates=Certificates(store, signing),
            webhooks=webhooks,
            deliverer=Deliverer(redis, webhooks, settings),
            streams=_live_streams(settings, redis),
        )

    async def stop(self) -> None:
        await self.deliverer.close()
        if self.privacy.rewrites is not None:
            await self.privacy.rewrites.close()
        await self.challenges.deals.close()
        self.pars.close()
        self.solver.close()
        await self.streams.notices.close()
        await self.redis.aclose()


def _boards_told(leaderboards: Leaderboards, challenges: ChallengeService) -> Saved:
    """What a saved par bumps: the boards of the closed challenges that dealt it, then the deal's board, last, so
    that its shown state being written marks the par's background work as over (for tests that count commands)."""

    async def told(code: DealCode, par: Par) -> None:
        await challenges.par_saved(code)
        await leaderboards.touch(str(code), par_shown(par))

    return told


def _live_streams(settings: Settings, redis: RedisClient) -> LiveStreams:
    """The live streams over the process's one pub/sub connection (to the node the URL names, in a cluster too)."""
    assert settings.redis_url is not None  # connect() refused to start without one
    notices = Notices(settings.redis_url, settings.redis_timeout_s, settings.stream_notices_ping_s)
    leases = StreamLeases(redis, settings.stream_heartbeat_s)
    return LiveStreams(notices, leases, settings)


class Services:
    """The running services of one app, between its start and its stop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
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
        self._running = Running.start(self.settings)
        if self._running.disk is not None:
            self._disk_task = asyncio.get_running_loop().create_task(self._running.disk.run())
        self._moves_task = asyncio.get_running_loop().create_task(self._running.move_allowance.run())
        self._ahead_task = asyncio.get_running_loop().create_task(self._running.challenges.deals.run())
        self._closes_task = asyncio.get_running_loop().create_task(self._running.closes.run())
        if self.settings.webhook_delivery:
            self._delivery_task = asyncio.get_running_loop().create_task(self._running.deliverer.run())

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
        return self.running.players

    def move_allowance(self) -> MoveAllowance:
        return self.running.move_allowance

    def apps(self) -> AppStore:
        return self.running.apps

    def redis(self) -> RedisClient:
        return self.running.redis

    def app_players(self) -> AppPlayers:
        return self.running.app_players

    def address_limits(self) -> AddressLimits:
        return self.running.address_limits

    def must_confirm(self) -> bool:
        """Whether a write's answer waits for Redis to confirm its append-only file (with ``confirm_writes``
        ``auto``: while the embedded Redis's disk is low)."""
        disk = self.running.disk
        return disk is None or disk.low

    def dependencies(self) -> dict[str, Any]:
        """What handlers may ask for by name."""

        def provide(name: str) -> Provide:
            def get() -> object:
                return getattr(self.running, name)

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


def confirms_writes(settings: Settings) -> bool:
    """Whether writes are ever confirmed on disk: ``always``, or ``auto`` over the embedded Redis (whose disk the
    service can watch; an external Redis's durability is its operator's)."""
    if settings.confirm_writes == "auto":
        return settings.supervisor_state is not None
    return settings.confirm_writes == "always"


def _disk_watch(settings: Settings) -> DiskWatch | None:
    """The watch over the embedded Redis's disk, for ``confirm_writes`` ``auto``."""
    if settings.confirm_writes != "auto" or settings.supervisor_state is None:
        return None
    return DiskWatch(settings.supervisor_state.parent, settings.confirm_writes_reserve_mb * 1024 * 1024)
