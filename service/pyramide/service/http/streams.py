"""Live streams (Server-Sent Events): a resource's current state, then each new one, as ``text/event-stream``.

Each event is ``id:`` (a number that only grows: a game's version, a board's change counter), ``event:`` and
``data:`` (the JSON body the matching GET returns). States supersede each other, so a stream resumed with
``Last-Event-ID`` older than the current id gets the current state at once and misses nothing; with the current id
it gets nothing until the next change. A ``: ping`` comment every ``stream_heartbeat_s`` keeps proxies from closing
an idle stream; the stream's leases in the caps (:mod:`infra.stream_leases`) are renewed on a timer of the same
period while it is open, not after a write: a client that reads nothing blocks the stream's writes, yet still counts
in the caps until the server's write deadline (``write_timeout_s``, :mod:`http.server`) closes its connection and the
stream gives its leases back. A stream ends after
``stream_max_s`` (the client reconnects with ``Last-Event-ID``); with ``retry:`` and its last id at once when the
server shuts down (:func:`shutting_down`, called by the HTTP protocol when uvicorn asks its connections to close, at
the end of a drain: :mod:`http.drain`), so a graceful shutdown never waits for open streams and their clients resume
on another replica, and when newer streams leave no room for it in the process's budget (:mod:`http.stream_budget`).
Its connection closes when it ends (``Connection: close``), so a stream's connection never lingers idle. Change
notices come through :class:`infra.notices.Notices`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal
from uuid import UUID

import anyio
from litestar import Request
from litestar.openapi import ResponseSpec
from litestar.openapi.spec import Example
from litestar.response import Stream
from litestar.serialization import encode_json, get_serializer
from pydantic import BaseModel, Field

from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.headers import client_address
from pyramide.service.http.stream_budget import StreamBudget, end_with_retry
from pyramide.service.infra import keyspace
from pyramide.service.infra.notices import Follower, Notices
from pyramide.service.infra.settings import Proxies, Streams
from pyramide.service.infra.stream_leases import Cap, StreamLeases
from pyramide.service.infra.tasks import TaskRegistry

log = logging.getLogger("pyramide.streams")
EVENT_STREAM: Final = "text/event-stream"
PING: Final = b": ping\n\n"
_STOPPING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Event] = weakref.WeakKeyDictionary()
"""Per event loop (one per server, in a test's threads too): set when that server shuts down."""


def _stopping() -> asyncio.Event:
    """The running server's "shutting down" flag."""
    loop = asyncio.get_running_loop()
    event = _STOPPING.get(loop)
    if event is None:
        event = _STOPPING[loop] = asyncio.Event()
    return event


def shutting_down() -> None:
    """Ends every open stream of the server running in this event loop (it is shutting down)."""
    _stopping().set()


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """One state of a stream: its id, its event name and its JSON body."""

    id: int
    event: str
    data: bytes

    def encode(self) -> bytes:
        return b"id: %d\nevent: %s\ndata: %s\n\n" % (self.id, self.event.encode(), self.data)


Load = Callable[[], Awaitable[StreamEvent]]
Holds = Callable[[], Awaitable[bool]]
"""Whether the credentials that opened a stream still hold (a token not rotated, a session not ended, a player not
erased): asked before each state and at each heartbeat; the stream ends when they do not."""

_FORMAT: Final = (
    "Server-Sent Events (`text/event-stream`, UTF-8). Each event: `id: <n>` (a number that only grows),"
    " `event: {event}`, `data: <JSON>` ({data}), then a blank line. The current state comes first, then each"
    " new one. With `Last-Event-ID` (the last id received), a state is sent only when its id differs: an older"
    " id gets the current state at once, the current id nothing until the next change. States supersede each"
    " other, so a resumed stream misses nothing. A `: ping` comment every `PYRAMIDE_STREAM_HEARTBEAT_S` (15 s);"
    " the stream ends after `PYRAMIDE_STREAM_MAX_S` (3600 s): reconnect with `Last-Event-ID`. One ended by the"
    " server stopping (at the end of its drain) or to make room for newer streams (`PYRAMIDE_MAX_STREAMS`) ends with"
    " `retry: <ms>` and `id: <the last id>`: reconnect after that many ms."
)


class SnapshotEvent(BaseModel):
    """One event of a game's live stream (its fields as the event stream's lines carry them)."""

    id: str = Field(pattern=r"^[0-9]+$", description="The game's version.")
    event: Literal["snapshot"]
    data: str = Field(
        description="The game's snapshot (`Snapshot`), as `getGame` answers it, on one line.",
        json_schema_extra={"contentMediaType": "application/json"},
    )


class BoardEvent(BaseModel):
    """One event of a board's live stream (its fields as the event stream's lines carry them)."""

    id: str = Field(pattern=r"^[0-9]+$", description="The board's change counter.")
    event: Literal["board"]
    data: str = Field(
        description="The board's first page, as its GET answers it without a query, on one line.",
        json_schema_extra={"contentMediaType": "application/json"},
    )


def stream_response(event: type[BaseModel], data: str, example: dict[str, str]) -> dict[int, ResponseSpec]:
    """The 200 of a stream route: an event stream whose events are ``event`` carrying ``data``."""
    name = event.model_json_schema()["properties"]["event"]["const"]
    return {
        200: ResponseSpec(
            data_container=event,
            media_type=EVENT_STREAM,
            description=_FORMAT.format(event=name, data=data),
            generate_examples=False,
            examples=[Example(summary="the first event (as its lines carry it)", value=example)],
        )
    }


def encoded(request: Request[Any, Any, Any], content: Any) -> bytes:
    """``content`` as the route's GET would encode it (the same serializer)."""
    return encode_json(content, get_serializer(request.route_handler.resolve_type_encoders()))


def last_event_id(request: Request[Any, Any, Any]) -> int | None:
    """The ``Last-Event-ID`` the client resumes from; one that is not a whole number is as none (the client gets
    the current state, which is never wrong)."""
    text = request.headers.get("last-event-id", "").strip()
    return int(text) if text.isdigit() and len(text) < 19 else None


class LiveStreams:
    """Opens the process's live streams: caps, the first state, then each new one (see the module)."""

    def __init__(
        self,
        notices: Notices,
        leases: StreamLeases,
        settings: Streams,
        proxies: Proxies,
        tasks: TaskRegistry,
        *,
        budget: StreamBudget,
    ) -> None:
        self.notices = notices
        self.budget = budget
        self.tasks = tasks
        self.leases = leases
        self.settings = settings
        self.proxies = proxies
        self.heartbeat_s = settings.heartbeat_s
        self.max_s = settings.max_s

    def caps(self, request: Request[Any, Any, Any], player: UUID | None) -> list[Cap]:
        """What a stream counts against: its client's address (for an app's request naming its user's address,
        the app's bucket of it: ``accounts.authentication``), and for a game's stream its player."""
        address = client_address(request, self.proxies.header, self.proxies.networks)
        caps = [Cap(keyspace.address_streams(address), self.settings.per_address)]
        if player is not None:
            caps.append(Cap(keyspace.player_streams(player), self.settings.per_player))
        return caps

    async def open(
        self,
        request: Request[Any, Any, Any],
        channel: str,
        topic: Hashable,
        load: Load,
        *,
        player: UUID | None = None,
        holds: Holds | None = None,
    ) -> Stream:
        """The stream of ``topic``'s states, read by ``load`` (which raises the GET's errors: they answer before the
        stream starts), counted against the caps (:meth:`caps`): 429 ``too_many_streams`` past one of them."""
        caps = self.caps(request, player)
        stream = self.leases.new_stream()
        if not await self.leases.take(stream, caps):
            wait = math.ceil(self.heartbeat_s)
            raise DomainError(ErrorCode.TOO_MANY_STREAMS, retry_after_s=wait, seconds=str(wait))
        try:
            await load()
        except BaseException:
            await self.leases.give_back(stream, caps)
            raise
        events = self._events(stream, caps, channel, topic, load, last=last_event_id(request), holds=holds)
        headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no", "Connection": "close"}
        return Stream(events, media_type=EVENT_STREAM, headers=headers)

    async def _events(
        self,
        stream: str,
        caps: Sequence[Cap],
        channel: str,
        topic: Hashable,
        load: Load,
        *,
        last: int | None,
        holds: Holds | None,
    ) -> AsyncIterator[bytes]:
        ended = self.budget.enter(stream)
        renewing = self.tasks.spawn("stream lease renewal", self._renew(stream, caps), lasting=True)
        try:
            async with self.notices.follow(channel, topic, load) as follower:
                follower.offer(await load())  # read after subscribing: no change falls between the two
                async for chunk in self._follow(follower, last, ended):
                    if holds is not None and not await holds():
                        return  # the stream's credentials no longer hold: it ends before sending anything more
                    yield chunk
        finally:
            self.budget.leave(stream)
            renewing.cancel()
            with anyio.CancelScope(shield=True):
                await asyncio.gather(renewing, return_exceptions=True)  # no renewal lands after the give-back
                await self.leases.give_back(stream, caps)

    async def _renew(self, stream: str, caps: Sequence[Cap]) -> None:
        """Renews the stream's leases every heartbeat while it is open, whether or not its writes progress (a write
        waits while the client reads nothing; the server's write deadline ends that). Never past the stream's
        maximum duration, so a stream whose end were never run could not hold a lease for ever."""
        loop = asyncio.get_running_loop()
        ends = loop.time() + self.max_s
        while loop.time() < ends:
            await asyncio.sleep(self.heartbeat_s)
            try:
                await self.leases.renew(stream, caps)
            except Exception as error:  # Redis out of reach for a moment: the next beat tries again
                self.leases.renewals.failed(error)  # logged once an outage, not once a stream and a beat
            else:
                self.leases.renewals.succeeded()

    async def _follow(self, follower: Follower, last: int | None, ended: asyncio.Event) -> AsyncIterator[bytes]:
        """Each state not sent yet, a ping each heartbeat, until the maximum duration; or, at the server's shutdown or
        ``ended`` by a newer stream past the budget, until ``retry:`` and the last id."""
        loop = asyncio.get_running_loop()
        ends = loop.time() + self.max_s
        # the request's own waits (the server stopping, a newer stream ending this one, the follower's next state),
        # cancelled when it ends: not background work, so not the task registry's
        stop = loop.create_task(_stopping().wait())
        evicted = loop.create_task(ended.wait())
        take = loop.create_task(follower.take())
        try:
            while not (stop.done() or evicted.done()):
                beat = loop.time() + self.heartbeat_s
                while not (stop.done() or evicted.done()) and loop.time() < min(beat, ends):
                    await asyncio.wait(
                        {stop, evicted, take}, timeout=min(beat, ends) - loop.time(), return_when="FIRST_COMPLETED"
                    )
                    if take.done():
                        state = take.result()
                        assert isinstance(state, StreamEvent)
                        take = loop.create_task(follower.take())
                        if state.id != last:
                            last = state.id
                            yield state.encode()
                if evicted.done() or stop.done():
                    yield end_with_retry(last)
                    return
                if loop.time() >= ends:
                    return
                yield PING
        finally:
            for task in (stop, evicted, take):
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(stop, evicted, take, return_exceptions=True)
