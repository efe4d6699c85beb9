"""The test's fake clock seen from outside the test's process: the moment it starts at, the environment and the
browser script that hand it to a server process or a page, and its moves across midnight UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pyramide.service.infra.clock import FakeClock, utc_now

WEDNESDAY_10H = datetime(2042, 6, 11, 10, tzinfo=UTC).timestamp()
"""Where a test's fake clock starts: an ordinary moment (a Wednesday, 10:00 UTC, far from any day's or minute's
end), the same in every run. In the future on purpose: Redis keeps its own clock (``docs/time.md``), and the
service's clock must not be behind it."""


def clock_env(clock: FakeClock) -> dict[str, str]:
    """The environment that gives a server process started by a test the test's fake clock."""
    assert clock.path is not None
    return {"PYRAMIDE_TEST_CLOCK_FILE": str(clock.path)}


def browser_clock(clock: FakeClock) -> str:
    """An init script that sets a page's ``Date`` to the service's clock as it stands (then running on from there):
    for a page that reads the browser's day, as the calendar does."""
    return (
        f"(() => {{ const shift = {clock.time() * 1000!r} - Date.now(); const Real = Date;"
        " class Shifted extends Real { constructor(...a) { if (a.length) super(...a); else super(Real.now() + shift); }"
        " static now() { return Real.now() + shift; } }; globalThis.Date = Shifted; })();"
    )


def next_midnight(clock: FakeClock) -> float:
    """The next midnight UTC after the clock's time, in seconds since the epoch: where the daily challenges close."""
    now = utc_now(clock)
    return (datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)).timestamp()


def past_the_close(clock: FakeClock) -> None:
    """Moves the clock a minute past the next midnight UTC: today's challenges closed, tomorrow's open."""
    clock.advance(next_midnight(clock) + 60 - clock.time())
