"""The per-address allowance of moves (``PYRAMIDE_LIMIT_ADDRESS_MOVES`` a minute), without a Redis round trip on the
move route.

Each operation a game records costs Redis about 7 bytes and each player may make ``limit_moves`` a minute, so the
players of one address together could grow Redis without a per-address bound (``docs/security.md``, Bounded memory).
Each process counts the moves it served per address in memory (a dict increment on the hot path) and once a second,
off the request path, adds its counts to the address's counter in Redis for the minute window they were served in
(one ``INCRBY`` and ``PEXPIRE`` per address active in the window, with 0 for those it served nothing since), reading
the totals back. An address whose total, with what this process counted since, reaches the allowance is refused by
every process until the window ends, and not a moment longer: the first check or answer of a new window starts it
afresh in this process (what the last one counted is still added to the last one's counter), so no address is told
to wait a minute more when a window ends between two flushes.

The overshoot: a process learns of the other processes' counts only at its next flush, so an address may get up to
one second of its traffic per process past the allowance (and never more than the allowance per process and window:
a process never admits past the allowance by its own count). Windows are fixed minutes of the wall clock, so any
60 seconds hold at most two windows' worth. (A sliding window counter, the previous window's count weighted by how
much of it the last 60 s still cover, would not lower that bound: an address that spends the whole allowance in the
last second of one window is then let spend almost all of it again by the end of the next, two allowances in
barely 60 s; it only smooths evenly spread traffic. The bound on storage counts two windows instead.)

The same counting serves the allowance of keyed moves that keep one response more
(``PYRAMIDE_LIMIT_ADDRESS_KEYED_MOVES``), a second instance with its own counters.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final, NamedTuple

from redis.exceptions import RedisError, ResponseError

from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock
from pyramide.service.infra.outage import OutageLog
from pyramide.service.infra.ratelimit import Limit, RateLimitedError
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.scripts import Script

log = logging.getLogger("pyramide.service")
FLUSH_INTERVAL_S: Final = 1.0
WINDOW_S: Final = 60


class WindowKeys(NamedTuple):
    window: str
    """The address bucket's counter of one allowance for one minute window."""


class AddArgs(NamedTuple):
    moves: int
    """The moves this process served the address since its last flush."""
    expire_ms: int


ADD: Final = Script("address_moves_add", WindowKeys, AddArgs)
"""Adds one process's count to the window's counter and answers the total."""


OWN_ALLOWANCES = 1024
"""Apps' buckets remembered with their own allowance in one process (each app request names its own again)."""


