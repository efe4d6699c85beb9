"""The HTTP server: uvicorn with its httptools protocol, guarded against slow, oversized and malformed requests.

uvicorn closes idle keep-alive connections but, left alone, it waits for ever on a client trickling a request's
headers or body, buffers headers of any size, answers malformed requests with a plain-text 400 of its own, and,
once the process runs out of file descriptors, stops accepting for a second at a time while the idle ones stay.
:class:`GuardedProtocol` answers every one of these as problem+json with an ``X-Request-ID`` (in Hungarian, unless
the request's headers were all read: its Accept-Language may never have come) and closes the connection (a request
refused before it was all read first has its side closed, and what still comes read and dropped for ``LINGER_S``,
so that a client still sending reads the answer instead of a reset: RFC 9112, section 9.6):

- request headers not complete ``header_timeout_s`` after they began (or after the connection opened): 408
  ``request_timeout``;
- a request body not complete ``body_timeout_s`` after its headers: 408 ``body_timeout``;
- request headers longer than ``max_header_bytes``: 431 ``headers_too_large`` (at most one read past the limit is
  ever buffered);
- anything the HTTP parser refuses (unknown method, control characters in a header, both Content-Length and
  Transfer-Encoding, ...): 400 ``bad_request``;
- response writes that make no progress for ``write_timeout_s`` (while the transport holds more than its high-water
  mark, not a byte of it is sent: a client that reads nothing, such as a live stream's stalled reader): the
  connection is reset, so the response's task ends (its stream gives its leases back) instead of waiting for ever
  in uvicorn's ``drain``; a slow client that still reads is left alone;
- past ``max_connections`` open connections (less if the file limit is lower), the connections whose requests are
  nearest their deadline are closed with 503 ``service_unavailable``, then idle keep-alive ones, so a new client is
  always accepted at once.

While the server drains (:mod:`http.drain`: after SIGTERM, before it stops), every answer says ``Connection: close``
and its connection is closed after it, so a load balancer's kept-alive connections are retired cleanly.

Both deadlines share one timer per request, armed when the request begins and cancelled when it is complete; it is
re-armed for the body only when a body is still coming after a read, so a request that arrives in one piece costs
what it did with the header deadline alone. The body's size is limited elsewhere (``body.read_body``: 413). The
limits themselves are ``connection_limits.HttpLimits``; the bytes of a refusal are written by ``refusals``.

It copies uvicorn's private ``HttpToolsProtocol.data_received`` and leans on its internals: uvicorn is pinned in
pyproject.toml; tests/unit/service/test_pinned_internals.py fails when that upstream code changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import socket
import struct
import termios
from dataclasses import replace
from typing import Any, ClassVar, Final

import httptools
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from pyramide.engine.messages import DEFAULT_LOCALE
from pyramide.service.http.connection_limits import HttpLimits, connection_bounds
from pyramide.service.http.drain import draining
from pyramide.service.http.locale import negotiate_locale
from pyramide.service.http.problems import HttpCode
from pyramide.service.http.refusals import problem_bytes
from pyramide.service.http.streams import shutting_down
from pyramide.service.infra.logs import request_id

log = logging.getLogger("pyramide.http")
LINGER_S: Final = 2.0
"""How long a connection refused mid-request is still read (and the bytes dropped) after its answer, so that a
client still sending reads the answer instead of a reset."""
_RESET_ON_CLOSE: Final = struct.pack("ii", 1, 0)
"""``SO_LINGER`` on, for 0 s: closing the socket resets the connection and drops what the kernel still holds."""
_INT: Final = struct.pack("i", 0)
"""Room for the C int ``ioctl(TIOCOUTQ)`` answers."""


class _RefusedError(Exception):
    """Raised inside a parser callback to stop the parser on a request that is refused."""

    def __init__(self, status: int, code: HttpCode) -> None:
        super().__init__(code)
        self.status, self.code = status, code


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with deadlines, a header size limit, a bound on open connections, and
    problem+json for everything it refuses itself."""

    limits: ClassVar[HttpLimits] = HttpLimits()
    """The defaults until :func:`use_limits` sets the settings' in a worker of ``pyramide serve --workers`` (uvicorn
    builds the class by name); :func:`protocol` makes one with limits of its own."""
    max_open: ClassVar[int] = connection_bounds(limits.max_connections)[0]
    max_head: ClassVar[int] = limits.max_header_bytes

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._body_armed = False  # the deadline running is the body's
        self._in_head = True  # a request's headers are (or the next one's will be) what comes next
        self._in_body = False
        self._head_bytes = 0
        self._lingering = False
        self._stalled: asyncio.TimerHandle | None = None  # armed while writing is paused
        self._unsent = 0  # the bytes still to send when it was armed (:meth:`_unsent_bytes`)
        super().connection_made(transport)
        self._arm(self.limits.header_timeout_s)
        if len(self.connections) > self.max_open:
            self._shed()

    def data_received(self, data: bytes) -> None:
        """uvicorn's, plus the header size limit, the body deadline, and problem+json for what the parser
        refuses."""
        if self._lingering:
            return
        if self._in_head:
            self._head_bytes += len(data)
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._no_upgrade()
            return
        except httptools.HttpParserError as error:
            refused = error.__context__ if isinstance(error.__context__, _RefusedError) else None
            if refused is not None:
                self._refuse(refused.status, refused.code, linger=True)
            else:
                self._refuse(400, HttpCode.BAD_REQUEST, linger=True)
            return
        if self._head_bytes > self.max_head and self._in_head:
            self._refuse(431, HttpCode.HEADERS_TOO_LARGE, linger=True)
        elif self._in_body and not self._body_armed:
            self._disarm()
            self._arm(self.limits.body_timeout_s)
            self._body_armed = True

    def _no_upgrade(self) -> None:
        """An upgrade the service does not speak (h2c, a WebSocket): the request is answered as a plain one, then
        the connection is closed, since the parser reads nothing after an upgrade request."""
        cycle = self.cycle
        if cycle is None or cycle.response_complete:
            self.transport.close()
        else:
            cycle.keep_alive = False

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self._deadline is None:
            self._arm(self.limits.header_timeout_s)

    def on_headers_complete(self) -> None:
        if self._head_bytes > self.max_head and self._head_size() > self.max_head:
            raise _RefusedError(431, HttpCode.HEADERS_TOO_LARGE)
        self._in_head = False
        self._in_body = True
        self._head_bytes = 0
        HttpToolsProtocol.on_headers_complete(self)
        if draining(self.loop) and self.cycle is not None:  # answered, then closed: a balancer's connection retired
            self.cycle.keep_alive = False

    def on_message_complete(self) -> None:
        """The request is complete: its deadline is over (inlined: this runs on every request)."""
        deadline = self._deadline
        if deadline is not None:
            deadline.cancel()
            self._deadline = None
            self._body_armed = False
        self._in_body = False
        self._in_head = True
        HttpToolsProtocol.on_message_complete(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._unstall()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        """The transport holds more than its high-water mark: the response's writes wait for the client to read.
        If they still wait ``write_timeout_s`` from now, the connection is reset (:meth:`_write_stalled`)."""
        super().pause_writing()
        if self._stalled is None:
            self._arm_stalled()

    def resume_writing(self) -> None:
        """The client read enough for the writes to go on: no deadline while they progress."""
        self._unstall()
        super().resume_writing()

    def _arm_stalled(self) -> None:
        self._unsent = self._unsent_bytes()
        self._stalled = self.loop.call_later(self.limits.write_timeout_s, self._write_stalled)

    def _unsent_bytes(self) -> int:
        """The bytes not yet taken by the client: the transport's buffer and the socket's send queue (``SIOCOUTQ``,
        sent but not acknowledged). The kernel's part counts: a slow reader drains it long before the kernel asks
        the transport for more (it waits for a good part of its buffer to be free)."""
        unsent = self.transport.get_write_buffer_size()
        connection = self.transport.get_extra_info("socket")
        if connection is not None:
            with contextlib.suppress(OSError):
                queued = fcntl.ioctl(connection.fileno(), termios.TIOCOUTQ, _INT)
                unsent += struct.unpack("i", queued)[0]
        return unsent

    def _unstall(self) -> None:
        if self._stalled is not None:
            self._stalled.cancel()
            self._stalled = None

    def _write_stalled(self) -> None:
        """Still paused ``write_timeout_s`` later: if some bytes went out meanwhile (a slow reader, but a reader), the
        deadline starts again; if none did, the connection is reset. Aborted, not closed (``close`` would
        wait for the buffered bytes to be sent, which is what never happens), with a zero linger, so the kernel drops
        its own buffered bytes and sends a reset at once instead of a FIN queued behind them that the client, reading
        nothing, would never get. uvicorn then marks the response disconnected and wakes its ``send``, so the
        response's task ends as if the client had gone."""
        self._stalled = None
        if self._unsent_bytes() < self._unsent:
            self._arm_stalled()
            return
        log.info("connection reset: its client read nothing for %.0f s", self.limits.write_timeout_s)
        connection = self.transport.get_extra_info("socket")
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _RESET_ON_CLOSE)
        self.transport.abort()

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown asks each connection to close: the live streams end too (with ``retry:`` and
        their last id; their response completes, and the connection closes), so the shutdown never waits for them."""
        shutting_down()
        super().shutdown()

    def eof_received(self) -> None:
        """A client that closed its side while the connection lingers is done with: close it at once."""
        if self._lingering:
            self.transport.close()

    def _head_size(self) -> int:
        """The request head's length as received (request line and headers): counted only when the bytes read
        while it came were more than the limit, since a read may also hold the start of the body."""
        return len(self.url) + 16 + sum(len(name) + len(value) + 4 for name, value in self.headers)

    def _arm(self, seconds: float) -> None:
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
            self._body_armed = False

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._in_body and self.pipeline:  # waiting for an earlier request's answer: not the client's doing
            self._arm(self.limits.body_timeout_s)
            return
        self._refuse(408, HttpCode.BODY_TIMEOUT if self._in_body else HttpCode.REQUEST_TIMEOUT, linger=True)

    def _refuse(self, status: int, code: HttpCode, retry_after_s: int | None = None, linger: bool = False) -> None:
        """Answer ``status`` (unless another answer is already on its way) and close the connection; a request
        being read is told its client is gone, so whatever the app answers later is dropped."""
        if self.transport.is_closing():
            return
        self._disarm()
        cycle = self.cycle
        if self._in_body and cycle is not None:
            answer = not cycle.response_started
            cycle.disconnected = True
            cycle.message_event.set()
        else:
            answer = cycle is None or cycle.response_complete
        if answer:
            request = request_id(self.headers or ())
            self.transport.write(problem_bytes(status, code, request, self._locale(), retry_after_s))
            log.info("%d %s", status, code, extra={"request_id": request, "status": status})
        self._in_head = self._in_body = False
        if linger and answer:
            self._lingering = True
            self.flow.resume_reading()  # a body paused for the app is read (and dropped) too
            self.transport.write_eof()
            self.loop.call_later(LINGER_S, self.transport.close)
        else:
            self.transport.close()

    def _locale(self) -> str:
        """The request's language once its headers are all in (its body is being read), else Hungarian: a
        language header seen before the headers are complete may not be the request's last word."""
        if not self._in_body or not self.headers:
            return DEFAULT_LOCALE
        wanted = [value for name, value in self.headers if name == b"accept-language"]
        return negotiate_locale(wanted[-1].decode("latin-1")) if wanted else DEFAULT_LOCALE

    def _shed(self) -> None:
        """Past ``max_open`` open connections (not counting those already closing): close a tenth of them, those
        lingering after a refusal first (they are answered), then those whose requests are nearest their deadline
        (the slowest), then idle keep-alive ones; if that is not enough, this new one."""
        keep = self.max_open - self.max_open // 10
        others = [
            c
            for c in self.connections
            if c is not self and isinstance(c, GuardedProtocol) and not c.transport.is_closing()
        ]  # one already closing is freed already (by the shed that closed it, or its own end)
        live = len(others) + 1
        if live <= self.max_open:
            return
        lingering = [c for c in others if c._lingering]
        waiting = sorted((c for c in others if c._deadline is not None), key=_deadline_of)
        idle = [
            c
            for c in others
            if not c._lingering and c._deadline is None and (c.cycle is None or c.cycle.response_complete)
        ]
        excess = live - keep
        for victim in lingering[:excess]:
            victim.transport.close()
        for victim in waiting[: max(0, excess - len(lingering))]:
            victim._refuse(503, HttpCode.SERVICE_UNAVAILABLE, retry_after_s=1)
        for victim in idle[: max(0, excess - len(lingering) - len(waiting))]:
            victim.transport.close()
        if live - min(excess, len(lingering) + len(waiting) + len(idle)) > self.max_open:
            self._refuse(503, HttpCode.SERVICE_UNAVAILABLE, retry_after_s=1)


