"""Liveness and readiness."""

from __future__ import annotations

from litestar import Controller, get

from pyramide.service.controllers.docs import problems
from pyramide.service.requests import AnyRequest
from pyramide.service.schemas import Health


class HealthController(Controller):
    path = "/health"
    tags = ["health"]

    @get("/live", operation_id="getLiveness", summary="The process answers")
    async def live(self) -> Health:
        return Health(status="ok")

    @get("/ready", operation_id="getReadiness", summary="Redis answers too", responses=problems())
    async def ready(self, request: AnyRequest) -> Health:
        await request.app.state.redis.ping()
        return Health(status="ok")
