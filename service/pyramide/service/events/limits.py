"""Bounds that keep one app's webhook endpoints from holding the others' deliveries (``delivery.Deliverer``).

``KeyedLimit``: at most N holders per key (an app) at once, so a slow app takes a few of a process's delivery slots,
not all of them. ``Lookups``: the deliveries' host lookups, in a few threads of their own rather than
the event loop's default executor (a name server that never answers holds a lookup's thread for its resolver's whole
timeout, which no ``asyncio.timeout`` ends), one lookup per host at once, shared by every delivery waiting for it, and
at most a few threads per app.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import AsyncIterator
from typing import Any

AddressInfo = list[tuple[Any, ...]]
"""What ``socket.getaddrinfo`` answers."""


class KeyedLimit:
    """At most ``limit`` holders per key at once; a key's semaphore is kept only while it is held or waited for."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._slots: dict[str, tuple[asyncio.Semaphore, int]] = {}

    def full(self, key: str) -> bool:
        """Whether ``key`` has every slot held (or waited for)."""
        return self._slots.get(key, (None, 0))[1] >= self.limit

    async def acquire(self, key: str) -> None:
        """Waits for a slot of ``key`` (cancellable: then it holds none)."""
        semaphore, users = self._slots.get(key) or (asyncio.Semaphore(self.limit), 0)
        self._slots[key] = (semaphore, users + 1)
        try:
            await semaphore.acquire()
        except BaseException:
            self._leave(key)
            raise

    def release(self, key: str) -> None:
        self._slots[key][0].release()
        self._leave(key)

    def _leave(self, key: str) -> None:
        semaphore, users = self._slots[key]
        if users <= 1:
            del self._slots[key]
        else:
            self._slots[key] = (semaphore, users - 1)

    @contextlib.asynccontextmanager
    async def held(self, key: str) -> AsyncIterator[None]:
        await self.acquire(key)
        try:
            yield
        finally:
            self.release(key)


class Lookups:
    """Host lookups in at most ``threads`` threads, at most ``per_owner`` of them for one owner (an app); a lookup of
    a host still running is shared, not started again. The threads are daemons: one stuck on a silent name server
    holds neither a waiting delivery (each waits within its own timeout) nor the process's exit (a
    ``ThreadPoolExecutor``'s threads are joined when the interpreter ends)."""

    def __init__(self, threads: int, per_owner: int) -> None:
        self._threads = asyncio.Semaphore(threads)
        self._owners = KeyedLimit(per_owner)
        self._pending: dict[tuple[str, int], asyncio.Future[AddressInfo]] = {}

    async def lookup(self, owner: str, host: str, port: int) -> AddressInfo:
        """The addresses of ``host``, as ``getaddrinfo`` answers them for a TCP connection to ``port``."""
        key = (host, port)
        pending = self._pending.get(key) or await self._start(owner, key)
        return await asyncio.shield(pending)

    async def _start(self, owner: str, key: tuple[str, int]) -> asyncio.Future[AddressInfo]:
        """A new lookup of ``key`` in a thread of its own, once ``owner`` and the pool have a thread free (or the
        lookup another delivery started meanwhile)."""
        await self._owners.acquire(owner)
        try:
            await self._threads.acquire()
        except BaseException:
            self._owners.release(owner)
            raise
        pending = self._pending.get(key)
        if pending is not None:
            self._threads.release()
            self._owners.release(owner)
            return pending
        loop = asyncio.get_running_loop()
        started: asyncio.Future[AddressInfo] = loop.create_future()
        self._pending[key] = started

        def ended(_: asyncio.Future[AddressInfo]) -> None:
            if self._pending.get(key) is started:
                del self._pending[key]
            self._threads.release()
            self._owners.release(owner)
            if not started.cancelled():
                started.exception()  # noted as read: every waiter may have left

        started.add_done_callback(ended)
        threading.Thread(target=_look_up, args=(loop, started, *key), name="webhook-lookup", daemon=True).start()
        return started


def _look_up(loop: asyncio.AbstractEventLoop, into: asyncio.Future[AddressInfo], host: str, port: int) -> None:
    """Runs in its own thread: resolves ``host`` and hands the answer (or the error) to ``into`` on ``loop``."""
    try:
        found: AddressInfo = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as error:
        _hand(loop, into, None, error)
    else:
        _hand(loop, into, found, None)


def _hand(
    loop: asyncio.AbstractEventLoop,
    into: asyncio.Future[AddressInfo],
    found: AddressInfo | None,
    error: BaseException | None,
) -> None:
    def settle() -> None:
        if into.done():
            return
        if error is not None:
            into.set_exception(error)
        else:
            into.set_result(found or [])

    with contextlib.suppress(RuntimeError):  # the loop closed while the lookup ran
        loop.call_soon_threadsafe(settle)
