"""OpenTelemetry traces, off unless an operator configures an exporter with the standard ``OTEL_*`` variables.

``OTEL_TRACES_EXPORTER`` names the exporters (``console``: spans as JSON on standard output, one a line; ``otlp`` or
``otlp_proto_http``: OTLP over HTTP to ``OTEL_EXPORTER_OTLP_ENDPOINT``); without it, an OTLP endpoint alone turns
``otlp`` on. Unset (or ``none``), nothing is installed: no tracer provider, no middleware, no span around a script
call, so the move route pays nothing. Everything else is the SDK's own reading of the standard variables: the service
name and resource (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``), the sampler (``OTEL_TRACES_SAMPLER``), the
batching (``OTEL_BSP_*``), the exporter's endpoint, headers and timeout. An incoming ``traceparent`` joins the
caller's trace (the W3C propagator, the SDK's default, ``OTEL_PROPAGATORS``).

Each process starts its own provider (a worker after its fork: the batching thread does not survive one)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, Final

from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryInstrumentationMiddleware
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from opentelemetry import trace
from opentelemetry.sdk.environment_variables import OTEL_SERVICE_NAME
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer

NAME: Final = "pyramide"
"""The instrumentation scope of the service's own spans, and the service name when ``OTEL_SERVICE_NAME`` is unset."""
_ALIASES: Final = {"otlp": "otlp_proto_http"}
_state: dict[str, Any] = {}


def exporter_names(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The span exporters ``environ`` asks for (empty: tracing is off)."""
    named = environ.get("OTEL_TRACES_EXPORTER", "").strip()
    if not named and (environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")):
        named = "otlp"
    names = [_ALIASES.get(n.strip(), n.strip()) for n in named.split(",") if n.strip()]
    return [] if names == ["none"] else [n for n in names if n != "none"]


def start_tracing() -> bool:
    """Installs the tracer provider and exporters the environment asks for, once per process; whether tracing is
    on. An unknown exporter name is a ``ValueError`` (``pyramide serve`` refuses it before starting)."""
    if "pid" in _state and _state["pid"] == os.getpid():
        return _state["tracer"] is not None
    names = exporter_names()
    _state.update(pid=os.getpid(), tracer=None, provider=None)
    if not names:
        return False
    defaults = {} if os.environ.get(OTEL_SERVICE_NAME) else {"service.name": NAME}
    provider = TracerProvider(resource=Resource.create(defaults))
    for name in names:
        exporter = _exporter(name)
        made = exporter(formatter=_one_line) if exporter is ConsoleSpanExporter else exporter()
        provider.add_span_processor(BatchSpanProcessor(made))
    trace.set_tracer_provider(provider)
    _state.update(tracer=provider.get_tracer(NAME), provider=provider)
    return True


def check_exporters() -> str | None:
    """Why the environment's exporters cannot be used (an unknown name), or ``None``."""
    try:
        for name in exporter_names():
            _exporter(name)
    except ValueError as error:
        return str(error)
    return None


def _one_line(span: ReadableSpan) -> str:
    """A span as the console exporter writes it: one line of JSON, as the log records are (its default spreads
    each over some thirty lines, which a log collector would take for thirty records)."""
    return str(span.to_json(indent=None)) + "\n"


def _exporter(name: str) -> Any:
    found = entry_points(group="opentelemetry_traces_exporter", name=name)
    if not found:
        raise ValueError(f"OTEL_TRACES_EXPORTER: no span exporter {name!r} (console, otlp, none)")
    return next(iter(found)).load()


def tracer() -> Tracer | None:
    """The service's tracer, or ``None`` while tracing is off."""
    return _state.get("tracer") if _state.get("pid") == os.getpid() else None


def provider() -> TracerProvider | None:
    """The process's tracer provider (it flushes its spans as the process exits), or ``None`` while tracing is
    off."""
    return _state.get("provider") if _state.get("pid") == os.getpid() else None


@contextlib.contextmanager
def span(name: str, **attributes: str | int) -> Iterator[None]:
    """A span named ``name`` around the block, child of the current one; nothing while tracing is off. For work
    that is not on the hot path (the solver, a webhook delivery): script calls are traced by ``scripts``."""
    active = tracer()
    if active is None:
        yield
        return
    with active.start_as_current_span(name, attributes=attributes):
        yield


def current_ids() -> tuple[str, str] | None:
    """The current span's trace and span ids in hex, or ``None`` outside a span (or while tracing is off)."""
    if tracer() is None:
        return None
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def instrument(app: ASGIApp) -> ASGIApp:
    """``app`` inside Litestar's OpenTelemetry middleware (``litestar.plugins.opentelemetry``): one server span per
    request, joined to the caller's trace by its ``traceparent``. Placed by hand around the request log, not by
    Litestar's plugin (which wraps only the router), so that the request's log line is written inside its span and
    names its trace. The span is named by the method alone until routing has found the route, then by the route's
    template (``POST /v1/games/{game_id}/moves``), never by the path, whose ids would make every name unique."""
    config = OpenTelemetryConfig(
        tracer_provider=provider(),
        scope_span_details_extractor=_method_only,
        exclude_spans=["receive", "send"],
    )
    return OpenTelemetryInstrumentationMiddleware(_named_by_route(app), config)


def _named_by_route(app: ASGIApp) -> ASGIApp:
    """``app``, naming the request's span after its route as the response starts (the span ends with the body)."""

    async def named(scope: Scope, receive: Receive, send: Send) -> None:
        async def naming(message: Message) -> None:
            route = scope.get("path_template")
            if message["type"] == "http.response.start" and route is not None:
                current = trace.get_current_span()
                current.update_name(f"{scope.get('method', scope['type'])} {route}")
                current.set_attribute("http.route", route)
            await send(message)

        await app(scope, receive, naming)

    return named


def _method_only(scope: Scope) -> tuple[str, dict[str, Any]]:
    return str(scope.get("method", scope["type"])), {}
