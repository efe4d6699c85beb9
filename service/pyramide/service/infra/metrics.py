"""Prometheus metrics for every routed request, under the names and labels of Litestar's Prometheus plugin.

The plugin's middleware builds a request object and a label dict and looks each labelled series up again, four
times, on every request: 7 % of a move request's instructions (``benchmarks/service_instructions.py``). This one
does the same counting with the series looked up once per route and status and kept, and is a plain ASGI wrapper.

With `pyramide serve --workers N` each worker counts in its own process, so a scrape answered by one worker would
show that worker's share only. There prometheus-client's multiprocess mode is used: `pyramide serve` points
``PROMETHEUS_MULTIPROC_DIR`` at a private directory before the workers start, each worker's counters write to its
own memory-mapped files there, and a scrape sums every worker's files, a dead worker's included (its counts are
kept; only its requests in progress are dropped). A single process (``serve`` with one worker, the tests' app)
keeps its counters in memory and needs no directory.

Prometheus scrapes a port of their own (``PYRAMIDE_METRICS_PORT``, :func:`serve_metrics`), served by the process that
sees every count: the one process, or with workers the parent, which reads their files. The API's port answers
``/metrics`` only when the operator opts in, and then to the operator alone (``app.MetricsController``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import REGISTRY, Collector

from pyramide.service.infra.lifecycle import process_alive
from pyramide.service.infra.meters import BuildInfo, process_meters
from pyramide.service.infra.response_span import ResponseSpan, span_of
from pyramide.service.infra.supervisor import SupervisorState

STORAGE_FULL: Final = Counter(
    "pyramide_storage_full_total", "Writes refused because Redis's memory (maxmemory) or its disk is full"
)

log = logging.getLogger("pyramide.serve")
PREFIX: Final = "litestar"
LABELS: Final = ("method", "path", "status_code", "app_name")
CLIENT_CLOSED: Final = 499
"""The status label of a request cancelled because its client went away (nginx's convention)."""
MULTIPROCESS_DIR: Final = "PROMETHEUS_MULTIPROC_DIR"
"""prometheus-client's variable: where the workers' metric files are; read when prometheus-client is imported."""
_LIVE_GAUGE_FILE: Final = re.compile(r"gauge_live[a-z]+_(\d+)\.db")


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
            span, logged = span_of(scope), True
            if span is None:  # no request log outside (an app built without it): wrap send here
                span, logged = ResponseSpan(), False
                send = _seen(send, span)
            closed = False
            running = self._in_progress(method, path)
            running.inc()

            def record(span: ResponseSpan = span) -> None:
                ended = span.body_at or time.perf_counter()  # an exception that escapes is timed to the end
                self._record(method, path, CLIENT_CLOSED if closed else span.status, ended - started)

            try:
                await app(scope, receive, send)
            except asyncio.CancelledError:
                closed = True  # the client went away: not an error of the service
                raise
            finally:
                running.dec()
                if logged:  # recorded once the answer is whole: a middleware's refusal is answered after this returns
                    span.finishers.append(record)
                else:
                    record()

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


def _seen(send: Send, span: ResponseSpan) -> Send:
    async def seen(message: Message) -> None:
        span.see(message)
        await send(message)

    return seen


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


_SUPERVISOR_COLLECTORS: list[_SupervisorCollector] = []


@cache
def register_supervisor_metrics(path: Path | None) -> None:
    """Once per process and state file; nothing without one (``REDIS_URL``: no embedded Redis to watch)."""
    if path is not None:
        collector = _SupervisorCollector(path)
        REGISTRY.register(collector)
        _SUPERVISOR_COLLECTORS.append(collector)


class _Workers:
    """Every worker's files summed, read afresh at each scrape, the requests in progress of dead ones dropped first."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def collect(self) -> Iterator[Metric]:
        forget_dead_workers(self.directory)
        return MultiProcessCollector(None, str(self.directory)).collect()  # type: ignore[no-untyped-call,no-any-return]


def scrape_registry() -> CollectorRegistry:
    """What ``/metrics`` shows: this process's registry, or, with workers, every worker's files summed (plus the
    build and the supervisor's state, read from its file)."""
    process_meters()  # registers the build's info in this process's registry
    directory = os.environ.get(MULTIPROCESS_DIR)
    if not directory:
        return REGISTRY
    registry = CollectorRegistry()
    collectors: list[Collector] = [_Workers(Path(directory)), BuildInfo(), *_SUPERVISOR_COLLECTORS]
    for collector in collectors:
        registry.register(collector)
    return registry


def serve_metrics(port: int | None, host: str) -> Callable[[], None]:
    """``GET /metrics`` (any path, in fact) on ``host:port`` in a thread of this process, from :func:`scrape_registry`
    (call it where the workers' directory, if any, is set); what stops it. A port that cannot be bound is logged
    and the API served all the same: metrics are not worth turning players away."""
    if port is None:
        return lambda: None
    try:
        server, _ = start_http_server(port, addr=host, registry=scrape_registry())
    except OSError as error:
        log.error("metrics not served: port %d on %s: %s (PYRAMIDE_METRICS_PORT)", port, host, error)
        return lambda: None
    log.info("metrics served at http://%s:%d/metrics", host if ":" not in host else f"[{host}]", port)

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return stop


@contextmanager
def worker_metrics_directory() -> Iterator[Path]:
    """For `pyramide serve --workers N`, around the workers' whole life: ``PROMETHEUS_MULTIPROC_DIR`` for them to
    inherit. The operator's directory if set, emptied of earlier runs' files (their counts would be added to this
    run's); else a fresh private one (mode 0700) in the temporary directory, removed at the end."""
    given = os.environ.get(MULTIPROCESS_DIR)
    if given:
        yield _empty_of_earlier_runs(Path(given))
        return
    directory = Path(tempfile.mkdtemp(prefix="pyramide-metrics-"))
    os.environ[MULTIPROCESS_DIR] = str(directory)
    try:
        yield directory
    finally:
        del os.environ[MULTIPROCESS_DIR]
        shutil.rmtree(directory, ignore_errors=True)


def _empty_of_earlier_runs(directory: Path) -> Path:
    """The files a run killed before its cleanup left (this process's own are open already, and empty)."""
    for stale in directory.glob("*.db"):
        if not stale.name.endswith(f"_{os.getpid()}.db"):
            stale.unlink(missing_ok=True)
    return directory


def start_worker_metrics() -> None:
    """At a worker's start: drop the requests in progress of a dead process that had this pid (Linux reuses them),
    and those of every worker that died since the last scrape."""
    directory = os.environ.get(MULTIPROCESS_DIR)
    if directory:
        mark_process_dead(os.getpid(), directory)  # type: ignore[no-untyped-call]
        forget_dead_workers(Path(directory))


def forget_dead_workers(directory: Path) -> None:
    """``mark_process_dead`` for each process with a file of live gauges that is gone: its requests in progress end
    with it. Its counters' files stay, so its counts are kept (prometheus-client's ``child_exit`` for gunicorn; uvicorn,
    which replaces a dead worker, has no such hook, so this runs at each scrape and each worker's start)."""
    pids = {int(found[1]) for path in directory.iterdir() if (found := _LIVE_GAUGE_FILE.fullmatch(path.name))}
    for pid in pids:
        if not process_alive(pid):
            mark_process_dead(pid, str(directory))  # type: ignore[no-untyped-call]
