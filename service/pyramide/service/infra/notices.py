"""Change notices for the live streams: one Redis pub/sub connection per process, fanned out in memory.

The scripts that save a change PUBLISH on a channel named after what changed (a game's state key, a board's ranked
key); every worker and replica that has a stream open on it hears it. A process holds ONE subscriber connection
whatever the number of its open streams: :class:`Notices` subscribes to a channel while at least one local stream
follows it, and on a notice runs each topic's loader ONCE (the new state, read once per process and per topic) and
hands the result to every local follower of that topic. States supersede each other, so a follower keeps only the
newest one it has not sent yet: a slow client never makes the process queue states for it.

Redis Cluster: a classic PUBLISH reaches every node's subscribers, so the one connection goes to the node the URL
names; through Sentinel, to the master, found again on each reconnection (after a failover, the new one). After the
connection drops, redis-py reconnects and subscribes again; every topic is then read afresh, since a notice may have
been missed meanwhile. A connection can also die silently (a NAT, a firewall or a proxy on the way
forgets it, or stops forwarding it, without closing it): TCP notices only after minutes, and redis-py's health check
only sends a PING, it never waits for the answer. So the listener PINGs the connection every ``ping_s`` itself and,
when no PONG has come back ``ping_s`` later, drops it and makes it afresh, as after a lost connection.

A channel can also be watched (:meth:`Notices.watch`): its messages go, as they are read and before the listener reads
anything else, to a function of the watcher's (the app keys' cache, ``accounts.app_cache``), which is told too when the
connection is lost (messages may be missed until it is back). :meth:`Notices.fresh` says whether the connection has
answered the listener's own PING lately: what a cache that must hear every change checks before it answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from pyramide.service.infra.outage import OutageLog
from pyramide.service.infra.tasks import TaskRegistry

log = logging.getLogger("pyramide.streams")
RETRY_S: Final = 1.0
"""How long the listener waits before it tries again after losing Redis."""
PING_MESSAGE: Final = b"pyramide-notices"
"""What the listener's own PING carries, so its PONG is told from any other."""

Load = Callable[[], Awaitable[object]]
"""Reads a topic's current state (anything its streams send)."""
Heard = Callable[[bytes | None], None]
"""A watcher's function: a message's data, or ``None`` when the connection was lost (messages may have been missed)."""


@dataclass(eq=False, slots=True)
class Follower:
    """One local stream's slot: the newest state it has not taken yet, and a flag that says one is there."""

    ready: asyncio.Event = field(default_factory=asyncio.Event)
    state: object = None

    def offer(self, state: object) -> None:
        self.state = state
        self.ready.set()

    async def take(self) -> object:
        """The newest state offered since the last take (waits for one)."""
        await self.ready.wait()
        self.ready.clear()
        return self.state


@dataclass(eq=False, slots=True)
class _Topic:
    load: Load
    followers: set[Follower] = field(default_factory=set)


class SilentConnectionError(ConnectionError):
    """The pub/sub connection did not answer a PING in time: taken for dead."""


