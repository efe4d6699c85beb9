"""Everything that lives as long as the app runs: one Redis client, the plumbing over it (limits, live streams, the
disk watch), and each domain's objects (:mod:`wiring.accounts`, :mod:`wiring.deals`, :mod:`wiring.games`,
:mod:`wiring.challenges`)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Final

from pyramide.service.http.connection_limits import streams_per_process
from pyramide.service.http.limits import AddressLimits, MoveAllowance
from pyramide.service.http.stream_budget import StreamBudget
from pyramide.service.http.streams import LiveStreams
from pyramide.service.infra.address_moves import AddressMoves
from pyramide.service.infra.clock import Clock
from pyramide.service.infra.disk import DiskWatch
from pyramide.service.infra.meters import process_meters
from pyramide.service.infra.notices import Notices
from pyramide.service.infra.ratelimit import Limit, RateLimiter, per_minute
from pyramide.service.infra.redis import RedisClient, connect, subscriber
from pyramide.service.infra.reserve import MemoryReserve
from pyramide.service.infra.settings import Durability, EmbeddedRedis, LimitName, Settings
from pyramide.service.infra.stream_leases import StreamLeases
from pyramide.service.infra.tasks import TaskRegistry
from pyramide.service.wiring.accounts import Accounts
from pyramide.service.wiring.challenges import Challenges, Events, challenge_deals
from pyramide.service.wiring.deals import Deals, Stats
from pyramide.service.wiring.games import Games


@dataclass(slots=True)
class Plumbing:
    """What the routes share beyond any domain: the per-address limits and the live streams."""

    address_limits: AddressLimits
    move_allowance: MoveAllowance
    streams: LiveStreams

    @classmethod
    def start(
        cls, settings: Settings, redis: RedisClient, limiter: RateLimiter, clock: Clock, tasks: TaskRegistry
    ) -> Plumbing:
        move_allowance = MoveAllowance(
            AddressMoves(redis, _per_minute(settings, LimitName.ADDRESS_MOVES), clock=clock),
            AddressMoves(redis, _per_minute(settings, LimitName.ADDRESS_KEYED_MOVES), clock=clock),
            settings.limits,
            settings.proxies,
        )
        return cls(
            address_limits=AddressLimits(limiter, settings.limits, settings.proxies),
            move_allowance=move_allowance,
            streams=_live_streams(settings, redis, clock, tasks),
        )


@dataclass(slots=True)
class Running:
    redis: RedisClient
    disk: DiskWatch | None
    reserve: MemoryReserve | None
    plumbing: Plumbing
    deals: Deals
    stats: Stats
    games: Games
    challenges: Challenges
    accounts: Accounts
    events: Events

    @classmethod
    def start(cls, settings: Settings, clock: Clock, tasks: TaskRegistry) -> Running:
        """Every service over one Redis client, each reading the one ``clock`` (directly or through the store it
        is built on: a game service reads its :class:`GameStore`'s), their background work in ``tasks``."""
        redis = connect(settings.redis)
        limiter = RateLimiter(redis)
        plumbing = Plumbing.start(settings, redis, limiter, clock, tasks)
        deals = Deals.start(settings, redis, tasks)
        stats = Stats.start(settings, redis, clock)
        sealed = challenge_deals(settings, redis, deals, clock, tasks)
        games = Games.start(
            settings,
            redis,
            limiter,
            deals=deals,
            stats=stats,
            sealed_deals=sealed,
            move_allowance=plumbing.move_allowance,
            clock=clock,
            tasks=tasks,
        )
        challenges = Challenges.start(
            settings, redis, sealed_deals=sealed, deals=deals, games=games, leaderboards=stats.leaderboards
        )
        accounts = Accounts.start(
            settings,
            redis,
            limiter,
            games=games.games,
            stats=stats.stats,
            boards=stats.leaderboards,
            reviews=stats.reviews,
            clock=clock,
            tasks=tasks,
            notices=plumbing.streams.notices,
        )
        return cls(
            redis=redis,
            disk=_disk_watch(settings.durability, settings.embedded),
            reserve=_memory_reserve(settings, redis),
            plumbing=plumbing,
            deals=deals,
            stats=stats,
            games=games,
            challenges=challenges,
            accounts=accounts,
            events=Events.start(settings, redis, clock, tasks),
        )

    async def stop(self) -> None:
        await self.events.deliverer.close()
        await self.challenges.challenges.deals.close()
        self.deals.stop()
        await self.plumbing.streams.notices.close()
        await self.redis.aclose()


GROUPS: Final[dict[str, type]] = {
    "plumbing": Plumbing,
    "deals": Deals,
    "stats": Stats,
    "games": Games,
    "challenges": Challenges,
    "accounts": Accounts,
    "events": Events,
}
"""The groups of :class:`Running` whose objects handlers may ask for by their field's name."""


def group_of(name: str) -> str | None:
    """The group of :class:`Running` that holds the object named ``name``; ``None``: :class:`Running`'s own."""
    for group, kind in GROUPS.items():
        if name in {f.name for f in fields(kind)}:
            return group
    if name in {f.name for f in fields(Running)}:
        return None
    raise KeyError(name)


def _live_streams(settings: Settings, redis: RedisClient, clock: Clock, tasks: TaskRegistry) -> LiveStreams:
    """The live streams over the process's one pub/sub connection (to the node the URL names, in a cluster too; the
    master, through Sentinel)."""
    notices = Notices(subscriber(settings.redis), tasks, settings.streams.notices_ping_s)
    leases = StreamLeases(redis, settings.streams.heartbeat_s, clock=clock)
    budget = StreamBudget(streams_per_process(settings.http), process_meters())
    return LiveStreams(notices, leases, settings.streams, settings.proxies, tasks, budget=budget)


def _per_minute(settings: Settings, name: LimitName) -> Limit:
    return per_minute(name, settings.limits.per_minute[name])


def _memory_reserve(settings: Settings, redis: RedisClient) -> MemoryReserve | None:
    """The memory kept for moderation and erasure; none in a Redis Cluster (a key frees only its node's memory)."""
    wanted = settings.durability.memory_reserve_mb * 1024 * 1024
    return None if settings.redis.cluster or wanted <= 0 else MemoryReserve(redis, wanted)


def _disk_watch(durability: Durability, embedded: EmbeddedRedis) -> DiskWatch | None:
    """The watch over the embedded Redis's disk, for ``confirm_writes`` ``auto`` and the disk reserve."""
    if embedded.supervisor_state is None:
        return None
    if durability.confirm_writes != "auto" and durability.disk_reserve_mb <= 0:
        return None
    mb = 1024 * 1024
    reserve, short = durability.confirm_writes_reserve_mb * mb, durability.disk_reserve_mb * mb
    return DiskWatch(embedded.supervisor_state.parent, reserve, short)
