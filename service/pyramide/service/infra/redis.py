"""The Redis client: redis-py's asyncio client, with two costs of its connections taken off every command and its
script calls pipelined over a connection of their own.

Through Sentinel (``redis+sentinel://``, read by :mod:`pyramide.service.infra.redis_urls`) the same client is made
by redis-py's public ``Sentinel(...).master_for(...)``: its pool's connections are redis-py's
``SentinelManagedConnection`` (with :class:`LeanCommands` mixed in), which ask a Sentinel for the master's address
each time they connect, the pipelined script connection's included; so after a failover every new connection
reaches the new master.

:class:`LeanCommands` replaces and changes methods whose inside it relies on: redis is pinned in pyproject.toml;
tests/unit/service/test_pinned_internals.py fails when that upstream code changes."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Awaitable, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.sentinel import Sentinel, SentinelManagedConnection, SentinelManagedSSLConnection
from redis.connection import HiredisRespSerializer
from redis.exceptions import OutOfMemoryError, ResponseError

from pyramide.service.infra.pipelined import READ_ONLY, PipelinedScripts
from pyramide.service.infra.redis_urls import SentinelUrl, is_sentinel, parse_sentinel

if TYPE_CHECKING:
    from pyramide.service.infra.settings import RedisSettings


class RedisClient(Protocol):
    """The Redis calls the service makes, as both redis-py's client and its cluster client offer them: mypy checks
    every call against this. Values come back as bytes (the clients never decode responses)."""

    def get(self, name: str, /) -> Awaitable[bytes | str | None]: ...
    def mget(self, keys: list[str], /) -> Awaitable[list[bytes | str | None]]: ...
    def set(
        self, name: str, value: str | bytes, ex: int | None = None, px: int | None = None, nx: bool = False
    ) -> Awaitable[bool | str | bytes | None]: ...
    def delete(self, *names: str) -> Awaitable[int]: ...
    def exists(self, *names: str) -> Awaitable[int]: ...
    def bgrewriteaof(self) -> Awaitable[Any]: ...
    def incr(self, name: str, /) -> Awaitable[int]: ...
    def publish(self, channel: str, message: str, /) -> Awaitable[int]: ...
    def setrange(self, name: str, offset: int, value: str, /) -> Awaitable[int]: ...
    def info(self, section: str, /) -> Awaitable[dict[str, Any]]: ...
    def pexpire(self, name: str, time: int, /) -> Awaitable[bool]: ...
    def hgetall(self, name: str, /) -> Awaitable[dict[Any, Any]]: ...
    def hlen(self, name: str, /) -> Awaitable[int]: ...
    def hget(self, name: str, key: str, /) -> Awaitable[bytes | str | None]: ...
    def hdel(self, name: str, /, *keys: str) -> Awaitable[int]: ...
    def sadd(self, name: str, /, *values: str) -> Awaitable[int]: ...
    def smembers(self, name: str, /) -> Awaitable[builtins.set[Any]]: ...
    def srem(self, name: str, /, *values: str) -> Awaitable[int]: ...
    def scan_iter(self, *, match: str, count: int, _type: str | None = None) -> AsyncIterator[Any]: ...
    def unlink(self, *names: str) -> Awaitable[int]: ...
    def hset(self, name: str, *, mapping: Mapping[Any, Any]) -> Awaitable[int]: ...
    def lrange(self, name: str, start: int, end: int, /) -> Awaitable[list[bytes | str]]: ...
    def zadd(self, name: str, mapping: Mapping[str, int], /, *, xx: bool = ...) -> Awaitable[int | float | None]: ...
    def zscore(self, name: str, value: str, /) -> Awaitable[float | None]: ...
    def zrem(self, name: str, /, *values: str) -> Awaitable[int]: ...
    def zrange(self, name: str, start: int, end: int, /) -> Awaitable[list[Any]]: ...
    def lpush(self, name: str, /, *values: str | bytes) -> Awaitable[int]: ...
    def ltrim(self, name: str, start: int, end: int, /) -> Awaitable[Any]: ...
    def xadd(
        self, name: str, fields: dict[Any, Any], *, maxlen: int | None = None, approximate: bool = True
    ) -> Awaitable[Any]: ...
    def xrevrange(self, name: str, /, max: str = "+", min: str = "-", count: int | None = None) -> Awaitable[Any]: ...
    def xdel(self, name: str, /, *ids: str) -> Awaitable[int]: ...
    def xrange(self, name: str, /, min: str = "-", max: str = "+", count: int | None = None) -> Awaitable[Any]: ...
    def hmget(self, name: str, keys: list[str], /) -> Awaitable[list[bytes | str | None]]: ...
    def rpush(self, name: str, /, *values: str | bytes) -> Awaitable[int]: ...
    def lpop(self, name: str, /) -> Awaitable[Any]: ...
    def zrevrange(self, name: str, start: int, end: int, /) -> Awaitable[list[Any]]: ...
    def zlexcount(self, name: str, min: str, max: str, /) -> Awaitable[int]: ...
    def zcard(self, name: str, /) -> Awaitable[int]: ...
    def scard(self, name: str, /) -> Awaitable[int]: ...
    def zrangebyscore(self, name: str, min: str, max: int, /) -> Awaitable[list[Any]]: ...
    def zrevrangebyscore(
        self, name: str, max: float | str, min: float | str, /, *, start: int, num: int, withscores: bool
    ) -> Awaitable[list[Any]]: ...
    def evalsha(self, sha: str, numkeys: int, /, *keys_and_args: str | bytes | int) -> Awaitable[Any]: ...
    def script_load(self, script: str | bytes, /) -> Awaitable[str]: ...
    def ping(self) -> Awaitable[bool]: ...
    async def aclose(self) -> None: ...


def raw(value: bytes | str | None) -> bytes | None:
    """A value as the service's clients return it: bytes (they never decode), typed as such."""
    return value.encode() if isinstance(value, str) else value


