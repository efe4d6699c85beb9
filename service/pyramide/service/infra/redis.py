"""The Redis client: redis-py's asyncio client, with two costs of its connections taken off every command."""

from __future__ import annotations

from typing import Any

from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import AbstractConnection
from redis.connection import HiredisRespSerializer

from pyramide.service.infra.settings import Settings


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


def connect(settings: Settings) -> Redis | RedisCluster:
    """A client for ``settings.redis_url``; it reconnects by itself after Redis comes back. A cluster client keeps
    redis-py's own connections (it builds them itself)."""
    if settings.redis_url is None:
        raise ValueError("no Redis URL: set REDIS_URL or let `pyramide serve` start the embedded Redis")
    url, timeout = settings.redis_url, settings.redis_timeout_s
    if settings.redis_cluster:
        return RedisCluster.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    pool = ConnectionPool.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    base = pool.connection_class
    pool.connection_class = type(f"Lean{base.__name__}", (LeanCommands, base), {})
    return Redis.from_pool(pool)
