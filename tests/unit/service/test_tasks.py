"""The task registry: periodic jobs run when due by the clock, tracked tasks are drained (those they spawn too),
health sees every job, and a stop ends everything, without a test sleeping."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.tasks import TaskRegistry

T = TypeVar("T")


def run(scenario: Callable[[], Awaitable[T]]) -> T:
    async def main() -> T:
        return await scenario()

    return asyncio.run(main())


def test_a_manual_registry_runs_a_periodic_job_only_when_due_by_the_clock() -> None:
    async def scenario() -> list[float]:
        clock = FakeClock(start=1_000_000.0)
        tasks = TaskRegistry(clock, automatic=False)
        ran: list[float] = []

        async def job() -> None:
            ran.append(clock.time())

        tasks.every("flush", 10.0, job, first_s=10.0)
        tasks.start()
        await tasks.run_due()
        assert ran == []  # not due yet, and nothing runs by itself
        clock.advance(10.0)
        await tasks.run_due()
        await tasks.run_due()  # once per due time
        clock.advance(9.0)
        await tasks.run_due()
        clock.advance(1.0)
        await tasks.run_due()
        await tasks.stop()
        return ran

    assert run(scenario) == [1_000_010.0, 1_000_020.0]


def test_a_job_may_ask_for_its_next_pass_sooner_and_a_wake_makes_it_due_at_once() -> None:
    async def scenario() -> int:
        clock = FakeClock()
        tasks = TaskRegistry(clock, automatic=False)
        passes = 0

        async def job() -> float | None:
            nonlocal passes
            passes += 1
            return 1.0 if passes == 1 else None  # a retry after a second, then the interval

        periodic = tasks.every("choice", 600.0, job)
        await tasks.run_due()
        clock.advance(1.0)
        await tasks.run_due()
        assert passes == 2
        await tasks.run_due()
        assert passes == 2
        periodic.wake()
        await tasks.run_due()
        return passes

    assert run(scenario) == 3


def test_drain_awaits_spawned_tasks_and_the_tasks_they_spawn() -> None:
    async def scenario() -> list[str]:
        tasks = TaskRegistry(FakeClock(), automatic=False)
        done: list[str] = []
        gate = asyncio.Event()

        async def child() -> None:
            await gate.wait()
            done.append("child")

        async def parent() -> None:
            tasks.spawn("child", child())
            done.append("parent")

        async def opener() -> None:
            gate.set()

        tasks.spawn("parent", parent())
        tasks.spawn("opener", opener())
        await tasks.drain()
        return done

    assert run(scenario) == ["parent", "child"]


def test_lasting_tasks_are_not_drained_and_are_cancelled_at_stop() -> None:
    async def scenario() -> bool:
        tasks = TaskRegistry(FakeClock(), automatic=False)
        forever = tasks.spawn("listener", asyncio.Event().wait(), lasting=True)
        await tasks.drain()
        assert not forever.done()
        await tasks.stop()
        return forever.cancelled()

    assert run(scenario)


def test_stop_waits_a_bounded_time_then_cancels_what_is_left_and_refuses_new_work() -> None:
    async def scenario() -> None:
        tasks = TaskRegistry(FakeClock(), automatic=False)
        stuck = tasks.spawn("par", asyncio.Event().wait())
        await tasks.stop(within_s=0.01)
        assert stuck.cancelled()
        work = asyncio.Event().wait()
        with pytest.raises(RuntimeError):
            tasks.spawn("par", work)

    run(scenario)


def test_health_reports_each_job_its_runs_and_its_last_error() -> None:
    async def scenario() -> dict[str, tuple[str, int, int, str | None, bool]]:
        clock = FakeClock(start=2_000_000.0)
        tasks = TaskRegistry(clock, automatic=False)

        async def failing() -> None:
            raise ConnectionError("Redis gone")

        async def fine() -> None:
            clock.advance(0.5)

        tasks.every("sweep", 60.0, failing)
        for _ in range(2):
            tasks.spawn("par", fine())
        await tasks.run_due()
        with pytest.raises(ValueError, match="registered already"):
            tasks.every("sweep", 1.0, failing)
        report: dict[str, tuple[str, int, int, str | None, bool]] = {
            s.name: (s.kind, s.running, s.runs, s.last_error, s.last_finish_at is not None) for s in tasks.report()
        }
        await tasks.stop()
        return report

    assert run(scenario) == {
        "par": ("task", 0, 2, None, True),
        "sweep": ("periodic", 0, 1, "ConnectionError", True),
    }


def test_an_automatic_registry_runs_a_woken_job_at_once_and_stops_its_loop() -> None:
    async def scenario() -> int:
        tasks = TaskRegistry(FakeClock(), automatic=True)
        ran = asyncio.Event()
        wake = asyncio.Event()
        passes = 0

        async def job() -> None:
            nonlocal passes
            passes += 1
            ran.set()

        tasks.every("delivery", 3600.0, job, first_s=3600.0, wake=wake)
        tasks.start()
        wake.set()  # an outbox marked due: the loop runs the job without waiting out its hour
        await asyncio.wait_for(ran.wait(), 5)
        await tasks.stop()
        return passes

    assert run(scenario) == 1
