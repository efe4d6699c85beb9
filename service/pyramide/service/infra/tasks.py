"""The one registry of the service's background work: it starts, names and tracks every job, reports them for health,
and lets a test or a graceful shutdown await the work instead of sleeping.

Two kinds of job: periodic ones (:meth:`TaskRegistry.every`: a flush, a sweep, a housekeeping pass) and tracked tasks
(:meth:`TaskRegistry.spawn`: a par's search, one outbox's delivery, a challenge's choice), which :meth:`drain` awaits,
with the tasks they spawn in turn. A ``lasting`` task (a stream's lease renewal, the notices' listener) lives as long
as what it serves: tracked and reported, cancelled at :meth:`stop`, never awaited by :meth:`drain`.

An ``automatic`` registry (production) paces each periodic job by the event loop's own sleeps. A manual one (a test's
fake clock) never runs a job by itself: the test moves the clock and calls :meth:`run_due`, which runs every job whose
due time by the clock has come, then drains."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal

from pyramide.service.infra.clock import Clock
from pyramide.service.infra.outage import OutageLog

log = logging.getLogger("pyramide.service")

Job = Callable[[], Awaitable[float | None]]
"""A periodic job's one pass; it may answer the seconds until its next pass (``None``: its interval)."""

STOP_WITHIN_S = 5.0
"""How long :meth:`TaskRegistry.stop` waits for the tracked tasks to end before it cancels them."""


@dataclass(slots=True)
class JobState:
    """What the registry knows of one job (a periodic job, or every tracked task of one name)."""

    name: str
    kind: Literal["periodic", "task", "lasting"]
    running: int = 0
    runs: int = 0
    last_run_at: float | None = None
    """When its last pass or task started (the clock's wall time)."""
    last_finish_at: float | None = None
    last_error: str | None = None
    """The type of the last error it ended with (its message is in the log)."""


