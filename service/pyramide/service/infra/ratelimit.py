"""Rate limits shared by every process through Redis: a generic cell rate algorithm (GCRA) kept in one key per
client and limit.

A limit of ``limit`` requests per ``window_s`` lets a client spend ``limit`` at once and then one every
``window_s / limit`` seconds. The check is a Lua function, ``lua/gcra.lua``, that other scripts include: on the move
route it runs inside the compare-and-set save (no extra round trip), elsewhere as a script of its own. The clock is
Redis's own (``TIME``), so every process agrees on it.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Final, NamedTuple

from redis.exceptions import ResponseError

from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra.redis import RedisClient, storage_full
from pyramide.service.infra.scripts import NoKeys, Result, Script


class CellKeys(NamedTuple):
    cell: str
    """The client's cell of the limit (GCRA's theoretical arrival time)."""


class LimitArgs(NamedTuple):
    interval: int
    """The limit's emission interval, in ms."""
    burst: int
    """The limit's burst, in ms."""


CHECK: Final = Script("rate_check", CellKeys, LimitArgs)


class CellAndCounterKeys(NamedTuple):
    cell: str
    counter: str
    """The client's count against the quota, in the cell's slot."""


class LimitAndQuotaArgs(NamedTuple):
    interval: int
    burst: int
    quota: int
    window: int
    """The quota's window, in ms."""


CHECK_WITH_QUOTA: Final = Script("rate_check_with_quota", CellAndCounterKeys, LimitAndQuotaArgs)
"""A rate limit and a quota of one client, in one step: a request refused by either counts against neither."""


class CounterKeys(NamedTuple):
    counter: str


class QuotaArgs(NamedTuple):
    quota: int
    window: int


TAKE: Final = Script("quota_take", CounterKeys, QuotaArgs)
GIVE_BACK: Final = Script("quota_give_back", CounterKeys, NoKeys)


