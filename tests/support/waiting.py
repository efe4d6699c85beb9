"""How a test waits: for the app's background work through its task registry (:func:`drain`, :func:`run_due`,
:func:`run_job`), and for anything else through the one polling helper, :func:`eventually`. No test sleeps to wait."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis
from litestar import Litestar
from litestar.testing import TestClient

from pyramide.service.infra.tasks import TaskRegistry
from pyramide.service.services import ServicesPlugin

T = TypeVar("T")

POLL_S = 0.01
"""How often :func:`eventually` asks again."""


def eventually(condition: Callable[[], T], timeout_s: float = 10.0, what: str = "the condition") -> T:
    """Asks ``condition`` until it answers something true (returned) within ``timeout_s``; an ``AssertionError``
    it raises counts as "not yet" (the last one is raised again at the timeout)."""
    deadline = time.monotonic() + timeout_s
    while True:
        failure: AssertionError | None = None
        try:
            answer = condition()
        except AssertionError as error:
            failure = error
        else:
            if answer:
                return answer
        if time.monotonic() >= deadline:
            if failure is not None:
                raise failure
            raise AssertionError(f"{what} did not come within {timeout_s} s (last: {answer!r})")
        time.sleep(POLL_S)  # the one wait of the test suite's polls


def redis_clock_past(client: redis.Redis, ms: int, timeout_s: float = 10.0) -> None:
    """Waits until Redis's own clock (``TIME``, in whole ms as the scripts read it) is past ``ms``: for a script
    that tells "this ms" from "a later one" by that clock, which no fake clock moves."""

    def now_ms() -> int:
        seconds, micros = client.time()
        return int(seconds) * 1000 + int(micros) // 1000

    eventually(lambda: now_ms() > ms, timeout_s, f"Redis's clock past {ms} ms")


def tasks_of(target: TestClient[Any] | Litestar) -> TaskRegistry:
    """The task registry of a running app (in-process: a ``TestClient``'s, or one served in a thread)."""
    app = target.app if isinstance(target, TestClient) else target
    return app.plugins.get(ServicesPlugin).services.tasks


def _on_loop(
    target: TestClient[Any] | Litestar, work: Callable[[TaskRegistry], Awaitable[None]], timeout_s: float
) -> None:
    tasks = tasks_of(target)
    if tasks.loop is None:
        raise RuntimeError("the app is not started")

    async def bounded() -> None:
        async with asyncio.timeout(timeout_s):
            await work(tasks)

    asyncio.run_coroutine_threadsafe(bounded(), tasks.loop).result()


def drain(target: TestClient[Any] | Litestar, timeout_s: float = 30.0) -> None:
    """Waits until the app's tracked background tasks (pars, deliveries, choices, …) are all done."""
    _on_loop(target, lambda tasks: tasks.drain(), timeout_s)


def run_due(target: TestClient[Any] | Litestar, timeout_s: float = 30.0) -> None:
    """Runs every periodic job of the app that is due (or woken: an outbox marked due), then drains."""
    _on_loop(target, lambda tasks: tasks.run_due(), timeout_s)


def run_job(target: TestClient[Any] | Litestar, name: str, timeout_s: float = 30.0) -> None:
    """Runs the app's periodic job ``name`` once now, whether due or not, then drains."""
    _on_loop(target, lambda tasks: tasks.run(name), timeout_s)


async def yield_to_tasks() -> None:
    """One turn of the event loop: every task ready to run goes on until it waits (no time passes)."""
    await asyncio.sleep(0)
