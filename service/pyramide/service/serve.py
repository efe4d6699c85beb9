"""Running the service: `pyramide serve` and `pyramide openapi`."""

from __future__ import annotations

import logging
import math
import os
import signal
import sys

import uvicorn
from litestar import Litestar

from pyramide.service.app import create_app
from pyramide.service.events import WEBHOOKS
from pyramide.service.http.connection_limits import HttpLimits, connection_bounds
from pyramide.service.http.openapi import COMMITTED, build_document, render
from pyramide.service.http.server import server_config, use_limits
from pyramide.service.infra.cpus import CpuBudget, cpu_budget, solver_workers
from pyramide.service.infra.lifecycle import die_with_parent, end_resource_tracker
from pyramide.service.infra.logs import configure_logging
from pyramide.service.infra.metrics import (
    register_supervisor_metrics,
    serve_metrics,
    start_worker_metrics,
    worker_metrics_directory,
)
from pyramide.service.infra.settings import HttpSettings, RedisSettings, Settings
from pyramide.service.infra.supervisor import DataDirInUseError, RedisSupervisor
from pyramide.service.services import STOP_WITHIN_S

log = logging.getLogger("pyramide.serve")
EXIT_DATA_DIR_IN_USE = 3
EXIT_MARGIN_S = 5.0
"""What :func:`stop_budget_s` allows beyond the drain, the grace and the background work: the workers', the solver
workers' and the embedded Redis's exits, on a busy machine."""
_WORKER_PROTOCOL = "pyramide.service.http.server:GuardedProtocol"


def serve(settings: Settings, host: str, port: int) -> int:
    """Serve on ``host:port`` with ``settings`` (checked by ``pyramide serve`` before this module and the web stack it
    loads are imported, so that a bad setting is refused at once): the HTTP worker
    processes (``PYRAMIDE_WORKERS``; ``auto``: one per core of the CPU budget), their solver pools sized from that
    budget too (:func:`sized`). Without ``REDIS_URL`` this process also owns, starts, supervises and at the end stops
    the embedded Redis, which every worker shares."""
    configure_logging(settings.logs)
    for line in settings.secrets.kept_in_redis():
        log.warning(line)
    settings = sized(settings, cpu_budget())
    os.environ["PYRAMIDE_SOLVER_WORKERS"] = str(settings.solver.workers)  # for the workers, as REDIS_URL below
    # uvicorn stops on SIGTERM, then raises it again: with the default action the process would die there, before
    # stopping the solver workers and the embedded Redis. Exiting through the cleanup instead, in every mode.
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    supervisor = None
    if settings.redis.url is None:
        supervisor = RedisSupervisor(
            settings.embedded.data_dir,
            maxmemory=settings.embedded.maxmemory,
            appendfsync=settings.embedded.appendfsync,
            max_restarts=settings.embedded.max_restarts,
            server=settings.embedded.server,
        )
        try:
            supervisor.start()
        except DataDirInUseError as error:
            print(f"pyramide serve: {error}", file=sys.stderr)
            return EXIT_DATA_DIR_IN_USE
        log.info("embedded Redis at %s (data in %s)", supervisor.url, supervisor.data_dir)
        os.environ["REDIS_URL"] = supervisor.url  # for the workers, which read their settings afresh
        os.environ["PYRAMIDE_SUPERVISOR_STATE"] = str(supervisor.state_file)
        settings = settings.but(redis={"url": supervisor.url}, embedded={"supervisor_state": supervisor.state_file})
    try:
        _run(settings, host, port)
    finally:
        if supervisor is not None:
            supervisor.stop()
        end_resource_tracker()  # the last process it started: every one has ended before it exits
        log.info("stopped")
    return 0


def stop_budget_s(http: HttpSettings) -> float:
    """The longest `pyramide serve` takes from SIGTERM to its exit: the drain, the grace of requests in flight, the
    app's background work, and a margin (``docs/operations.md``, "Stopping and draining"). What an orchestrator
    waits before SIGKILL must be at least this (docker-compose.yml's ``stop_grace_period``, held by a test)."""
    return http.drain_s + http.shutdown_grace_s + STOP_WITHIN_S + EXIT_MARGIN_S