class Notices:
    """The process's one pub/sub connection and its local topics (see the module)."""

    def __init__(self, redis: Redis, tasks: TaskRegistry, ping_s: float = 5.0) -> None:
        """``redis``: a client of its own (``infra.redis.subscriber``), closed with this."""
        self.tasks = tasks
        self._redis = redis
        self._pubsub: PubSub = self._redis.pubsub(ignore_subscribe_messages=True)
        self._topics: dict[str, dict[Hashable, _Topic]] = {}
        self._watched: dict[str, Heard] = {}
        self._answered_at: float | None = None
        """When the listener's own PING was last answered (the event loop's clock); ``None`` after a failure."""
        self._listener: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._ping_s = ping_s
        self._pinged_at: float | None = None
        """When the listener's PING still unanswered was sent (the event loop's clock)."""
        self._next_ping = 0.0
        self._outage = OutageLog("Redis, the live streams' notices (reconnecting),", log, tasks.clock)

    @contextlib.asynccontextmanager
    async def follow(self, channel: str, topic: Hashable, load: Load) -> AsyncIterator[Follower]:
        """A follower of ``topic`` (its state read by ``load``) on ``channel``, subscribed while the block runs."""
        follower = Follower()
        async with self._lock:
            topics = self._topics.get(channel)
            if topics is None:
                await self._pubsub.subscribe(channel)  # first: a failed subscription is not taken for one
                topics = self._topics[channel] = {}
            topics.setdefault(topic, _Topic(load)).followers.add(follower)
            if self._listener is None:
                self._listener = self.tasks.spawn("stream notices", self._listen(), lasting=True)
        try:
            yield follower
        finally:
            with anyio.CancelScope(shield=True):  # a stream ends by cancellation when its client goes
                await self._leave(channel, topic, follower)

    async def watch(self, channel: str, heard: Heard) -> None:
        """From now on, ``heard(data)`` for each message on ``channel``, called by the listener as it reads the
        message (before it reads or does anything else), and ``heard(None)`` at once when the connection is lost."""
        async with self._lock:
            if channel not in self._watched:
                await self._pubsub.subscribe(channel)
                self._watched[channel] = heard
            if self._listener is None:
                self._listener = self.tasks.spawn("stream notices", self._listen(), lasting=True)

    def fresh(self) -> bool:
        """Whether the connection answered the listener's own PING within the last two ``ping_s`` and has not
        failed since: then every watched channel's messages published up to the PING have been heard."""
        answered = self._answered_at
        return answered is not None and asyncio.get_running_loop().time() - answered < 2 * self._ping_s

    async def _leave(self, channel: str, topic: Hashable, follower: Follower) -> None:
        async with self._lock:
            topics = self._topics.get(channel, {})
            held = topics.get(topic)
            if held is not None:
                held.followers.discard(follower)
                if not held.followers:
                    del topics[topic]
            if not topics and channel in self._topics:
                del self._topics[channel]
                with contextlib.suppress(Exception):  # a lost connection forgets its channels anyway
                    await self._pubsub.unsubscribe(channel)

    async def _listen(self) -> None:
        """Reads notices for ever; each notice's topics are read once and offered to their followers."""
        while True:
            try:
                message = await self._next_message()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # Redis gone: try again, then read every topic afresh
                self._lost()
                self._outage.failed(error)  # logged once an outage, not once a reconnection
                await self._reconnect(silent=isinstance(error, SilentConnectionError))
                await self._refresh(list(self._topics))
                continue
            self._outage.succeeded()
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"]
            name = channel.decode() if isinstance(channel, bytes) else str(channel)
            heard = self._watched.get(name)
            if heard is not None:
                data = message.get("data")
                heard(data if isinstance(data, bytes) else str(data).encode())
                continue
            await self._refresh([name])

    def _lost(self) -> None:
        """The connection failed: not fresh until it answers a PING again, and every watcher told at once."""
        self._answered_at = None
        for heard in self._watched.values():
            heard(None)

    async def _next_message(self) -> dict[str, object] | None:
        """The next message (None for none within a second, or for the listener's own PONG), after a PING when one
        is due; :class:`SilentConnectionError` when the last one went unanswered for ``ping_s``."""
        now = asyncio.get_running_loop().time()
        if self._pinged_at is not None and now - self._pinged_at > self._ping_s:
            raise SilentConnectionError(f"no PONG within {self._ping_s} s")
        if self._pinged_at is None and now >= self._next_ping and (self._topics or self._watched):
            await self._pubsub.ping(PING_MESSAGE)
            self._pinged_at = now
        message: dict[str, object] | None = await self._pubsub.get_message(timeout=min(1.0, self._ping_s / 2))
        if message is not None and message.get("type") == "pong" and message.get("data") == PING_MESSAGE:
            self._answered_at = self._pinged_at
            self._pinged_at = None
            self._next_ping = now + self._ping_s
            return None
        if message is not None and self._pinged_at is not None:  # the link carries messages: its PONG is behind them
            self._pinged_at = asyncio.get_running_loop().time()
        return message

    async def _reconnect(self, *, silent: bool) -> None:
        """After a lost (or, ``silent``, an unanswering) connection: drop it, wait, connect and subscribe again,
        so that the topics read afresh next miss no notice. A Redis still gone is left to the next read."""
        self._pinged_at = None
        self._next_ping = 0.0
        connection: Any = self._pubsub.connection  # typed as never set by redis-py
        if silent and connection is not None:
            with contextlib.suppress(Exception):
                await connection.disconnect(nowait=True)  # its socket may never answer again: not waited for
        await asyncio.sleep(0 if silent else RETRY_S)
        with contextlib.suppress(Exception):  # redis-py subscribes again on connecting
            await self._pubsub.connect()  # type: ignore[no-untyped-call]

    async def _refresh(self, channels: list[str]) -> None:
        for channel in channels:
            for topic in list(self._topics.get(channel, {}).values()):
                try:
                    state = await topic.load()
                except Exception:  # a failed read must not end the other streams
                    log.exception("a live stream's state could not be read")
                    continue
                for follower in topic.followers:
                    follower.offer(state)

    def open_streams(self) -> int:
        """How many local streams follow a topic (for tests and metrics)."""
        return sum(len(t.followers) for topics in self._topics.values() for t in topics.values())

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(BaseException):
                await self._listener
            self._listener = None
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()  # type: ignore[no-untyped-call]
        with contextlib.suppress(Exception):
            await self._redis.aclose()
