"""The Redis client: redis-py's asyncio client, with two costs of its connections taken off every command and its
script calls pipelined over a connection of their own.

:class:`LeanCommands` replaces and changes methods whose inside it relies on: redis is pinned in pyproject.toml;
tests/unit/service/test_pinned_internals.py fails when that upstream code changes."""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.connection import HiredisRespSerializer
from redis.exceptions import OutOfMemoryError, ResponseError

from pyramide.service.infra.pipelined import PipelinedScripts

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
    def zadd(self, name: str, mapping: Mapping[str, int], /) -> Awaitable[int | float | None]: ...
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
    """A client for ``settings.url``; it reconnects by itself after Redis comes back. A cluster client keeps
    redis-py's own connections (it builds them itself)."""
    if settings.url is None:
        raise ValueError("no Redis URL: set REDIS_URL or let `pyramide serve` start the embedded Redis")
    url, timeout = settings.url, settings.timeout_s
    if settings.cluster:
        return RedisCluster.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    pool = ConnectionPool.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    base = pool.connection_class
    pool.connection_class = type(f"Lean{base.__name__}", (LeanCommands, base), {})
    return ServiceRedis.from_pool(pool)


class ServiceRedis(Redis):
    """redis-py's client, its script calls sent over one pipelined connection of their own
    (:mod:`pyramide.service.infra.pipelined`): every move is one script call."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._scripts = PipelinedScripts(self.connection_pool)

    async def evalsha(self, sha: str, numkeys: int, *keys_and_args: Any) -> Any:
        return await self._scripts.evalsha(sha, numkeys, *keys_and_args)

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await self._scripts.aclose()
        await super().aclose(close_connection_pool)