STORAGE_FULL_MARKS = ("OOM", "MISCONF")
"""How Redis says it cannot store a write: ``OOM`` past ``maxmemory`` (``noeviction``), ``MISCONF`` while it cannot
write its append-only file (a full disk; Redis refuses every write, and ``PING``, until a write succeeds). Inside a
script the reply quotes the inner error, so the marks are looked for anywhere in the text."""


def storage_full(error: Exception) -> bool:
    """Whether Redis refused a command because its memory or its disk is full: nothing was changed by it.

    redis-py raises :class:`OutOfMemoryError` for a plain command past ``maxmemory`` (its text no longer says
    ``OOM``), a plain :class:`ResponseError` naming ``OOM`` for a script, and one naming ``MISCONF`` for a disk
    error either way."""
    if isinstance(error, OutOfMemoryError):
        return True
    return isinstance(error, ResponseError) and any(mark in str(error) for mark in STORAGE_FULL_MARKS)


def out_of_memory(error: Exception) -> bool:
    """Whether Redis refused a command for lack of memory alone (past ``maxmemory``; not a disk error, which no
    deletion cures): nothing was changed by it."""
    if isinstance(error, OutOfMemoryError):
        return True
    return isinstance(error, ResponseError) and "OOM" in str(error) and "MISCONF" not in str(error)


class Relief(Protocol):
    """What frees memory for a request that may write while Redis is full (``infra/reserve.py``)."""

    async def release(self) -> None: ...


RELIEF: ContextVar[Relief | None] = ContextVar("pyramide_memory_relief", default=None)
"""Set while a request may spend Redis's memory reserve (moderation, erasure): then :class:`ServiceRedis` meets a
write refused for lack of memory by releasing the reserve and sending the write again, once."""


async def _relieve(error: ResponseError) -> None:
    """Release the reserve for a write refused for lack of memory, within :data:`RELIEF` (the caller then sends it
    again, once); anything else is raised again."""
    relief = RELIEF.get()
    if relief is None or not out_of_memory(error):
        raise error
    await relief.release()


UNAVAILABLE_MARKS = ("NOREPLICAS", READ_ONLY)
"""How a Redis says it takes no writes for now, whatever the write: ``NOREPLICAS``, a master with
``min-replicas-to-write`` that has too few replicas in step; ``READONLY``, a replica (a master demoted by a
failover). Inside a script the reply quotes the inner error, so the marks are looked for anywhere in the text."""


def writes_unavailable(error: Exception) -> bool:
    """Whether Redis refused a write for now (see :data:`UNAVAILABLE_MARKS`): nothing was changed (the refusal
    comes at a script's first write), and the same request may succeed shortly, as when Redis is down."""
    return isinstance(error, ResponseError) and any(mark in str(error) for mark in UNAVAILABLE_MARKS)