def sized(settings: Settings, budget: CpuBudget) -> Settings:
    """The settings with the number of HTTP workers decided (``auto``: the budget's cores) and, unless
    ``PYRAMIDE_SOLVER_WORKERS`` says otherwise, each one's solver pool given its share of the budget
    (:func:`cpus.solver_workers`), so that one `pyramide serve` runs about one solver process per CPU, not a pool
    per core in every worker. One line logs the figures."""
    workers = budget.cpus if settings.http.workers == "auto" else settings.http.workers
    explicit = "workers" in settings.solver.model_fields_set
    share = settings.solver.workers if explicit else solver_workers(budget.cpus, workers)
    log.info(
        "CPU budget %d (affinity %d CPUs, cgroup quota %s): %d HTTP workers, %d solver processes each (%d for every"
        " search, 1 for players), %d in all",
        budget.cpus,
        budget.affinity,
        "none" if budget.quota is None else f"{budget.quota:g} CPUs",
        workers,
        share + 1,
        share,
        workers * (share + 1),
        extra={
            "cpu_affinity": budget.affinity,
            "cpu_quota": budget.quota,
            "cpu_budget": budget.cpus,
            "http_workers": workers,
            "solver_processes_per_worker": share + 1,
            "solver_processes": workers * (share + 1),
        },
    )
    return settings.but(http={"workers": workers}, solver={"workers": share})


def _run(settings: Settings, host: str, port: int) -> None:
    """The HTTP server(s), and the metrics' port served by this process (which, with workers, sums theirs)."""
    grace = math.ceil(settings.http.shutdown_grace_s)
    limits = HttpLimits.of(settings.http)
    metrics_host = settings.metrics.host or host
    if settings.http.worker_count == 1:
        config = server_config(create_app(settings), host, port, limits)
        config.timeout_graceful_shutdown = grace
        stop_metrics = serve_metrics(settings.metrics.port, metrics_host)
        try:
            uvicorn.Server(config).run()
        finally:
            stop_metrics()
        return
    with worker_metrics_directory():  # before the workers start: they inherit it, and /metrics sums them all
        register_supervisor_metrics(settings.embedded.supervisor_state)
        stop_metrics = serve_metrics(settings.metrics.port, metrics_host)
        try:
            _run_workers(settings, host, port, limits, grace)
        finally:
            stop_metrics()


def _run_workers(settings: Settings, host: str, port: int, limits: HttpLimits, grace: int) -> None:
    uvicorn.run(
        "pyramide.service.serve:worker_app",
        factory=True,
        host=host,
        port=port,
        workers=settings.http.worker_count,
        http=_WORKER_PROTOCOL,
        backlog=connection_bounds(limits.max_connections)[1],
        log_config=None,
        access_log=False,
        proxy_headers=False,  # as server_config: the service alone decides whom to believe
        timeout_graceful_shutdown=grace,
    )


def worker_app() -> Litestar:
    """The app of one worker of ``serve --workers``: its settings from the environment the parent prepared; it
    ends with the parent, whatever ends that."""
    die_with_parent()
    start_worker_metrics()
    settings = Settings()
    configure_logging(settings.logs)
    use_limits(HttpLimits.of(settings.http))
    return create_app(settings)


def _exit_on_sigterm(signum: int, frame: object) -> None:  # noqa: ARG001 - a signal handler's signature
    """A stop that was asked for: leave through the cleanup, with success."""
    raise SystemExit(0)


def write_openapi(check: bool) -> int:
    """Regenerate ``openapi/openapi.json``; with ``check``, fail if it differs from the app's."""
    text = render(build_document(create_app(Settings(redis=RedisSettings(url="redis://unused"))), WEBHOOKS))
    if check:
        current = COMMITTED.read_text(encoding="utf-8") if COMMITTED.exists() else ""
        if current != text:
            print(f"{COMMITTED} is out of date: run `pyramide openapi`", file=sys.stderr)
            return 1
        return 0
    COMMITTED.write_text(text, encoding="utf-8")
    print(f"wrote {COMMITTED}")
    return 0
