"""Draining on SIGTERM: a replica told to stop keeps serving for ``PYRAMIDE_DRAIN_S`` while its load balancer notices
it is leaving, then stops as uvicorn does (issue 56: the port closed at once, so requests 0.5 s later were reset).

On the first SIGTERM the process drains: readiness answers 503 ``draining`` at once (``/health/live`` stays 200),
every other request is served as before but answered with ``Connection: close`` (:func:`draining`, read by the HTTP
protocol), so a balancer's kept-alive connections are retired by the server after an answer, never reset under a
request. After the drain, uvicorn's own handler runs: it stops listening, lets requests in flight finish
(``PYRAMIDE_SHUTDOWN_GRACE_S``), ends the live streams with ``retry:`` and their last id (their clients come back,
through the balancer, to another replica with ``Last-Event-ID``), and stops the app (its task registry hands its work
back). A second SIGTERM, or SIGINT (Ctrl-C never drains), stops at once. ``PYRAMIDE_DRAIN_S=0``: no drain.

uvicorn installs its handler (``Server.handle_exit``) with ``signal.signal`` around the app's lifespan, in one process
and in each worker of ``--workers N``: the app's start (:class:`DrainPlugin`) wraps it there, through the signal
module's public API, and puts it back at the app's end. Not in a thread (a test's server): signals are the main
thread's. The state is per event loop, as :mod:`http.streams`'s stop, so servers in a test's threads stay apart.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any

import uvicorn
from litestar import Litestar
from litestar.config.app import AppConfig
from litestar.plugins import InitPluginProtocol

log = logging.getLogger("pyramide.serve")
_DRAINING: set[asyncio.AbstractEventLoop] = set()
"""The event loops whose server is draining (a set: the HTTP protocol asks on every request)."""
Handler = Callable[[int, FrameType | None], Any]


def draining(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the server running in ``loop`` is draining (it got SIGTERM and stops after the drain)."""
    return loop in _DRAINING


class Drain:
    """The drain of the server in ``loop``: the signal handler in uvicorn's place, and when to call uvicorn's."""

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float, stop: Handler) -> None:
        self.loop, self.seconds, self.stop = loop, seconds, stop
        self._timer: asyncio.TimerHandle | None = None
        self._stopping = False

    def on_sigterm(self, sig: int, frame: FrameType | None) -> None:
        """The first SIGTERM drains (the flag set here, at once; the rest on the loop: a signal handler runs between
        any two bytecodes of the main thread, where logging or the loop's own state may be halfway); a second, or
        one with no drain to do, stops now."""
        if self._stopping or self.loop in _DRAINING or self.seconds <= 0:
            self._stop_now(sig, frame)
            return
        _DRAINING.add(self.loop)
        self.loop.call_soon_threadsafe(self._begin, sig)

    def on_sigint(self, sig: int, frame: FrameType | None) -> None:
        """Ctrl-C stops at once, drain or not (uvicorn's second SIGINT forces the stop, as it did)."""
        self._stop_now(sig, frame)

    def undo(self) -> None:
        """The app stops: its loop no longer drains, and no stop is left to call."""
        _DRAINING.discard(self.loop)
        if self._timer is not None:
            self._timer.cancel()

    def _begin(self, sig: int) -> None:
        if self._stopping:
            return
        text = "SIGTERM: draining for %g s (readiness 503, connections closed after each answer), then stopping"
        log.info(text, self.seconds, extra={"drain_s": self.seconds})
        self._timer = self.loop.call_later(self.seconds, self._drained, sig)

    def _drained(self, sig: int) -> None:
        log.info("drained: stopping")
        self._stop_now(sig, None)

    def _stop_now(self, sig: int, frame: FrameType | None) -> None:
        self._stopping = True
        if self._timer is not None:
            self._timer.cancel()
        self.stop(sig, frame)


def watch_signals(seconds: float) -> Drain | None:
    """In the main thread of a process whose SIGTERM is uvicorn's: drain on SIGTERM (see the module); else nothing
    (a test's app, a server in a thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    uvicorns = signal.getsignal(signal.SIGTERM)  # one handler for both signals: the signal it gets tells them apart
    ours = isinstance(getattr(uvicorns, "__self__", None), uvicorn.Server)
    if not ours or signal.getsignal(signal.SIGINT) != uvicorns:
        return None
    assert callable(uvicorns)
    drain = Drain(asyncio.get_running_loop(), seconds, uvicorns)
    signal.signal(signal.SIGTERM, drain.on_sigterm)
    signal.signal(signal.SIGINT, drain.on_sigint)
    return drain


class DrainPlugin(InitPluginProtocol):
    """Drains on SIGTERM for ``seconds`` while the app runs (see the module)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        app_config.lifespan.append(self._watching)
        return app_config

    @asynccontextmanager
    async def _watching(self, _: Litestar) -> AsyncIterator[None]:
        previous = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
        drain = watch_signals(self.seconds)
        try:
            yield
        finally:
            if drain is not None:
                drain.undo()
                signal.signal(signal.SIGTERM, previous[0])
                signal.signal(signal.SIGINT, previous[1])