@dataclass(frozen=True)
class Limit:
    """``limit`` requests per ``window_s`` seconds; ``limit`` 0 switches the limit off."""

    name: str
    limit: int
    window_s: int = 60

    @property
    def interval_ms(self) -> int:
        return 0 if self.limit <= 0 else max(1, self.window_s * 1000 // self.limit)

    @property
    def burst_ms(self) -> int:
        return self.interval_ms * self.limit

    def args(self) -> LimitArgs:
        """The script arguments for this limit: emission interval and burst, in ms."""
        return self._args

    @cached_property
    def _args(self) -> LimitArgs:
        return LimitArgs(interval=self.interval_ms, burst=self.burst_ms)

    def wait_ms(self, cell: int, now_ms: int) -> int:
        """How long a client whose cell (GCRA's theoretical arrival time) holds ``cell`` must wait before one more
        request passes, read without counting one: what ``gcra`` (``lua/gcra.lua``) would answer at ``now_ms``."""
        if self.limit <= 0:
            return 0
        return max(cell, now_ms) + self.interval_ms - self.burst_ms - now_ms

    @cached_property
    def policy(self) -> str:
        """The limit as an IETF ``RateLimit-Policy`` item (draft-ietf-httpapi-ratelimit-headers, structured
        field): its name, quota and window in seconds."""
        return f'"{self.name}";q={self.limit};w={self.window_s}'

    def state(self, remaining: int, reset_s: int) -> str:
        """An IETF ``RateLimit`` item: ``remaining`` requests left now, all back in ``reset_s`` seconds."""
        return f'"{self.name}";r={remaining};t={reset_s}'

    def headers(self, wait_s: int) -> dict[str, str]:
        """The IETF RateLimit headers for a client that must wait ``wait_s`` (a 429): nothing left."""
        return {"RateLimit-Policy": self.policy, "RateLimit": self.state(0, wait_s)}

    def allowance(self, ahead_ms: int) -> Allowance:
        """What is left of the limit for a client whose cell stands ``ahead_ms`` past now after a request it let
        through (the second answer of ``gcra``): the burst not yet spent, and when all of it is back."""
        remaining = max(0, (self.burst_ms - ahead_ms) // self.interval_ms) if self.interval_ms else self.limit
        return Allowance(self, remaining, max(0, math.ceil(ahead_ms / 1000)))


@lru_cache(maxsize=256)
def per_minute(name: str, limit: int) -> Limit:
    """The limit ``name`` of ``limit`` requests a minute, built once per value (its figures are cached in it)."""
    return Limit(name, limit, 60)


@dataclass(frozen=True, slots=True)
class Allowance:
    """What a client has left of ``limit`` after a request it let through: ``remaining`` more now, and all of it
    again in ``reset_s`` seconds. What the RateLimit headers of a successful answer say."""

    limit: Limit
    remaining: int
    reset_s: int

    def headers(self) -> dict[str, str]:
        return {"RateLimit-Policy": self.limit.policy, "RateLimit": self.limit.state(self.remaining, self.reset_s)}


ALLOWANCE: Final[ContextVar[Allowance | None]] = ContextVar("pyramide_allowance", default=None)
"""The tightest allowance the current request was counted against (every request runs in a task of its own, with
a copy of the context): set where a limit lets a request through, read by the HTTP layer for the headers of the
answer (``http.limits.rate_limit_headers``). A domain service that checks a limit need not pass it back."""


def note(allowance: Allowance) -> None:
    """Remember ``allowance`` for the current request's answer, unless one already noted leaves less."""
    noted = ALLOWANCE.get()
    if noted is None or allowance.remaining < noted.remaining:
        ALLOWANCE.set(allowance)


class RateLimitedError(DomainError):
    """A client over ``limit``: nothing was done; one more request passes in ``wait_ms``. Raised where the limit is
    checked (a store script, :class:`RateLimiter`)."""

    def __init__(self, limit: Limit, wait_ms: int) -> None:
        self.wait_s = max(1, math.ceil(wait_ms / 1000))
        super().__init__(ErrorCode.RATE_LIMITED, retry_after_s=self.wait_s, seconds=str(self.wait_s))
        self.limit = limit
        self.wait_ms = wait_ms


@dataclass(frozen=True)
class Quota:
    """At most ``limit`` per ``window_s`` seconds (a day), the window starting with the first one counted: what
    bounds the storage one client can take, where a rate limit only bounds its speed. ``limit`` 0: none."""

    name: str
    limit: int
    window_s: int = 24 * 3600

    def args(self) -> QuotaArgs:
        """The script arguments: the quota and its window in ms."""
        return QuotaArgs(quota=self.limit, window=self.window_s * 1000)


@lru_cache(maxsize=256)
def per_day(name: str, limit: int) -> Quota:
    """The daily quota ``name`` of ``limit``, built once per value."""
    return Quota(name, limit)


class QuotaExceededError(DomainError):
    """A client that used up ``quota``: nothing was done; the quota starts afresh in ``wait_ms``."""

    def __init__(self, quota: Quota, wait_ms: int) -> None:
        self.wait_s = max(1, math.ceil(wait_ms / 1000))
        super().__init__(
            ErrorCode.QUOTA_EXCEEDED, retry_after_s=self.wait_s, seconds=str(self.wait_s), limit=str(quota.limit)
        )
        self.quota = quota


class RateLimiter:
    """Checks a limit with a script of its own (one round trip), for the routes where none is folded in."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._check = CHECK.load(redis)
        self._check_with_quota = CHECK_WITH_QUOTA.load(redis)
        self._take = TAKE.load(redis)
        self._give_back = GIVE_BACK.load(redis)

    async def check(self, limit: Limit, key: str) -> None:
        """Count one request against ``limit`` under ``key``; :class:`RateLimitedError` when over it."""
        if limit.limit <= 0:
            return
        try:
            wait, ahead = await self._check(CellKeys(cell=key), limit.args())
        except ResponseError as error:
            if not storage_full(error):
                raise
            return  # a full Redis cannot count; what the request would write is refused on its own (507)
        if int(wait) > 0:
            raise RateLimitedError(limit, int(wait))
        note(limit.allowance(int(ahead)))

    async def check_with_quota(self, limit: Limit, key: str, quota: Quota, counter: str) -> None:
        """Count one request against ``limit`` under ``key`` and against ``quota`` under ``counter`` (one slot),
        in one round trip: :class:`QuotaExceededError` or :class:`RateLimitedError` when over either, and then
        neither counts it."""
        if quota.limit <= 0:
            return await self.check(limit, key)
        interval, burst = limit.args()
        quota_limit, window = quota.args()
        kind, wait_or_ahead = await self._check_with_quota(
            CellAndCounterKeys(cell=key, counter=counter),
            LimitAndQuotaArgs(interval=interval, burst=burst, quota=quota_limit, window=window),
        )
        if int(kind) == Result.OVER_QUOTA:
            raise QuotaExceededError(quota, int(wait_or_ahead))
        if int(kind) == Result.LIMITED:
            raise RateLimitedError(limit, int(wait_or_ahead))
        if limit.limit > 0:
            note(limit.allowance(int(wait_or_ahead)))
        return None

    async def take(self, quota: Quota, counter: str) -> None:
        """Count one against ``quota`` under ``counter``; :class:`QuotaExceededError` when it is used up."""
        if quota.limit <= 0:
            return
        wait = int(await self._take(CounterKeys(counter=counter), quota.args()))
        if wait > 0:
            raise QuotaExceededError(quota, wait)

    async def give_back(self, quota: Quota, counter: str) -> None:
        """Return one taken with :meth:`take` for a request that in the end stored nothing."""
        if quota.limit > 0:
            await self._give_back(CounterKeys(counter=counter), NoKeys())
