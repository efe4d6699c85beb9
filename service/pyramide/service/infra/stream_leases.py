"""The caps on open live streams, counted in Redis so that they hold across workers and replicas.

Each open stream holds a lease in each cap it counts against (a sorted set: stream id by the ms its lease ends),
renewed every heartbeat on a timer while it is open (whether or not its writes progress); a stream that ends gives
its leases back, and a killed process's leases end by themselves :data:`LEASE_BEATS` heartbeats later.

Every call is a script, so it goes over the process's one pipelined connection (:mod:`infra.pipelined`), never the
client's pool: a thousand streams closed at once once asked the pool for a thousand connections, most give-backs
failed (``MaxConnectionsError``, a traceback each) and their leases held the address's cap full until they ran out
(issue 56). A give-back that fails all the same (Redis out of reach) never raises: the lease runs out by itself, and
the failure is logged once until a give-back succeeds again."""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence
from typing import Final, NamedTuple

from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.outage import OutageLog
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.scripts import Result, Script

log = logging.getLogger("pyramide.streams")
LEASE_BEATS: Final = 3
"""A lease lasts this many heartbeats: a stream must miss three in a row before it stops counting."""


class LeaseKeys(NamedTuple):
    leases: str


class LeaseArgs(NamedTuple):
    stream: str
    now_ms: str
    until_ms: str
    cap: str


class ReleaseArgs(NamedTuple):
    stream: str


LEASE: Final = Script("stream_lease", LeaseKeys, LeaseArgs)
"""Takes or renews one lease: :attr:`Result.OK`, or :attr:`Result.FULL` for a new stream past the cap."""
RELEASE: Final = Script("stream_release", LeaseKeys, ReleaseArgs)
"""Gives one lease back: :attr:`Result.OK`."""


class Cap(NamedTuple):
    """One cap a stream counts against: its sorted set's key, and how many streams it allows."""

    key: str
    limit: int


class StreamLeases:
    """Takes, renews and gives back a stream's leases."""

    def __init__(self, redis: RedisClient, heartbeat_s: float, *, clock: Clock) -> None:
        self.redis = redis
        self.clock = clock
        self.lease_ms = int(heartbeat_s * 1000 * LEASE_BEATS)
        self._lease = LEASE.load(redis)
        self._release = RELEASE.load(redis)
        self.renewals = OutageLog("Redis, renewing the live streams' leases,", log, clock)
        """The renewals' failures (every stream's, every heartbeat), logged once an outage (``http.streams``)."""
        runs_out = f"each runs out within {self.lease_ms / 1000:g} s"
        self._give_backs = OutageLog(f"Redis, giving the live streams' leases back ({runs_out}),", log, clock)

    @staticmethod
    def new_stream() -> str:
        return secrets.token_hex(8)

    async def take(self, stream: str, caps: Sequence[Cap]) -> bool:
        """The stream's lease in every cap, or none of them (False) when one is full."""
        taken: list[Cap] = []
        for cap in caps:
            if not await self._take(stream, cap):
                await self.give_back(stream, taken)
                return False
            taken.append(cap)
        return True

    async def renew(self, stream: str, caps: Sequence[Cap]) -> None:
        """Extends the stream's leases (it holds them, so no cap refuses it)."""
        for cap in caps:
            await self._take(stream, cap)

    async def give_back(self, stream: str, caps: Sequence[Cap]) -> None:
        """Ends the stream's leases, each cap tried whatever the others did; never raises (see the module)."""
        failure: Exception | None = None
        for cap in caps:
            try:
                await self._release(LeaseKeys(leases=cap.key), ReleaseArgs(stream=stream))
            except Exception as error:
                failure = error
        if failure is not None:
            self._give_backs.failed(failure)
        elif caps:
            self._give_backs.succeeded()

    async def _take(self, stream: str, cap: Cap) -> bool:
        now = now_ms(self.clock)
        args = LeaseArgs(stream=stream, now_ms=str(now), until_ms=str(now + self.lease_ms), cap=str(cap.limit))
        return bool(await self._lease(LeaseKeys(leases=cap.key), args) == Result.OK)