@dataclass(slots=True)
class Periodic:
    """One periodic job: its pass, its interval and when it is due next (the clock's monotonic time)."""

    state: JobState
    job: Job
    interval_s: float
    due: float
    outage: OutageLog
    """Its failing passes, logged once when they start failing and once when a pass succeeds again."""
    wake_event: asyncio.Event = field(default_factory=asyncio.Event)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    loop: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Run the job now (an automatic registry) or at the next :meth:`TaskRegistry.run_due` (a manual one)."""
        self.wake_event.set()


class TaskRegistry:
    """Every background job of one app (see the module)."""

    def __init__(self, clock: Clock, *, automatic: bool = True) -> None:
        self.clock = clock
        self.automatic = automatic
        self._periodic: dict[str, Periodic] = {}
        self._states: dict[str, JobState] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._lasting: set[asyncio.Task[Any]] = set()
        self._started = False
        self._stopped = False
        self.loop: asyncio.AbstractEventLoop | None = None
        """The event loop the registry was started on: where a test in another thread runs :meth:`drain`."""

    def every(
        self, name: str, interval_s: float, job: Job, *, first_s: float = 0.0, wake: asyncio.Event | None = None
    ) -> Periodic:
        """Run ``job`` every ``interval_s`` (its first pass ``first_s`` after the start), one pass at a time, and
        sooner whenever ``wake`` (or :meth:`Periodic.wake`) is set."""
        if name in self._periodic:
            raise ValueError(f"a periodic job {name!r} is registered already")
        state = self._state(name, "periodic")
        outage = OutageLog(f"background job {name}", log, self.clock)
        periodic = Periodic(state, job, interval_s, self.clock.monotonic() + first_s, outage)
        if wake is not None:
            periodic.wake_event = wake
        self._periodic[name] = periodic
        if self._started and self.automatic:
            periodic.loop = asyncio.get_running_loop().create_task(self._pace(periodic, first_s), name=name)
        return periodic

    def start(self) -> None:
        """Starts the periodic jobs' loops (an automatic registry; a manual one waits for :meth:`run_due`)."""
        self._started = True
        self.loop = asyncio.get_running_loop()
        now = self.clock.monotonic()
        for periodic in self._periodic.values():
            first_s = max(0.0, periodic.due - now)
            if self.automatic and periodic.loop is None:
                loop = asyncio.get_running_loop()
                periodic.loop = loop.create_task(self._pace(periodic, first_s), name=periodic.state.name)

    def spawn(self, name: str, work: Coroutine[Any, Any, Any], *, lasting: bool = False) -> asyncio.Task[Any]:
        """Runs ``work`` as a tracked task named ``name`` (``lasting``: not awaited by :meth:`drain`)."""
        if self._stopped:
            work.close()
            raise RuntimeError("the task registry is stopped")
        state = self._state(name, "lasting" if lasting else "task")
        task = asyncio.get_running_loop().create_task(self._tracked(state, work), name=name)
        (self._lasting if lasting else self._tasks).add(task)
        task.add_done_callback(self._lasting.discard if lasting else self._tasks.discard)
        task.add_done_callback(lambda _: work.close())  # a task cancelled before it started never awaited it
        return task

    async def drain(self, timeout_s: float | None = None) -> None:
        """Awaits until no tracked task remains, including those spawned meanwhile (:class:`TimeoutError` after
        ``timeout_s``). A task's failure is its own (logged and reported): it does not fail the drain."""
        async with asyncio.timeout(timeout_s):
            while self._tasks:
                await asyncio.wait(set(self._tasks))

    async def run_due(self) -> None:
        """Runs once every periodic job whose due time by the clock has come (or that was woken), then drains."""
        now = self.clock.monotonic()
        for periodic in list(self._periodic.values()):
            if periodic.due <= now or periodic.wake_event.is_set():
                await self._pass(periodic)
        await self.drain()

    async def run(self, name: str) -> None:
        """Runs the periodic job ``name`` once now, whenever it is due, then drains."""
        await self._pass(self._periodic[name])
        await self.drain()

    async def stop(self, within_s: float = STOP_WITHIN_S) -> None:
        """Stops the periodic loops, waits up to ``within_s`` for the tracked tasks, then cancels what is left."""
        self._stopped = True
        loops = [p.loop for p in self._periodic.values() if p.loop is not None]
        for loop in loops:
            loop.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            await self.drain(within_s)
        left = [*self._tasks, *self._lasting]
        for task in left:
            task.cancel()
        await asyncio.gather(*left, return_exceptions=True)

    def report(self) -> list[JobState]:
        """Every job by name: its kind, how many of it run now, its last start, finish and error."""
        return [self._states[name] for name in sorted(self._states)]

    def _state(self, name: str, kind: Literal["periodic", "task", "lasting"]) -> JobState:
        state = self._states.get(name)
        if state is None:
            state = self._states[name] = JobState(name, kind)
        return state

    async def _tracked(self, state: JobState, work: Coroutine[Any, Any, Any]) -> Any:
        state.running += 1
        state.runs += 1
        state.last_run_at = self.clock.time()
        try:
            return await work
        except asyncio.CancelledError:
            raise
        except Exception as error:
            state.last_error = type(error).__name__
            raise
        finally:
            state.running -= 1
            state.last_finish_at = self.clock.time()

    async def _pass(self, periodic: Periodic) -> float:
        """One pass of a periodic job; the seconds until its next."""
        async with periodic.lock:
            periodic.wake_event.clear()
            state = periodic.state
            state.running += 1
            state.runs += 1
            state.last_run_at = self.clock.time()
            wait_s: float | None = None
            try:
                wait_s = await periodic.job()
                periodic.outage.succeeded()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a failed pass is reported (logged once per outage); the next one comes
                state.last_error = type(error).__name__
                periodic.outage.failed(error)
            finally:
                state.running -= 1
                state.last_finish_at = self.clock.time()
            wait_s = periodic.interval_s if wait_s is None else wait_s
            periodic.due = self.clock.monotonic() + wait_s
            return wait_s

    async def _pace(self, periodic: Periodic, first_s: float) -> None:
        """An automatic registry's loop of one periodic job: real sleeps between passes, cut short by a wake."""
        wait_s = first_s
        while True:
            if wait_s > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(periodic.wake_event.wait(), wait_s)
            wait_s = await self._pass(periodic)
