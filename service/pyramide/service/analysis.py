"""Solving off the event loop: the solver runs in worker processes with a position budget and a time limit; an
answer that did not come in time is "unknown", never a guess. Deal analyses are cached in Redis per code (the code
names the rules too), since a deal's answer never changes."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Final

from pyramide.engine import DealCode, Game, dump_game, load_game
from pyramide.service.store import Redis
from pyramide.solver import solve

HINT_BUDGET: Final = 300_000
TIME_LIMIT_S: Final = 5.0
WINNABLE_ONLY_ATTEMPTS: Final = 30
WORKER_GRACE_S: Final = 2.0  # a worker stops itself at the limit; this is for starting one and the queue


def _analyse(state: bytes, budget: int, time_limit_s: float) -> dict[str, Any]:
    """In a worker process: the analysis of a stored game state, stopping by itself at the time limit."""
    return solve(load_game(state), budget=budget, time_limit_s=time_limit_s).to_json()


def unknown() -> dict[str, Any]:
    return {"winnable": None, "max_removable": None, "line": [], "states": 0, "elapsed_ms": TIME_LIMIT_S * 1000}


class Solver:
    """A small pool of worker processes, started on first use."""

    def __init__(self, workers: int = 1, time_limit_s: float = TIME_LIMIT_S) -> None:
        """``time_limit_s`` per analysis (``PYRAMIDE_SOLVER_TIME_LIMIT_S``)."""
        self.workers = workers
        self.time_limit_s = time_limit_s
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    async def analyse(self, game: Game, budget: int = HINT_BUDGET) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor(), _analyse, dump_game(game), budget, self.time_limit_s)
        try:
            return await asyncio.wait_for(future, self.time_limit_s + WORKER_GRACE_S)
        except TimeoutError:
            return unknown()

    async def analyse_deal(self, redis: Redis, code: DealCode) -> dict[str, Any]:
        """A fresh deal's analysis, from the cache when it was decided before."""
        key = f"pyr:{{analysis:{code}}}"
        cached = await redis.get(key)
        if cached is not None:
            result: dict[str, Any] = json.loads(cached)
            return result
        result = await self.analyse(Game(code))
        if result["winnable"] is not None:
            await redis.set(key, json.dumps(result))
        return result

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
