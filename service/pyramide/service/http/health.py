"""Liveness and readiness."""

from __future__ import annotations

from litestar import Controller, get

from pyramide.service.http.problems import ServiceError
from pyramide.service.http.requests import AnyRequest
from pyramide.service.http.responses import problems
from pyramide.service.http.schemas import Health
from pyramide.service.infra.settings import Settings
from pyramide.service.infra.supervisor import SupervisorState


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
    )
    async def live(self, request: AnyRequest) -> Health:
        settings: Settings = request.app.state.settings
        if SupervisorState.read(settings.supervisor_state).failed:
            raise ServiceError(503, "service_unavailable", headers={"Retry-After": "1"})
        return Health(status="ok")

    @get("/ready", operation_id="getReadiness", summary="Redis answers too", responses=problems())
    async def ready(self, request: AnyRequest) -> Health:
        await request.app.state.redis.ping()
        return Health(status="ok")
