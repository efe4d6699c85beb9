"""Deals' and statistics' objects: the solver and the pars it finds; statistics, leaderboards and reviews."""

from __future__ import annotations

from dataclasses import dataclass

from pyramide.service.deals import ParBook, Solver
from pyramide.service.infra.clock import Clock
from pyramide.service.infra.meters import process_meters
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.settings import Settings
from pyramide.service.infra.tasks import TaskRegistry
from pyramide.service.stats import Leaderboards, Reviews, StatsStore


@dataclass(slots=True)
class Deals:
    solver: Solver
    pars: ParBook

    @classmethod
    def start(cls, settings: Settings, redis: RedisClient, tasks: TaskRegistry) -> Deals:
        solver = Solver(
            settings.solver.workers,
            settings.solver.time_limit_s,
            settings.solver.queue,
            redis=redis,
            tasks=tasks,
            meters=process_meters(),
        )
        return cls(solver=solver, pars=ParBook(redis, solver, settings.retention.analysis_ttl_s, tasks))

    def stop(self) -> None:
        self.pars.close()
        self.solver.close()


@dataclass(slots=True)
class Stats:
    stats: StatsStore
    leaderboards: Leaderboards
    reviews: Reviews

    @classmethod
    def start(cls, settings: Settings, redis: RedisClient, clock: Clock) -> Stats:
        return cls(
            stats=StatsStore(redis, clock=clock),
            leaderboards=Leaderboards(redis, clock=clock),
            reviews=Reviews(redis, settings.challenges.min_move_ms, clock=clock),
        )
