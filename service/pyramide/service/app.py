"""The application factory: all wiring in one place.

It wraps the app's ``asgi_handler`` again (what Litestar's ``__call__`` runs for each request; the CORS middleware is
its outer layer): litestar is pinned in pyproject.toml; tests/unit/service/test_pinned_internals.py fails when that
upstream code changes."""

from __future__ import annotations

import gc
import hmac
from collections.abc import Sequence
from typing import Any

from litestar import Litestar, Request, Router, get
from litestar.config.response_cache import ResponseCacheConfig
from litestar.handlers import HTTPRouteHandler
from litestar.middleware import DefineMiddleware
from litestar.openapi import OpenAPIConfig
from litestar.openapi.spec import Components, License, SecurityScheme
from litestar.response import Response
from litestar.types import ControllerRouterHandler
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

import pyramide
from pyramide.service.accounts.apps_controller import AppAdminController, AppController
from pyramide.service.accounts.audit_controller import AuditController
from pyramide.service.accounts.authentication import BearerAuthentication, bearer_token
from pyramide.service.accounts.moderation_controller import ModerationController
from pyramide.service.challenges.controller import ChallengeController
from pyramide.service.deals.controller import DealController
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.events import WEBHOOKS
from pyramide.service.events.controller import WebhookController
from pyramide.service.games.certificate_controller import CertificateController, signing_keys
from pyramide.service.games.controller import GameController
from pyramide.service.http.cors import cors_config, keep_vary
from pyramide.service.http.docs_page import docs_asset, docs_router, render_plugins
from pyramide.service.http.drain import DrainPlugin
from pyramide.service.http.durability import ConfirmWrites
from pyramide.service.http.full import WhileFull
from pyramide.service.http.health import HealthController
from pyramide.service.http.kept_answers import KeptAnswers
from pyramide.service.http.options import MethodAnswers
from pyramide.service.http.problem_pages import problem_page
from pyramide.service.http.problems import EXCEPTION_HANDLERS
from pyramide.service.http.web import play_file, play_page, root
from pyramide.service.infra.clock import Clock
from pyramide.service.infra.logs import RequestLog
from pyramide.service.infra.metrics import RequestMetrics, register_supervisor_metrics, scrape_registry
from pyramide.service.infra.settings import Settings
from pyramide.service.infra.tracing import instrument, start_tracing
from pyramide.service.players.account_controller import PlayerController
from pyramide.service.players.games_controller import MyGamesController
from pyramide.service.players.privacy_controller import PrivacyController
from pyramide.service.players.stats_controller import StatsController
from pyramide.service.services import Services, ServicesPlugin, confirms_writes
from pyramide.service.stats.leaderboard_controller import LeaderboardController
from pyramide.service.stats.review_controller import ReviewController

DESCRIPTION = """Pyramide solitaire as a REST/JSON game service: deal, play by moves or taps as in the app, undo, read
the record. Errors are `application/problem+json` with a stable `code` and text in the `Accept-Language` chosen
(Hungarian by default, or English)."""


GC_YOUNG_THRESHOLD = 20_000
ADMIN_CONTROLLERS: list[ControllerRouterHandler] = [
    AppAdminController,
    AuditController,
    ModerationController,
    ReviewController,
]
"""The routes under ``/v1/admin``: the operator's and the apps' (see ``accounts.authentication``)."""


def metrics_route(operator_key: str | None) -> HTTPRouteHandler:
    """``GET /metrics`` on the API's port, only with ``PYRAMIDE_METRICS_ON_API_PORT`` (the metrics' own port,
    ``PYRAMIDE_METRICS_PORT``, is the default) and for the operator alone: 401 without the operator key, 404 while
    none is set. Prometheus's text format: this process's metrics, or with `serve --workers N` every worker's."""

    @get("/metrics", include_in_schema=False, sync_to_thread=False)
    def scrape(request: Request[Any, Any, Any]) -> Response[bytes]:
        if operator_key is None:
            raise DomainError(ErrorCode.NOT_FOUND)
        token = bearer_token(request)
        if token is None or not hmac.compare_digest(token.encode(), operator_key.encode()):
            raise DomainError(ErrorCode.UNAUTHORIZED)
        return Response(generate_latest(scrape_registry()), headers={"Content-Type": CONTENT_TYPE_LATEST})

    return scrape


