"""Rate limits shared by every process through Redis: a generic cell rate algorithm (GCRA) kept in one key per
client and limit.

A limit of ``limit`` requests per ``window_s`` lets a client spend ``limit`` at once and then one every
``window_s / limit`` seconds. The check is a Lua function, :data:`GCRA_LUA`, that other scripts include: on the move
route it runs inside the compare-and-set save (no extra round trip), elsewhere as a script of its own. The clock is
Redis's own (``TIME``), so every process agrees on it.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Final

from redis.exceptions import ResponseError

from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra.redis import RedisClient, storage_full

GCRA_LUA: Final = """
local function gcra(key, interval, burst)
  if interval <= 0 then return 0 end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  local new = tat + interval
  local wait = new - burst - now
  if wait > 0 then return wait end
  redis.call('SET', key, new, 'PX', new - now)
  return 0
end
"""

_CHECK: Final = (
    GCRA_LUA
    + """
return gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
"""
)

QUOTA_LUA: Final = """
local function quota_wait(key, quota, window)
  if quota <= 0 then return 0 end
  if tonumber(redis.call('GET', key) or '0') < quota then return 0 end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, window) ttl = window end
  return ttl
end
local function quota_count(key, quota, window)
  if quota > 0 and redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, window) end
end
"""
"""A quota: at most ``quota`` counted in a window of ``window`` ms that starts with the first one counted
(``quota_wait`` answers the ms until the window ends once the quota is used up, 0 while some is left)."""

_CHECK_WITH_QUOTA: Final = (
    GCRA_LUA
    + QUOTA_LUA
    + """
local quota, window = tonumber(ARGV[3]), tonumber(ARGV[4])
local over = quota_wait(KEYS[2], quota, window)
if over > 0 then return {2, over} end
local wait = gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if wait > 0 then return {1, wait} end
quota_count(KEYS[2], quota, window)
return {0, 0}
"""
)
"""A rate limit and a quota of one client, in one step: a request refused by either counts against neither."""

_TAKE: Final = (
    QUOTA_LUA
    + """
local over = quota_wait(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
if over > 0 then return over end
quota_count(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
return 0
"""
)
_GIVE_BACK: Final = """
if tonumber(redis.call('GET', KEYS[1]) or '0') > 0 then redis.call('DECR', KEYS[1]) end
return 0
"""


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

    def args(self) -> tuple[int, int]:
        """The script arguments for this limit: emission interval and burst, in ms."""
        return self._args

    @cached_property
    def _args(self) -> tuple[int, int]:
        return (self.interval_ms, self.burst_ms)

    def wait_ms(self, cell: int, now_ms: int) -> int:
        """How long a client whose cell (GCRA's theoretical arrival time) holds ``cell`` must wait before one more
        request passes, read without counting one: what :data:`GCRA_LUA` would answer at ``now_ms``."""
        if self.limit <= 0:
            return 0
        return max(cell, now_ms) + self.interval_ms - self.burst_ms - now_ms

    def headers(self, wait_s: int) -> dict[str, str]:
        """The IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers, structured-field form) for a client
        that must wait ``wait_s``."""
        return {
            "RateLimit-Policy": f'"{self.name}";q={self.limit};w={self.window_s}',
            "RateLimit": f'"{self.name}";r=0;t={wait_s}',
        }


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

    def args(self) -> tuple[int, int]:
        """The script arguments: the quota and its window in ms."""
        return (self.limit, self.window_s * 1000)


class QuotaExceededError(DomainError):
    """A client that used up ``quota``: nothing was done; the quota starts afresh in ``wait_ms``."""

    def __init__(self, quota: Quota, wait_ms: int) -> None:
        self.wait_s = max(1, math.ceil(wait_ms / 1000))
        super().__init__(
            ErrorCode.QUOTA_EXCEEDED, retry_after_s=self.wait_s, seconds=str(self.wait_s), limit=str(quota.limit)
        )
        self.quota = quota


@lru_cache(maxsize=4096)
def client_bucket(address: str) -> str:
    """The bucket a client address counts in: the address itself for IPv4, its /64 network for IPv6 (one host
    commonly holds a whole /64). Kept for the addresses in play: parsing one is not cheap, and the move route asks
    on every move."""
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return address.strip()[:64] or "unknown"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False).network_address) + "/64"
    return str(parsed)


def address_key(limit: Limit, address: str) -> str:
    return f"pyr:{{rl:{client_bucket(address)}}}:{limit.name}"


def quota_key(quota: Quota, address: str) -> str:
    """In the client's slot, beside its rate-limit cells, so that one script checks both."""
    return f"pyr:{{rl:{client_bucket(address)}}}:quota:{quota.name}"


@lru_cache(maxsize=4096)
def player_limit_key(player: object, limit: Limit) -> str:
    """In the player's slot, so that scripts on the player's games can check it in the same step. Kept for the
    players in play: a move names it every time (``str(UUID)`` is not cheap)."""
    return f"pyr:{{p:{player}}}:rl:{limit.name}"


class RateLimiter:
    """Checks a limit with a script of its own (one round trip), for the routes where none is folded in."""

    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis
        self._check = redis.register_script(_CHECK)
        self._check_with_quota = redis.register_script(_CHECK_WITH_QUOTA)
        self._take = redis.register_script(_TAKE)
        self._give_back = redis.register_script(_GIVE_BACK)

    async def check(self, limit: Limit, key: str) -> None:
        """Count one request against ``limit`` under ``key``; :class:`RateLimitedError` when over it."""
        if limit.limit <= 0:
            return
        try:
            wait = int(await self._check(keys=[key], args=list(limit.args())))
        except ResponseError as error:
            if not storage_full(error):
                raise
            return  # a full Redis cannot count; what the request would write is refused on its own (507)
        if wait > 0:
            raise RateLimitedError(limit, wait)

    async def check_with_quota(self, limit: Limit, key: str, quota: Quota, counter: str) -> None:
        """Count one request against ``limit`` under ``key`` and against ``quota`` under ``counter`` (one slot),
        in one round trip: :class:`QuotaExceededError` or :class:`RateLimitedError` when over either, and then
        neither counts it."""
        if quota.limit <= 0:
            return await self.check(limit, key)
        kind, wait = await self._check_with_quota(keys=[key, counter], args=[*limit.args(), *quota.args()])
        if int(kind) == 2:
            raise QuotaExceededError(quota, int(wait))
        if int(kind) == 1:
            raise RateLimitedError(limit, int(wait))
        return None

    async def take(self, quota: Quota, counter: str) -> None:
        """Count one against ``quota`` under ``counter``; :class:`QuotaExceededError` when it is used up."""
        if quota.limit <= 0:
            return
        wait = int(await self._take(keys=[counter], args=list(quota.args())))
        if wait > 0:
            raise QuotaExceededError(quota, wait)

    async def give_back(self, quota: Quota, counter: str) -> None:
        """Return one taken with :meth:`take` for a request that in the end stored nothing."""
        if quota.limit > 0:
            await self._give_back(keys=[counter], args=[])
