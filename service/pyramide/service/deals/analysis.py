"""Solving off the event loop, with bounded capacity: the solver runs in a pool of worker processes with a position
budget and a time limit; an answer that did not come in time is "unknown", never a guess.

Capacity is bounded and shared fairly. ``workers`` processes run searches, and one more runs only players' searches
(hints, winnable-only deals), so a flood of public analyses never makes a player wait behind them. At most ``queue``
more searches wait for a worker, players' ahead of public deal analyses; a player arriving at a full queue takes the
place of the public analysis that came last. Past that a request is refused at once with 503 ``solver_busy`` and
``Retry-After`` instead of waiting out the time limit. The time limit counts from when a worker takes the search, not
from the queue. A player has at most one search at a time, across every process (a Redis key with the search's time
to live): a second is 429 ``solver_in_progress``. Deal analyses are cached in Redis per code (the code names the
rules too) and per budget, whether decided or out of time, so a repeat costs nothing.

A worker that dies (killed, out of memory) breaks the whole pool: Python's pool then fails every search, for ever. So
a broken pool is replaced by a new one, once, by whoever notices first: a search whose worker died under it (503
``solver_busy``, never retried: the search itself may be what killed it), a search about to start (it waits for the
new pool instead), or a watch every half second that notices a worker dying while the pool is idle. From the break
until the new pool's first worker is up, :meth:`Solver.ready` is false, so readiness tells the truth.
"""

from __future__ import annotations

import asyncio
import enum
import heapq
import itertools
import json
import logging
import math
import multiprocessing
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import asynccontextmanager
from typing import Any, Final
from uuid import UUID

from pyramide.engine import DealCode, Game, dump_game
from pyramide.service.deals.schemas import Analysis, DealAnalysis
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra import keyspace, tracing
from pyramide.service.infra.lifecycle import die_with_parent
from pyramide.service.infra.meters import Meters, process_meters
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.tasks import TaskRegistry
from pyramide.solver.foresight import screen_win
from pyramide.solver.review import review_record
from pyramide.solver.worker import analyse_state, started

HINT_BUDGET: Final = 300_000
TIME_LIMIT_S: Final = 5.0
WINNABLE_ONLY_ATTEMPTS: Final = 30
WORKER_GRACE_S: Final = 2.0  # a worker stops itself at the limit; this is for starting one
WATCH_INTERVAL_S: Final = 0.5  # how often an idle pool is checked for a dead worker

log = logging.getLogger("pyramide.service")


class Priority(enum.IntEnum):
    """Lower goes first: a player waiting on a game before anyone analysing a deal."""

    PLAYER = 0
    PUBLIC = 1
    SCREEN = 2  # a challenge win's screening, off the request path: its player waits for the board, not the answer
    BACKGROUND = 3  # a deal's par, worked out off the request path: after every public analysis waiting


SEARCH_KINDS: Final = {
    Priority.PLAYER: "hint",
    Priority.PUBLIC: "analysis",
    Priority.SCREEN: "screen",
    Priority.BACKGROUND: "par",
}
"""The ``kind`` label of ``pyramide_solver_search_seconds`` for a search of each priority (a review: ``review``)."""


def _broken(pool: ProcessPoolExecutor) -> bool:
    """Whether a worker of ``pool`` died: the pool's own thread then marks it broken and ends its other workers (and
    reaps them all), after which it refuses every search. Python offers no public way to ask (the attribute is
    checked by tests/unit/service/test_pinned_internals.py)."""
    return bool(pool._broken)


def unknown(time_limit_s: float = TIME_LIMIT_S) -> dict[str, Any]:
    """A search that did not answer in time, as a worker's answer would say it."""
    return {"winnable": None, "max_removable": None, "line": [], "states": 0, "elapsed_ms": time_limit_s * 1000}


