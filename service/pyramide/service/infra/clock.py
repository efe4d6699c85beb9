"""The one clock of the service: wall time, monotonic time and today's UTC date, created at start-up and handed to
every store and service, so that nothing else in the service reads the process clock and a test can move time.

:class:`SystemClock` reads the process clock. :class:`FakeClock` stands still until a test moves it; given a file it
writes each move there, so that :class:`FileClock` in a server started by the test (the test-only setting
``PYRAMIDE_TEST_CLOCK_FILE``) reads the same time. What keeps other time, and why, is in ``docs/time.md``: Redis's
own clock (rate limits, key expiry), the event loop's (I/O pacing) and ``time.perf_counter`` (measuring work)."""

from __future__ import annotations

import os
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Protocol


class Clock(Protocol):
    """What the service asks of time."""

    def time(self) -> float:
        """Wall time: seconds since the Unix epoch."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back: for durations and deadlines, not for dates."""
        ...


def now_ms(clock: Clock) -> int:
    """Wall time in whole milliseconds since the epoch: the unit every stored time is kept in. Rounded, not cut: a
    fake clock moved by 0.2 s steps reads 3.0 s later as 2999.9999 ms of float, which is 3000 ms."""
    return round(clock.time() * 1000)


def today(clock: Clock) -> date:
    """The UTC date at the clock's wall time: the day challenges and daily limits count in."""
    return datetime.fromtimestamp(clock.time(), UTC).date()


def utc_now(clock: Clock) -> datetime:
    """The clock's wall time as an aware UTC datetime."""
    return datetime.fromtimestamp(clock.time(), UTC)


class SystemClock:
    """The process clock: what production runs on. Its methods are the ``time`` module's functions themselves, not
    wrappers: a move reads the clock about five times, and a Python frame each cost the move route measurably
    (``benchmarks/service_instructions.py``)."""

    monotonic = staticmethod(time.monotonic)
    time = staticmethod(time.time)  # after ``monotonic``: from here on, ``time`` in this class body is this method


class FakeClock:
    """A clock that moves only when told: :meth:`advance` moves wall and monotonic time together, :meth:`set` steps
    the wall clock alone (as an operator's or NTP's correction does; monotonic time never goes back). With ``path``
    every change is written to that file for :class:`FileClock` readers in other processes."""

    def __init__(self, start: float | None = None, path: Path | None = None) -> None:
        self._wall = time.time() if start is None else start
        self._monotonic = 1_000.0
        self.path = path
        self._publish()

    def time(self) -> float:
        return self._wall

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass (not negative: time that passes does not go back)."""
        if seconds < 0:
            raise ValueError("time passes forward only; use set() to step the wall clock back")
        self._wall += seconds
        self._monotonic += seconds
        self._publish()

    def set(self, wall: float) -> None:
        """Step the wall clock to ``wall`` seconds since the epoch; monotonic time stays."""
        self._wall = wall
        self._publish()

    def _publish(self) -> None:
        if self.path is not None:
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text(f"{self._wall!r} {self._monotonic!r}\n", encoding="ascii")
            os.replace(tmp, self.path)


class FileClock:
    """A clock read from the file a :class:`FakeClock` in another process writes: the server side of a test's fake
    clock. Test-only (the setting ``PYRAMIDE_TEST_CLOCK_FILE``); the file is read again only when it changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._wall = 0.0
        self._monotonic = 0.0

    def time(self) -> float:
        self._read()
        return self._wall

    def monotonic(self) -> float:
        self._read()
        return self._monotonic

    def _read(self) -> None:
        stat = os.stat(self.path)
        stamp = (stat.st_mtime_ns, stat.st_ino)
        if stamp != self._stamp:
            wall, monotonic = self.path.read_text(encoding="ascii").split()
            self._wall, self._monotonic, self._stamp = float(wall), float(monotonic), stamp
