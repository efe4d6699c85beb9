"""Prometheus metrics for every routed request, under the names and labels of Litestar's Prometheus plugin.

The plugin's middleware builds a request object and a label dict and looks each labelled series up again, four
times, on every request: 7 % of a move request's instructions (``benchmarks/service_instructions.py``). This one
does the same counting with the series looked up once per route and status and kept, and is a plain ASGI wrapper.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY

from pyramide.service.infra.supervisor import SupervisorState

STORAGE_FULL: Final = Counter(
    "pyramide_storage_full_total", "Writes refused because Redis's memory (maxmemory) or its disk is full"
)

PREFIX: Final = "litestar"
LABELS: Final = ("method", "path", "status_code", "app_name")
CLIENT_CLOSED: Final = 499
"""The status label of a request cancelled because its client went away (nginx's convention)."""


@dataclass(frozen=True)
class _Metrics:
    requests: Counter
    errors: Counter
    duration: Histogram
    in_progress: Gauge


@cache
def _metrics(prefix: str) -> _Metrics:
    """Registered once per process: Prometheus refuses a name twice, and tests build many apps."""
    return _Metrics(
        Counter(f"{prefix}_requests_total", "Total requests", LABELS, registry=REGISTRY),
        Counter(f"{prefix}_requests_error_total", "Total errors in requests", LABELS, registry=REGISTRY),
        Histogram(f"{prefix}_request_duration_seconds", "Request duration, in seconds", LABELS, registry=REGISTRY),
        Gauge(
            f"{prefix}_requests_in_progress",
            "Total requests currently in progress",
            LABELS,
            registry=REGISTRY,
            multiprocess_mode="livesum",
        ),
    )


@dataclass
class RequestMetrics:
    """Counts, times and errors per method, route template and status; requests in progress per route."""

    app_name: str
    prefix: str = PREFIX
    _series: dict[tuple[str, str, int], tuple[Any, Any, Any]] = field(default_factory=dict)
    _running: dict[tuple[str, str], Any] = field(default_factory=dict)

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """For Litestar's ``middleware=[...]``: it wraps each route's handler, so the route template is known."""

        async def metered(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP:
                await app(scope, receive, send)
                return
            method, path = scope["method"], scope.get("path_template", scope["path"])
            started = time.perf_counter()
            span = [500, 0.0]  # status and duration; an exception that escapes counts as a 500, timed to the end

            async def timed_send(message: Message) -> None:
                if message["type"] == "http.response.start":
                    span[0] = message["status"]
                elif message["type"] == "http.response.body":
                    span[1] = time.perf_counter() - started
                await send(message)

            running = self._in_progress(method, path)
            running.inc()
            try:
                await app(scope, receive, timed_send)
            except asyncio.CancelledError:
                span[0] = CLIENT_CLOSED  # the client went away: not an error of the service
                raise
            finally:
                running.dec()
                self._record(method, path, int(span[0]), span[1] or time.perf_counter() - started)

        return metered

    def _in_progress(self, method: str, path: str) -> Any:
        gauge = self._running.get((method, path))
        if gauge is None:
            gauge = self._running[method, path] = _metrics(self.prefix).in_progress.labels(
                method, path, 200, self.app_name
            )
        return gauge

    def _record(self, method: str, path: str, status: int, duration: float) -> None:
        series = self._series.get((method, path, status))
        if series is None:
            series = self._series[method, path, status] = self._new_series(method, path, status)
        requests, durations, errors = series
        requests.inc()
        durations.observe(duration)
        if errors is not None:
            errors.inc()

    def _new_series(self, method: str, path: str, status: int) -> tuple[Any, Any, Any]:
        metrics, values = _metrics(self.prefix), (method, path, status, self.app_name)
        errors = metrics.errors.labels(*values) if status >= 500 else None
        return metrics.requests.labels(*values), metrics.duration.labels(*values), errors


class _SupervisorCollector:
    """The embedded Redis's restarts and state, read from the supervisor's state file at each scrape (the supervisor
    runs in `pyramide serve`'s parent process, the metrics are served by its workers)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def collect(self) -> Iterator[Metric]:
        state = SupervisorState.read(self.path)
        restarts = CounterMetricFamily("pyramide_redis_restarts", "Restarts of the embedded Redis after it died")
        restarts.add_metric([], state.restarts)
        up = GaugeMetricFamily("pyramide_redis_up", "Whether the embedded Redis is running (1) or not (0)")
        up.add_metric([], 1 if state.up else 0)
        return iter([restarts, up])


@cache
def register_supervisor_metrics(path: Path | None) -> None:
    """Once per process and state file; nothing without one (``REDIS_URL``: no embedded Redis to watch)."""
    if path is not None:
        REGISTRY.register(_SupervisorCollector(path))
