"""Liveness and readiness."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Protocol

from litestar import Controller, get

from pyramide.service.http.drain import draining
from pyramide.service.http.injection import Injected
from pyramide.service.http.problems import HttpCode, ProblemError
from pyramide.service.http.responses import problems
from pyramide.service.http.schemas import Health, JobHealth, Readiness
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.settings import EmbeddedRedis
from pyramide.service.infra.supervisor import SupervisorState
from pyramide.service.infra.tasks import JobState, TaskRegistry


class SolverHealth(Protocol):
    """What readiness asks of the solver (``deals.Solver``; named here so that HTTP plumbing imports no domain)."""

    def ready(self) -> bool:
        """False while the solver's pool is broken and not yet replaced by one with a worker up."""
        ...


class HealthController(Controller):
    path = "/health"
    tags = ["health"]

    @get(
        "/live",
        operation_id="getLiveness",
        summary="The process answers, and its embedded Redis is running or can still be brought back",
        description="503 once the embedded Redis could not be restarted after the configured number of tries:"
        " an orchestrator should then restart the service.",
        responses=problems(503, redis=False),
        exclude_from_auth=True,
    )
    async def live(self, embedded: Injected[EmbeddedRedis]) -> Health:
        if SupervisorState.read(embedded.supervisor_state).failed:
            raise ProblemError(503, HttpCode.SERVICE_UNAVAILABLE, headers={"Retry-After": "1"})
        return Health(status="ok")

    @get(
        "/ready",
        operation_id="getReadiness",
        summary="Redis answers too, and the solver's worker pool is whole; the process's background jobs",
        description="503 while Redis does not answer, and while a solver worker of the answering process has died"
        " and its pool is not yet replaced by one with a worker up (about half a second). 503 `draining` from the"
        " moment the process gets SIGTERM until it stops (`PYRAMIDE_DRAIN_S`): it still serves, but a load balancer"
        " should send new requests elsewhere.",
        responses=problems(),
        exclude_from_auth=True,
    )
    async def ready(
        self, redis: Injected[RedisClient], solver: Injected[SolverHealth], tasks: Injected[TaskRegistry]
    ) -> Readiness:
        if draining(asyncio.get_running_loop()):
            raise ProblemError(503, HttpCode.DRAINING, headers={"Retry-After": "1"})
        await redis.ping()
        if not solver.ready():
            raise ProblemError(503, HttpCode.SERVICE_UNAVAILABLE, headers={"Retry-After": "1"})
        return Readiness(status="ok", jobs=[_job(state) for state in tasks.report()])


def _job(state: JobState) -> JobHealth:
    def at(seconds: float | None) -> datetime | None:
        return None if seconds is None else datetime.fromtimestamp(seconds, UTC)

    return JobHealth(
        name=state.name,
        kind=state.kind,
        running=state.running,
        runs=state.runs,
        last_run_at=at(state.last_run_at),
        last_finish_at=at(state.last_finish_at),
        last_error=state.last_error,
    )