class LeanCommands(AbstractConnection):
    """A connection that packs commands in C and writes them without starting a task.

    redis-py's asyncio connections pack every command in Python (its blocking client uses hiredis for this), and
    write it under ``asyncio.wait_for``, which on Python 3.11 starts a task for every command. A command's write
    needs no time limit of its own here: every command is smaller than the transport's buffer, so the write only
    queues bytes, and the read that follows keeps redis-py's socket timeout, which also ends the connection. (The
    pool connects a connection before it lends it, so a new connection's handshake keeps the time limit too.)
    """

    _packer = HiredisRespSerializer()

    def pack_command(self, *args: Any) -> list[bytes]:
        packed: list[bytes] = self._packer.pack(*args)
        return packed

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        timeout, self.socket_timeout = self.socket_timeout, None
        try:
            await super().send_packed_command(command, check_health)
        finally:
            self.socket_timeout = timeout


def connect(settings: RedisSettings) -> RedisClient:
    """A client for ``settings.url``; it reconnects by itself after Redis comes back, and through Sentinel
    (``redis+sentinel://``) to whichever node is the master then. A cluster client keeps redis-py's own connections
    (it builds them itself)."""
    url, options = _target(settings)
    if settings.cluster:
        return RedisCluster.from_url(url, **options)
    if is_sentinel(url):
        target = parse_sentinel(url)
        base: type[AbstractConnection] = SentinelManagedSSLConnection if target.tls else SentinelManagedConnection
        master: ServiceRedis = _sentinel(target, settings).master_for(
            target.service_name,
            redis_class=ServiceRedis,
            connection_class=type(f"Lean{base.__name__}", (LeanCommands, base), {}),
            **{**target.master, **options},
        )
        return master
    pool = ConnectionPool.from_url(url, **options)
    base = pool.connection_class
    pool.connection_class = type(f"Lean{base.__name__}", (LeanCommands, base), {})
    return ServiceRedis.from_pool(pool)


def subscriber(settings: RedisSettings) -> Redis:
    """A plain client for the process's pub/sub connection (``infra/notices.py``): no read timeout (a subscriber
    waits for messages), a health check every 30 s; through Sentinel, to the master."""
    url, options = _target(settings)
    options = {**options, "health_check_interval": 30}
    del options["socket_timeout"]
    if is_sentinel(url):
        target = parse_sentinel(url)
        client: Redis = _sentinel(target, settings).master_for(
            target.service_name, redis_class=SentinelsOwner, **{**target.master, **options}
        )
        return client
    return Redis.from_url(url, **options)


def _target(settings: RedisSettings) -> tuple[str, dict[str, Any]]:
    """The URL and the connection options every client of ``settings`` is made with: the timeouts, and the TLS
    files and checks of the settings (``PYRAMIDE_REDIS_SSL_*``) that are set."""
    if settings.url is None:
        raise ValueError("no Redis URL: set REDIS_URL or let `pyramide serve` start the embedded Redis")
    timeout = settings.timeout_s
    options: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
    options.update(settings.tls_options())
    return settings.url, options


def _sentinel(target: SentinelUrl, settings: RedisSettings) -> Sentinel:
    """The Sentinels of ``target``, asked with the command timeout (a Sentinel that does not answer in time is
    passed over for the next) and, with ``rediss+sentinel://``, the master's TLS options."""
    timeout = settings.timeout_s
    options = {**target.sentinel, "socket_timeout": timeout, "socket_connect_timeout": timeout}
    if target.tls:
        options.update(settings.tls_options())
    return Sentinel(list(target.sentinels), sentinel_kwargs=options)  # type: ignore[no-untyped-call]


class SentinelsOwner(Redis):
    """redis-py's client that, closed, also closes the connections to the Sentinels its pool asked (redis-py's
    ``master_for`` leaves them to the caller)."""

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await super().aclose(close_connection_pool)
        sentinels = getattr(self.connection_pool, "sentinel_manager", None)
        if isinstance(sentinels, Sentinel):
            await sentinels.aclose()


class ServiceRedis(SentinelsOwner):
    """redis-py's client, its script calls sent over one pipelined connection of their own
    (:mod:`pyramide.service.infra.pipelined`): every move is one script call. Within :data:`RELIEF` (a moderator's
    or an erasure's request), a command or script refused for lack of memory frees the reserve and is sent again
    once: a refused command wrote nothing, and Redis refuses a script only at its first write."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._scripts = PipelinedScripts(self.connection_pool)

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        except ResponseError as error:
            await _relieve(error)
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]

    async def evalsha(self, sha: str, numkeys: int, *keys_and_args: Any) -> Any:
        try:
            return await self._scripts.evalsha(sha, numkeys, *keys_and_args)
        except ResponseError as error:
            await _relieve(error)
            return await self._scripts.evalsha(sha, numkeys, *keys_and_args)

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await self._scripts.aclose()
        await super().aclose(close_connection_pool)
