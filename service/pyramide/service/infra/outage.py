"""A dependency that is down, logged once when it goes down and once when it is back: never once per attempt.

A loop that retries while Redis (or anything it needs) is out of reach would otherwise write a warning on every try
(the webhook delivery job, five times a second, wrote 59 in 20 s): the lines that matter drown, and the log grows
fastest exactly when the operator reads it. Each such loop keeps one :class:`OutageLog` and tells it of every attempt.
"""

from __future__ import annotations

import logging

from pyramide.service.infra.clock import Clock


class OutageLog:
    """The state of one dependency as one loop sees it: ``<what> unreachable: <Error>: <message>`` logged (a
    warning) at the first failed attempt, ``<what> back after <n> s, <m> attempts failed`` at the first success
    after it; attempts in between log nothing."""

    __slots__ = ("clock", "failures", "log", "since", "what")

    def __init__(self, what: str, log: logging.Logger, clock: Clock) -> None:
        self.what = what
        self.log = log
        self.clock = clock
        self.since: float | None = None
        """When the first failed attempt of the outage was (the clock's monotonic time); ``None`` while up."""
        self.failures = 0

    @property
    def down(self) -> bool:
        """Whether the last attempt failed."""
        return self.since is not None

    def failed(self, error: BaseException) -> None:
        """An attempt failed with ``error``: logged if it is the first of an outage."""
        self.failures += 1
        if self.since is None:
            self.since = self.clock.monotonic()
            self.log.warning("%s unreachable: %s", self.what, describe(error))

    def succeeded(self) -> None:
        """An attempt succeeded: logged if the attempts before it had failed."""
        if self.since is None:
            return
        seconds = self.clock.monotonic() - self.since
        self.log.warning("%s back after %.1f s, %d attempts failed", self.what, seconds, self.failures)
        self.since, self.failures = None, 0


def describe(error: BaseException) -> str:
    """``Error: message`` (``Error`` alone when it has no message)."""
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class RefusalLog:
    """Requests answered 503 because a dependency is out of reach. Each is a client's own request and keeps its request
    line (status 503), but the cause is a warning only at the first refusal of a run, a debug line after it: a burst
    of clients during an outage would otherwise write one warning each. A run ends when ``quiet_s`` pass without a
    refusal; the next refusal starts a new one, logged again. ``now`` is the event loop's time (monotonic)."""

    __slots__ = ("last", "log", "quiet_s", "what")

    def __init__(self, what: str, log: logging.Logger, quiet_s: float = 10.0) -> None:
        self.what = what
        self.log = log
        self.quiet_s = quiet_s
        self.last: float | None = None

    def refused(self, error: BaseException, now: float) -> None:
        """A request was answered 503 for ``error``: a warning if it starts a run, else a debug line."""
        starts = self.last is None or now - self.last > self.quiet_s
        self.last = now
        if starts:
            text = "%s unreachable: %s (requests are answered 503; the next ones in this run are logged at DEBUG)"
            self.log.warning(text, self.what, describe(error))
        else:
            self.log.debug("%s unreachable: %s", self.what, describe(error))