def create_app(
    settings: Settings | None = None,
    extra_route_handlers: Sequence[ControllerRouterHandler] = (),
    *,
    clock: Clock | None = None,
) -> Litestar:
    """The app; ``extra_route_handlers`` lets a benchmark add its baseline route to the very same server. ``clock``:
    the time every service reads (default: the settings' clock, :func:`~pyramide.service.services.clock_of`)."""
    settings = settings or Settings.from_env()
    traced = start_tracing()  # before the services: their scripts are traced or not as they load

    services = Services(settings, clock)
    confirming = (
        [DefineMiddleware(ConfirmWrites, redis=services.redis, must_confirm=services.must_confirm)]
        if confirms_writes(settings.durability, settings.embedded)
        else []
    )

    app = Litestar(
        route_handlers=[
            PlayerController,
            StatsController,
            GameController,
            MyGamesController,
            CertificateController,
            signing_keys,
            PrivacyController,
            LeaderboardController,
            ChallengeController,
            Router("/v1/admin", route_handlers=ADMIN_CONTROLLERS),
            AppController,
            WebhookController,
            DealController,
            HealthController,
            *([metrics_route(settings.secrets.operator_key)] if settings.metrics.on_api_port else []),
            docs_asset,
            problem_page,
            root,
            play_page,
            play_file,
            *extra_route_handlers,
        ],
        plugins=[ServicesPlugin(services), DrainPlugin(settings.http.drain_s)],
        exception_handlers=EXCEPTION_HANDLERS,  # type: ignore[arg-type]
        middleware=[
            RequestMetrics(app_name="pyramide").middleware,
            DefineMiddleware(
                BearerAuthentication,
                players=services.players,
                apps=services.apps,
                operator_key=settings.secrets.operator_key,
                app_players=services.app_players,
                allowance=services.move_allowance,
                limits=services.address_limits,
            ),
            *confirming,
            DefineMiddleware(WhileFull, reserve=services.reserve, disk_short=services.disk_short),
            # innermost: keeps what the handler answered, its writes inside WhileFull's reserve (http/kept_answers.py)
            DefineMiddleware(KeptAnswers, redis=services.redis, ttl_s=settings.retention.idempotency_ttl_s),
        ],
        openapi_config=OpenAPIConfig(
            title="Pyramide",
            version=pyramide.__version__,
            license=License(name="Apache-2.0", identifier="Apache-2.0"),
            description=DESCRIPTION,
            security=[{"bearerAuth": []}],
            components=Components(security_schemes={"bearerAuth": SecurityScheme(type="http", scheme="bearer")}),
            use_handler_docstrings=False,
            render_plugins=render_plugins(WEBHOOKS),
            openapi_router=docs_router(),
        ),
        response_cache_config=ResponseCacheConfig(),
        cors_config=cors_config(settings.http.cors_origins),
        logging_config=None,  # the service's JSON lines (`logs.configure_logging`), not Litestar's own format
        debug=False,
    )
    logged = RequestLog(settings.logs, traced=traced).wrap(MethodAnswers(app, keep_vary(app.asgi_handler)))
    app.asgi_handler = instrument(logged) if traced else logged
    register_supervisor_metrics(settings.embedded.supervisor_state)
    tune_garbage_collector()
    return app


def tune_garbage_collector() -> None:
    """Keep full collections short and rare: everything alive after start-up (the framework, the schemas) is moved
    out of the collector's sight, and young collections run less often. Without this, a full collection over the
    whole heap every few hundred requests costs tens of milliseconds: the p99 latency."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 20, 20)
