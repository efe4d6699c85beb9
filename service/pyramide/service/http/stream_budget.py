"""The live streams one process keeps open: a share of its connections of their own, so they never take the API's.

Streams within every cap (20 an address, from many addresses) once held all of a process's connections: then new
clients and the moves of open ones were refused 503, and no stream was closed (issue 56). Now at most
:func:`http.connection_limits.streams_per_process` are open at once (``PYRAMIDE_MAX_STREAMS``, below
``PYRAMIDE_MAX_CONNECTIONS``; half of it unset): a stream that starts past it ends the oldest one open, which sends
``retry:`` and its last id and closes its connection, so its client comes back (here or to another replica) with
``Last-Event-ID`` and misses nothing. A new stream is never refused for the budget's sake, and the connections left
over stay the API's.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from pyramide.service.infra.meters import Meters

log = logging.getLogger("pyramide.streams")
RETRY_MS: Final = 1000
"""What a stream ended to make room tells its client (``retry:``): reconnect after this many milliseconds."""


class StreamBudget:
    """The process's open streams, oldest first; past ``limit``, the oldest are told to end. ``meters``: the open
    streams' gauge and the count of those ended for room."""

    def __init__(self, limit: int, meters: Meters) -> None:
        self.limit = limit
        self._open: dict[str, asyncio.Event] = {}  # by age: a dict keeps the order streams entered in
        self._full = False
        self._gauge = meters.streams_open
        self._ended = meters.streams_ended

    def enter(self, stream: str) -> asyncio.Event:
        """Counts ``stream`` in, ending the oldest streams past the limit; the event returned is set when a newer
        stream ends this one."""
        ended = self._open[stream] = asyncio.Event()
        while len(self._open) > self.limit:
            oldest = next(iter(self._open))
            self._open.pop(oldest).set()
            self._ended.inc()
            if not self._full:  # once per time it fills up, not once per stream ended
                self._full = True
                log.warning("the live streams' budget is full (%d): each new stream ends the oldest", self.limit)
        self._gauge.set(len(self._open))
        return ended

    def leave(self, stream: str) -> None:
        """``stream`` ended (or was ended): it no longer counts."""
        self._open.pop(stream, None)
        self._gauge.set(len(self._open))
        if self._full and len(self._open) <= self.limit * 9 // 10:
            self._full = False
            log.info("the live streams' budget has room again (%d of %d open)", len(self._open), self.limit)

    def __len__(self) -> int:
        return len(self._open)


def end_with_retry(last: int | None) -> bytes:
    """The last bytes of a stream the server ends early: ``retry:`` and the last id sent again (a block without
    ``data``, which clients read as "last id" and "reconnect delay" without an event), so that the client's next
    request carries ``Last-Event-ID``."""
    return b"retry: %d\n%s\n" % (RETRY_MS, b"" if last is None else b"id: %d\n" % last)
