"""Script calls over one pipelined connection: the one hand-written hot path of the service's Redis traffic.

Every move is one script call (its save). redis-py's client spends more Python on each command than the move's
other Redis work together: a locked pool lends a connection and checks it can be read, a retry wrapper, a timeout
context and observability hooks wrap the call, and the connection is locked and released again. Here the script calls
of a process share one connection instead: each call writes its command and waits for its reply, and one reader
task hands the replies to the callers in the order they wrote (Redis answers a connection's commands in order).
``benchmarks/service_instructions.py`` measures what this saves per move; ``docs/benchmarks.md`` keeps the figure.

The connection is made by redis-py from the client's own pool settings (address, TLS, user, password, database,
timeouts), and replies are parsed by hiredis with redis-py's error classes, so callers see exactly the exceptions
redis-py raises: :class:`NoScriptError`, :class:`OutOfMemoryError` and other :class:`ResponseError` for a refused
script, :class:`ConnectionError` when the connection is lost, :class:`TimeoutError` past the socket timeout. A reply
late past the timeout leaves the connection out of step with its callers, so it is closed: every call waiting on it
fails, and the next call connects again. Through Sentinel (``redis+sentinel://``) the pool's connections are redis-py's
``SentinelManagedConnection``: connecting asks a Sentinel for the master's address, so after a failover the next
connection reaches the new master; a ``READONLY`` refusal closes the connection as theirs does.

The connection's streams, the reply parser's settings and ``parse_error`` are redis-py's private code: redis is
pinned in pyproject.toml; tests/unit/service/test_pinned_internals.py fails when that upstream code changes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio import ConnectionPool
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

READ_SIZE = 65536
READ_ONLY = "READONLY You can't write against a read only"
"""How a replica refuses a write (inside a script, Redis 6.2 quotes it in an ``ERR``): the node this connection
reached is no master any more (a failover demoted it). As redis-py's Sentinel connections do, the connection is
closed and the call fails with a :class:`ConnectionError` (a 503), so that the next call connects afresh, through
Sentinel to the new master."""


class _Link:
    """One connected connection of one event loop, its callers waiting in order (each with the timer that fails it
    past the socket timeout), and the task reading their replies."""

    def __init__(self, connection: AbstractConnection, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.writer: asyncio.StreamWriter = connection._writer  # type: ignore[assignment]
        self.reader: asyncio.StreamReader = connection._reader  # type: ignore[assignment]
        self.timeout: float | None = connection.socket_timeout
        self.waiting: deque[tuple[asyncio.Future[Any], asyncio.TimerHandle | None]] = deque()
        self.parser = hiredis.Reader(protocolError=InvalidResponse, replyError=BaseParser.parse_error)
        self.closed = False
        self.connection = connection  # kept: redis-py closes a connection it collects
        self.task = loop.create_task(self._read())

    def call(self, packed: bytes) -> asyncio.Future[Any]:
        """Write one command; the future gets its reply (or its error)."""
        self.writer.write(packed)  # first: a write that raised must leave no caller waiting for its reply
        future: asyncio.Future[Any] = self.loop.create_future()
        timer = None if self.timeout is None else self.loop.call_later(self.timeout, self._expire, future)
        self.waiting.append((future, timer))
        return future

    async def _read(self) -> None:
        try:
            while True:
                data = await self.reader.read(READ_SIZE)
                if not data:
                    raise RedisConnectionError("Connection closed by server.")
                self.parser.feed(data)
                self._hand_out()
        except asyncio.CancelledError:
            self.close(RedisConnectionError("Connection closed."))
            raise
        except Exception as error:  # every waiting caller learns why the connection ended
            self.close(error if isinstance(error, RedisConnectionError) else RedisConnectionError(str(error)))

    def _hand_out(self) -> None:
        """Each complete reply to the caller that has waited longest (a cancelled caller's reply is dropped)."""
        while True:
            reply = self.parser.gets()
            if reply is False:
                return
            if not self.waiting:
                raise InvalidResponse("a reply nobody waits for")
            future, timer = self.waiting.popleft()
            if timer is not None:
                timer.cancel()
            if future.done():
                continue
            if isinstance(reply, ResponseError) and READ_ONLY in str(reply):
                future.set_exception(RedisConnectionError("The previous master is now a replica."))
                self.close(RedisConnectionError("Connection closed: the node is a replica now."))
                return
            if isinstance(reply, ResponseError):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    def _expire(self, future: asyncio.Future[Any]) -> None:
        if not future.done():
            future.set_exception(RedisTimeoutError("Timeout reading from Redis"))
            self.close(RedisConnectionError("Connection closed: a reply came late."))

    def close(self, error: Exception) -> None:
        """Close the connection; every caller still waiting gets ``error``."""
        if self.closed:
            return
        self.closed = True
        while self.waiting:
            future, timer = self.waiting.popleft()
            if timer is not None:
                timer.cancel()
            if not future.done():
                future.set_exception(error)
        self.writer.close()
        if self.task is not asyncio.current_task():
            self.task.cancel()


class PipelinedScripts:
    """``EVALSHA`` for one process, over one connection of its own made from ``pool``'s settings (one per event
    loop: a client used from a new loop connects again)."""

    def __init__(self, pool: ConnectionPool) -> None:
        self._pool = pool
        self._link: _Link | None = None
        self._connecting: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    async def evalsha(self, *args: Any) -> Any:
        """The reply to ``EVALSHA sha numkeys key... arg...``."""
        loop = asyncio.get_running_loop()
        link = self._link
        if link is None or link.closed or link.loop is not loop or link.writer.is_closing():
            link = await self._connect(loop)
        return await link.call(hiredis.pack_command(("EVALSHA", *args)))

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> _Link:
        if self._connecting is None or self._connecting[0] is not loop:
            self._connecting = (loop, asyncio.Lock())
        async with self._connecting[1]:
            link = self._link
            if link is None or link.closed or link.loop is not loop or link.writer.is_closing():
                if link is not None and link.loop is loop:
                    link.close(RedisConnectionError("Connection closed."))
                connection: AbstractConnection = self._pool.make_connection()  # type: ignore[no-untyped-call]
                await connection.connect()  # type: ignore[no-untyped-call]
                link = self._link = _Link(connection, loop)
            return link

    async def aclose(self) -> None:
        """Close the connection (waiting callers get a :class:`ConnectionError`)."""
        link, self._link = self._link, None
        self._connecting = None
        if link is not None and link.loop is asyncio.get_running_loop():
            link.close(RedisConnectionError("Connection closed."))
            await asyncio.gather(link.task, return_exceptions=True)