class AddressMoves:
    """Counts moves per address bucket in this process and refuses an address over ``limit`` (``limit.limit`` 0:
    no allowance)."""

    def __init__(self, redis: RedisClient, limit: Limit, *, clock: Clock) -> None:
        self.clock = clock
        self.limit = limit
        self._allowance = limit.limit if limit.limit > 0 else -1
        self._own: dict[str, int] = {}
        """Buckets with an allowance of their own (an app's, ``allow``) in place of ``limit``'s."""
        self._counts: dict[str, int] = {}
        self._totals: dict[str, int] = {}
        self._window = int(self.clock.time()) // WINDOW_S
        self._ended: dict[int, dict[str, int]] = {}
        """Counts of windows that ended before they were shared, by window: shared at the next flush."""
        self._add = ADD.load(redis)
        self._outage = OutageLog("Redis, sharing the per-address move counts,", log, clock)

    def allow(self, bucket: str, per_minute: int) -> None:
        """Give ``bucket`` (an app's) an allowance of its own, ``per_minute`` (0: none)."""
        if len(self._own) >= OWN_ALLOWANCES and bucket not in self._own:
            self._own.clear()
        self._own[bucket] = per_minute if per_minute > 0 else -1

    def admit(self, bucket: str) -> None:
        """The hot path: :class:`RateLimitedError` (429) when the address has used up the window's allowance."""
        allowance = self._own.get(bucket, self._allowance) if self._own else self._allowance
        if allowance < 0:
            return
        window = int(self.clock.time()) // WINDOW_S
        if window != self._window:
            self._roll(window)  # what was counted is the ended window's: the new one has refused nothing yet
        if self._totals.get(bucket, 0) + self._counts.get(bucket, 0) >= allowance:
            raise RateLimitedError(self.limit, self._until_window_ends_ms())

    def count(self, bucket: str) -> None:
        """One move served to the address."""
        if self._allowance >= 0 or self._own:
            self._counts[bucket] = self._counts.get(bucket, 0) + 1

    def state(self, bucket: str) -> tuple[str, str] | None:
        """The IETF ``RateLimit-Policy`` and ``RateLimit`` values of ``bucket``'s allowance, as this process knows
        it (the shared total at the last flush and its own count since): moves left in the window, and the
        seconds until the window ends; ``None`` without an allowance. Two dict reads and one string: the move
        route's answer carries it."""
        own = self._own.get(bucket) if self._own else None
        allowance = self._allowance if own is None else own
        if allowance < 0:
            return None
        now = int(self.clock.time())
        if now // WINDOW_S != self._window:
            self._roll(now // WINDOW_S)
        left = allowance - self._totals.get(bucket, 0) - self._counts.get(bucket, 0)
        reset = WINDOW_S - now % WINDOW_S
        name = self.limit.name
        policy = self.limit.policy if own is None else f'"{name}";q={allowance};w={WINDOW_S}'
        return policy, f'"{name}";r={left if left > 0 else 0};t={reset}'

    def _until_window_ends_ms(self) -> int:
        return max(1, int((WINDOW_S - self.clock.time() % WINDOW_S) * 1000))

    def _roll(self, window: int) -> None:
        """A new minute window: the counts not yet shared are kept for the window they were served in, and the new
        one starts from nothing (until the flush reads what the other processes add to it)."""
        if self._counts:
            ended = self._ended.setdefault(self._window, {})
            for bucket, n in self._counts.items():
                ended[bucket] = ended.get(bucket, 0) + n
        self._window, self._totals, self._counts = window, {}, {}

    async def flush(self) -> None:
        """Add this process's counts to the shared counters of the windows they were served in, and read back the
        current window's totals."""
        window = int(self.clock.time()) // WINDOW_S
        if window != self._window:
            self._roll(window)
        await self._share_ended(window)
        counts, self._counts = self._counts, {}
        for bucket, total in self._totals.items():  # read what the other processes added to those still allowed
            if bucket not in counts and total < self._own.get(bucket, self._allowance):
                counts[bucket] = 0
        if not counts:
            return
        buckets = list(counts)
        for bucket in buckets:  # counted as taken while the totals are on their way
            self._totals[bucket] = self._totals.get(bucket, 0) + counts[bucket]
        totals = await self._add_all(window, counts)
        for bucket, shared in zip(buckets, totals, strict=True):
            if isinstance(shared, Exception):  # only this bucket's count is kept for the next flush
                self._keep(window, {bucket: counts[bucket]})
                if self._window == window:
                    self._totals[bucket] = self._totals.get(bucket, counts[bucket]) - counts[bucket]
            elif self._window == window:
                self._totals[bucket] = shared

    async def _share_ended(self, window: int) -> None:
        """Add the counts of ended windows to their counters (those of the last window only: older counters have
        expired, and nobody is refused by them any more)."""
        ended, self._ended = self._ended, {}
        last = ended.get(window - 1)
        if not last:
            return
        totals = await self._add_all(window - 1, last)
        self._keep(
            window - 1, {b: n for (b, n), t in zip(last.items(), totals, strict=True) if isinstance(t, Exception)}
        )

    def _keep(self, window: int, counts: dict[str, int]) -> None:
        """Counts not shared: counted again at the next flush, in the window they were served in."""
        kept = self._counts if window == self._window else self._ended.setdefault(window, {})
        for bucket, n in counts.items():
            kept[bucket] = kept.get(bucket, 0) + n

    async def _add_all(self, window: int, counts: dict[str, int]) -> list[int | Exception]:
        """Add ``counts`` to the buckets' counters of ``window``: their totals, in the order of ``counts``, or for
        each that failed its error (logged), so that the others are not counted again."""
        expire_ms = 2 * WINDOW_S * 1000
        calls = (
            self._add(
                WindowKeys(window=keyspace.address_window(b, self.limit.name, window)),
                AddArgs(moves=n, expire_ms=expire_ms),
            )
            for b, n in counts.items()
        )
        answers = await asyncio.gather(*calls, return_exceptions=True)
        totals: list[int | Exception] = []
        for answer in answers:
            if isinstance(answer, (RedisError, OSError)):
                totals.append(answer)
            elif isinstance(answer, BaseException):
                raise answer
            else:
                totals.append(int(answer))
        failed = [t for t in totals if isinstance(t, Exception) and not isinstance(t, ResponseError)]
        if failed:  # once an outage, however many flushes and addresses it had
            self._outage.failed(failed[0])
        elif answers:
            self._outage.succeeded()
        return totals