def _deadline_of(connection: GuardedProtocol) -> float:
    return connection._deadline.when() if connection._deadline is not None else 0.0


def use_limits(limits: HttpLimits) -> None:
    """Give :class:`GuardedProtocol` ``limits``: in a worker of ``pyramide serve --workers``, whose protocol uvicorn
    builds by name, from the settings the worker validated (before its first connection: uvicorn loads the app,
    which calls this, before it listens)."""
    GuardedProtocol.limits = limits
    GuardedProtocol.max_open = connection_bounds(limits.max_connections)[0]
    GuardedProtocol.max_head = limits.max_header_bytes


def protocol(limits: HttpLimits) -> type[GuardedProtocol]:
    """The protocol class with its limits (uvicorn takes a class, and builds one per connection)."""
    max_open = connection_bounds(limits.max_connections)[0]
    attributes = {"limits": limits, "max_open": max_open, "max_head": limits.max_header_bytes}
    return type("Guarded", (GuardedProtocol,), attributes)


def server_config(app: Any, host: str, port: int, limits: HttpLimits | float, **options: Any) -> uvicorn.Config:
    """uvicorn's configuration for the service: the guarded protocol, a listen backlog within the file limit, no
    access log of its own, and no reading of ``X-Forwarded-For`` by uvicorn (by default it believes it from
    127.0.0.1: any local client could name itself any address); the service reads it only as configured
    (``headers.client_address``). ``limits`` may be just the header deadline, the others at their defaults."""
    options["proxy_headers"] = False
    if not isinstance(limits, HttpLimits):
        limits = replace(HttpLimits(), header_timeout_s=limits)
    options.setdefault("log_config", None)
    options.setdefault("access_log", False)
    options.setdefault("backlog", connection_bounds(limits.max_connections)[1])
    return uvicorn.Config(app, host=host, port=port, http=protocol(limits), **options)