class Solver:
    """A pool of worker processes, started on first use, behind a bounded priority queue: ``workers`` processes for
    every search and one more that only players' searches use, so that public analyses, however many, never make a
    player wait behind them for a worker."""

    def __init__(
        self,
        workers: int = 1,
        time_limit_s: float = TIME_LIMIT_S,
        queue: int = 8,
        redis: RedisClient | None = None,
        tasks: TaskRegistry | None = None,
        *,
        meters: Meters | None = None,
    ) -> None:
        """``time_limit_s`` per analysis (``PYRAMIDE_SOLVER_TIME_LIMIT_S``); ``queue`` searches may wait. With
        ``tasks`` (the app's), an idle pool is watched for a dead worker; without, a search notices it. ``meters``:
        the searches waiting and each search's time (the process's by default)."""
        self.workers = max(1, workers)
        self.meters = meters or process_meters()
        self.time_limit_s = time_limit_s
        self.queue = max(0, queue)
        self.redis = redis
        self._pool: ProcessPoolExecutor | None = None
        self._running = dict.fromkeys(Priority, 0)
        self._waiting: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._starting: asyncio.Future[bool] | None = None
        self._broken_at: float | None = None
        if tasks is not None:
            tasks.every("solver idle watch", WATCH_INTERVAL_S, self._watch_idle, first_s=WATCH_INTERVAL_S)

    def ready(self) -> bool:
        """False from a worker's death until the pool that replaces it has a worker up; true before first use."""
        return self._broken_at is None and (self._pool is None or not _broken(self._pool))

    async def _ready_pool(self) -> ProcessPoolExecutor:
        """The pool with a worker up: started on first use, replaced first if broken; waiting, with no time limit
        (starting a worker process is not solving), for the one start every waiting search shares. 503
        ``solver_busy`` if the new pool broke as it started."""
        pool = self._pool
        if pool is None or _broken(pool):
            pool = self._replace(pool)
        assert self._starting is not None
        try:
            await asyncio.shield(self._starting)
        except BrokenProcessPool:
            raise self.busy() from None
        return pool

    def _replace(self, broken: ProcessPoolExecutor | None) -> ProcessPoolExecutor:
        """A new pool in place of ``broken`` (``None`` on first use), unless another search replaced it already:
        one new pool per break, however many searches noticed it."""
        if self._pool is not broken and self._pool is not None:
            return self._pool
        if broken is not None:
            if self._broken_at is None:
                self._broken_at = time.perf_counter()  # the pool's restart, measured: not the service's time
            log.warning("a solver worker died; replacing the solver pool")
            broken.shutdown(wait=False, cancel_futures=True)  # its own thread has ended and reaped its workers
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(self.workers + 1, mp_context=context, initializer=die_with_parent)
        self._pool = pool
        loop = asyncio.get_running_loop()
        self._starting = loop.run_in_executor(pool, started)
        self._starting.add_done_callback(lambda start: self._on_started(pool, start))
        return pool

    def _on_started(self, pool: ProcessPoolExecutor, start: asyncio.Future[bool]) -> None:
        """The pool's first worker is up (the solver is whole again), or the pool broke as it started."""
        if start.cancelled() or start.exception() is not None or pool is not self._pool:
            return
        if self._broken_at is not None:
            log.warning("solver pool replaced in %.0f ms", (time.perf_counter() - self._broken_at) * 1000)
            self._broken_at = None

    async def _watch_idle(self) -> None:
        """Replace a pool that broke while no search was running, so that the solver is whole again (and readiness
        says so) without waiting for a search to notice: a periodic job, every ``WATCH_INTERVAL_S``."""
        pool = self._pool
        if pool is not None and _broken(pool):
            self._replace(pool)

    def busy(self) -> DomainError:
        return DomainError(ErrorCode.SOLVER_BUSY, retry_after_s=max(1, math.ceil(self.time_limit_s)))

    def _free(self, priority: Priority) -> bool:
        """Whether a search of ``priority`` may start now: public and background ones on the shared workers only."""
        running = sum(self._running.values())
        if priority is not Priority.PLAYER:
            return running < self.workers + 1 and running - self._running[Priority.PLAYER] < self.workers
        return running < self.workers + 1

    async def _acquire(self, priority: Priority) -> None:
        """A worker for this search: at once if one is free, else a place in the queue, else 503."""
        if self._free(priority) and not any(p <= priority for p, _, _ in self._waiting):
            self._running[priority] += 1
            return
        if len(self._waiting) >= self.queue and not self._make_room(priority):
            raise self.busy()
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (int(priority), next(self._order), turn)
        heapq.heappush(self._waiting, entry)
        self.meters.solver_waiting.set(len(self._waiting))
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled() and turn.exception() is None:
                self._release(priority)  # the worker was handed over just as the request went away
            elif entry in self._waiting:
                self._waiting.remove(entry)
                heapq.heapify(self._waiting)
                self.meters.solver_waiting.set(len(self._waiting))
            raise

    def _make_room(self, priority: Priority) -> bool:
        """A full queue takes a player's search all the same by refusing the public analysis that came last."""
        if priority is not Priority.PLAYER:
            return False
        public = [entry for entry in self._waiting if entry[0] != Priority.PLAYER and not entry[2].done()]
        if not public:
            return False
        last = max(public, key=lambda entry: entry[1])
        self._waiting.remove(last)
        heapq.heapify(self._waiting)
        self.meters.solver_waiting.set(len(self._waiting))
        last[2].set_exception(self.busy())
        return True

    def _release(self, priority: Priority) -> None:
        """A search of ``priority`` is done: its worker goes to the first waiting search that may have it."""
        self._running[priority] -= 1
        for entry in sorted(self._waiting):
            waiting_priority, _, turn = entry
            if turn.done():
                self._waiting.remove(entry)
                continue
            if self._free(Priority(waiting_priority)):
                self._waiting.remove(entry)
                self._running[Priority(waiting_priority)] += 1
                turn.set_result(None)
                break
        heapq.heapify(self._waiting)
        self.meters.solver_waiting.set(len(self._waiting))

    async def analyse(self, game: Game, budget: int = HINT_BUDGET, *, priority: Priority = Priority.PLAYER) -> Analysis:
        """What the solver proves about ``game`` within the budget and the time limit, for a player (or, with
        ``Priority.PUBLIC``, for work that nobody waits on)."""
        return Analysis.model_validate(await self._answer(game, budget, priority, shortest=False))

    async def _answer(self, game: Game, budget: int, priority: Priority, *, shortest: bool) -> dict[str, Any]:
        """The worker's answer, as the JSON it sends (:func:`pyramide.solver.worker.analyse_state`)."""
        await self._acquire(priority)
        try:
            answer = await self._search(
                SEARCH_KINDS[priority], analyse_state, dump_game(game), budget, self.time_limit_s, shortest
            )
        finally:
            self._release(priority)
        return unknown(self.time_limit_s) if answer is None else answer

    async def review(self, player: UUID, code: DealCode, record: list[str]) -> dict[str, Any] | None:
        """The review of a game played as ``record`` from ``code`` (:func:`pyramide.solver.review.review_record`),
        for its player: one search at a time per player (429 ``solver_in_progress``), queued as a player's search,
        all its positions within one time limit; ``None`` (a timed-out answer) when the worker did not answer."""
        async with self._one_per_player(player):
            await self._acquire(Priority.PLAYER)
            try:
                return await self._search("review", review_record, str(code), record, HINT_BUDGET, self.time_limit_s)
            finally:
                self._release(Priority.PLAYER)

    async def screen(
        self,
        code: str,
        record: list[str],
        elapsed_ms: int,
        *,
        line_move_ms: int,
        worlds: int,
        seed: int,
        limit_s: float,
    ) -> dict[str, Any] | None:
        """The screening of a challenge win played as ``record`` from ``code`` in ``elapsed_ms``
        (:func:`pyramide.solver.foresight.screen_win`), off the request path: queued after every public analysis
        (503 ``solver_busy`` on a full queue), within ``limit_s`` of its own; ``None`` when the worker did not
        answer in time."""
        await self._acquire(Priority.SCREEN)
        try:
            args = (code, record, elapsed_ms, line_move_ms, worlds, seed, limit_s)
            return await self._search(SEARCH_KINDS[Priority.SCREEN], screen_win, *args, limit_s=limit_s)
        finally:
            self._release(Priority.SCREEN)

    async def _search(
        self, kind: str, job: Callable[..., dict[str, Any]], *args: object, limit_s: float | None = None
    ) -> dict[str, Any] | None:
        """One search on a worker: its answer, ``None`` if it did not answer within ``limit_s`` (the solver's time
        limit by default), 503 ``solver_busy`` if its worker died; its time (from the worker's start) observed under
        ``kind``. A span ``solver <job>`` while tracing is on (the wait on the pool and the search)."""
        with tracing.span(f"solver {job.__name__}"):
            return await self._searched(kind, job, args, self.time_limit_s if limit_s is None else limit_s)

    async def _searched(
        self, kind: str, job: Callable[..., dict[str, Any]], args: tuple[object, ...], limit_s: float
    ) -> dict[str, Any] | None:
        loop = asyncio.get_running_loop()
        for _ in range(2):  # once more if a worker died since the pool was checked: the search never started
            pool = await self._ready_pool()
            try:
                future = loop.run_in_executor(pool, job, *args)
                break
            except BrokenProcessPool:
                continue
        else:
            raise self.busy()
        started = time.perf_counter()
        try:
            return await asyncio.wait_for(future, limit_s + WORKER_GRACE_S)
        except TimeoutError:
            return None
        except BrokenProcessPool:
            self._replace(pool)
            raise self.busy() from None
        finally:
            self.meters.solver_seconds.labels(kind).observe(time.perf_counter() - started)

    async def for_player(self, player: UUID, game: Game, budget: int = HINT_BUDGET) -> Analysis:
        """A search for a player: one at a time per player across every process (429 ``solver_in_progress``)."""
        async with self._one_per_player(player):
            return await self.analyse(game, budget)

    @asynccontextmanager
    async def _one_per_player(self, player: UUID) -> AsyncIterator[None]:
        """Holds the player's one search (a Redis key with the search's time to live, across every process);
        429 ``solver_in_progress`` while another runs."""
        if self.redis is None:
            yield
            return
        key = keyspace.solving(player)
        ttl_ms = int((self.time_limit_s + WORKER_GRACE_S) * 1000)
        if not await self.redis.set(key, "1", nx=True, px=ttl_ms):
            raise DomainError(ErrorCode.SOLVER_IN_PROGRESS, retry_after_s=1)
        try:
            yield
        finally:
            await self.redis.delete(key)

    async def analyse_deal(
        self,
        redis: RedisClient,
        code: DealCode,
        ttl_s: int,
        *,
        shortest: bool = False,
        priority: Priority = Priority.PUBLIC,
    ) -> DealAnalysis:
        """A fresh deal's analysis (with ``shortest``, a shortest winning line too), from the cache when it was
        analysed before the same way with this budget and time limit."""
        kind = ":shortest" if shortest else ""
        key = keyspace.analysis(str(code), HINT_BUDGET, round(self.time_limit_s * 1000), kind)
        cached = await redis.get(key)
        if cached is not None:
            answer: dict[str, Any] = json.loads(cached)
        else:
            answer = await self._answer(Game(code), HINT_BUDGET, priority, shortest=shortest)
            await redis.set(key, json.dumps(answer), ex=ttl_s)
        return DealAnalysis.model_validate({**answer, "code": str(code)})

    def close(self) -> None:
        """Stop the workers, without waiting for a search: a worker left waiting on the pool's queue (as one was
        seen to, after all tests had passed) held the interpreter's exit, which joins every pool, for ever."""
        if self._pool is not None:
            workers = list((self._pool._processes or {}).values())  # shutdown() lets go of them
            self._pool.shutdown(wait=False, cancel_futures=True)
            for worker in workers:
                worker.terminate()
            self._pool = None
            self._starting = None
