"""A deal's par: the number of moves (removals, draws and turn-overs) of its shortest winning line under its rules.

Worked out off the request path, and only where someone may see it (``docs/par.md``): a read that shows a par (the
deal, its board, a finished game's snapshot or record, the player's statistics, a closed challenge) starts it when
nobody has, and so does dealing a chosen deal (a pasted code or a layout), whose code is shared; a random deal dealt
and played gets none until then. A background task asks the solver pool for the shortest line at the lowest
priority (after every player's search and every public analysis waiting), and keeps the answer per code in Redis
(the code names the rules too), where a claim (``SET NX``) lets one process of many work it out. Until then the par
is ``pending``; a deal that cannot be won is ``unwinnable``, one the solver did not decide within its budget and
time limit ``unknown``: the par is then null, never a guess. At most ``in_flight`` pars are worked out at once per
process, so a client reading many codes cannot fill the solver's queue: a deal seen while that many run waits in a
backlog of at most ``BACKLOG`` codes of each kind (past that it stays ``pending`` and is queued again when next
read), the deals of finished games (whose player waits for the par in the game's snapshot and statistics) before
those merely read.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from redis.exceptions import RedisError, ResponseError

from pyramide.engine import DealCode
from pyramide.service.deals.analysis import Priority, Solver
from pyramide.service.deals.schemas import DealAnalysis
from pyramide.service.errors import DomainError
from pyramide.service.infra import keyspace
from pyramide.service.infra.redis import RedisClient, raw, storage_full
from pyramide.service.infra.tasks import TaskRegistry

PENDING_TTL_S: Final = 60  # a claim on working a par out, should its process die before it answers
BACKLOG: Final = 100
"""Deals waiting for a par to be worked out in one process, of each kind (finished games', and read ones): about 20 s
of one worker at the mean par's 0.2 s. A deal past it is dropped, not a reader's later deal: every route that
shows the par queues it again when read, so a reader still looking gets it, and a burst nobody reads again leaves
no minutes of searches behind it (issue 58)."""

log = logging.getLogger("pyramide.service")


class ParStatus(enum.StrEnum):
    KNOWN = "known"
    UNWINNABLE = "unwinnable"
    UNKNOWN = "unknown"
    PENDING = "pending"


@dataclass(frozen=True, slots=True)
class Par:
    """A deal's par (``None`` unless ``status`` is ``known``) and why."""

    moves: int | None
    status: ParStatus


PENDING: Final = Par(None, ParStatus.PENDING)

Saved = Callable[[DealCode, "Par"], Awaitable[None]]
"""Told each par this process saves (the boards that show it bump their live streams)."""


def par_of(analysis: DealAnalysis) -> Par:
    """The par a shortest-line analysis proves: the length of its line, lost, or unknown within the budget."""
    if analysis.winnable is False:
        return Par(None, ParStatus.UNWINNABLE)
    if analysis.winnable and analysis.shortest is not None:
        return Par(len(analysis.shortest), ParStatus.KNOWN)
    return Par(None, ParStatus.UNKNOWN)


class ParBook:
    """Pars kept per code in Redis, each worked out once by a background task through the solver pool."""

    def __init__(self, redis: RedisClient, solver: Solver, ttl_s: int, tasks: TaskRegistry, in_flight: int = 1) -> None:
        self.redis, self.solver, self.ttl_s, self.in_flight = redis, solver, ttl_s, in_flight
        self.tasks = tasks
        self._tasks: set[asyncio.Task[None]] = set()
        self._finished: dict[str, DealCode] = {}
        self._read: dict[str, DealCode] = {}
        self._closed = False
        self._saved: list[Saved] = []

    def on_saved(self, told: Saved) -> None:
        """Tell ``told`` each par this process saves, right after it is saved."""
        self._saved.append(told)

    async def _kept(self, code: DealCode) -> Par | None:
        """The deal's par as kept in Redis (a claim reads ``pending``), or None."""
        kept = raw(await self.redis.get(keyspace.par(str(code))))
        if kept is None:
            return None
        answer = json.loads(kept)
        return Par(answer["par"], ParStatus(answer["status"]))

    async def known(self, code: DealCode) -> Par:
        """The deal's par as known now, without starting to work it out (``pending`` when nobody has)."""
        return await self._kept(code) or PENDING

    async def par(self, code: DealCode, *, finished: bool = False) -> Par:
        """The deal's par as known now; starts working it out when nobody has (for a ``finished`` game's reader
        before anyone merely reading the deal)."""
        kept = await self._kept(code)
        if kept is not None:
            return kept
        await self.see(code, finished=finished)
        return PENDING

    async def see(self, code: DealCode, *, finished: bool = False) -> None:
        """A deal was seen (in a game that ``finished``, or read): work its par out in the background unless it is
        known or being worked out; while ``in_flight`` run, it waits its turn in the backlog."""
        if len(self._tasks) < self.in_flight:
            self._launch(code)
            return
        name = str(code)
        if name in self._finished:
            return  # once per code in the backlog
        waiting = self._finished if finished else self._read
        if len(waiting) < BACKLOG:
            waiting.setdefault(name, code)
            if finished:
                self._read.pop(name, None)  # moved up to the finished games'

    def _launch(self, code: DealCode) -> None:
        task = self.tasks.spawn("par", self._claim(code))
        self._tasks.add(task)
        task.add_done_callback(self._next)

    def _next(self, task: asyncio.Task[None]) -> None:
        """A par was worked out (or let go): the next deal waiting, finished games' first."""
        self._tasks.discard(task)
        if self._closed:
            return
        for waiting in (self._finished, self._read):
            if waiting:
                self._launch(waiting.pop(next(iter(waiting))))
                return

    async def _claim(self, code: DealCode) -> None:
        """Work the par out unless another process claimed it or it is known (the claim is ``SET NX``)."""
        try:
            claimed = await self.redis.set(keyspace.par(str(code)), _dump(PENDING), nx=True, ex=PENDING_TTL_S)
        except ResponseError as error:
            if not storage_full(error):
                log.exception("claiming the par of %s failed", code)
            return  # a full Redis keeps the deal readable: its par stays pending until there is room
        except RedisError:
            log.warning("claiming the par of %s failed: Redis unavailable", code)
            return
        if claimed:
            await self._work_out(code)

    async def _work_out(self, code: DealCode) -> None:
        """Ask the solver and keep its answer; on a full solver, let go of the claim so the next sight retries."""
        key = keyspace.par(str(code))
        try:
            analysis = await self.solver.analyse_deal(
                self.redis, code, self.ttl_s, shortest=True, priority=Priority.BACKGROUND
            )
        except asyncio.CancelledError:  # the process stops (:meth:`close`): the next process that sees it starts over
            await self.redis.delete(key)
            raise
        except DomainError:
            await self.redis.delete(key)
            return
        except Exception:
            log.exception("working out the par of %s failed", code)
            await self.redis.delete(key)
            return
        par = par_of(analysis)
        try:
            await self.redis.set(key, _dump(par), ex=self.ttl_s)
        except ResponseError as error:
            if not storage_full(error):
                raise
            log.warning("the par of %s could not be kept: Redis is full", code)
            return
        for told in self._saved:  # a separate step (other slots): a death before it is left to the boards' reads
            try:
                await told(code, par)
            except Exception as error:
                log.warning("the boards showing the par of %s were not told (%s)", code, type(error).__name__)

    def close(self) -> None:
        """Abandon the pars being worked out, releasing their claims: a par costs only solver time to work out
        again, so a stopping process does not wait for one (its grace is for webhook deliveries)."""
        self._closed = True
        for task in list(self._tasks):
            task.cancel()


def par_shown(par: Par) -> str:
    """What a board shows of ``par`` (a board's state besides its entries, see ``Leaderboards.touch``)."""
    return _dump(par)


def _dump(par: Par) -> str:
    return json.dumps({"par": par.moves, "status": str(par.status)})
