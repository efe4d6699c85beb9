"""The service's own metrics beyond HTTP requests: webhooks, live streams, the solver, refusals by limit, Redis round
trips and the build. Each is created once per process (Prometheus refuses a name twice) and handed to the objects
that do the work (``wiring`` passes :func:`process_meters` in); the plumbing that has no object to receive them (the
problem handler) takes them from here. Every name begins ``pyramide_``, says its unit, and carries
only labels with few values; ``docs/operations.md`` ("Metrics") lists them.

Under `pyramide serve --workers N` the values are kept in prometheus-client's multiprocess files (:mod:`.metrics`):
counters and histograms are summed over the workers, the gauges of what a process holds (open streams, searches
waiting) summed over the living ones, and the outboxes pending, read from Redis by every process, taken from the
last process that read it.
"""

from __future__ import annotations

import platform
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Final

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import REGISTRY

import pyramide

REDIS_BUCKETS: Final = (0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
"""A Redis round trip on loopback takes tenths of a millisecond; seconds mean trouble."""
SEARCH_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""A search ends within the solver's time limit (5 s by default) and its grace."""
DELIVERY_BUCKETS: Final = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0)
"""From an event to its delivery: the first attempt's wait, then retries over minutes."""


@dataclass(frozen=True)
class Meters:
    """The metrics of one process (see the module)."""

    refusals: Counter
    streams_open: Gauge
    streams_ended: Counter
    webhook_attempts: Counter
    webhook_attempt_seconds: Histogram
    webhook_delivery_seconds: Histogram
    webhook_given_up: Counter
    webhook_outboxes: Gauge
    solver_waiting: Gauge
    solver_seconds: Histogram
    redis_round_trip: Histogram


@cache
def process_meters() -> Meters:
    """This process's metrics, registered on first use."""
    REGISTRY.register(BuildInfo())
    return Meters(
        refusals=Counter("pyramide_refusals_total", "Requests refused 429 by a limit, by the limit's name", ("limit",)),
        streams_open=Gauge("pyramide_streams_open", "Live streams open", multiprocess_mode="livesum"),
        streams_ended=Counter(
            "pyramide_streams_ended_by_budget_total",
            "Live streams ended (with retry: and their last id) to make room for newer ones (PYRAMIDE_MAX_STREAMS)",
        ),
        webhook_attempts=Counter(
            "pyramide_webhook_attempts_total",
            "Webhook delivery attempts, by outcome: delivered (2xx), rejected (another status), timeout, refused"
            " (the address may not be called), unreachable (no answer)",
            ("outcome",),
        ),
        webhook_attempt_seconds=Histogram(
            "pyramide_webhook_attempt_duration_seconds", "How long one webhook delivery attempt took"
        ),
        webhook_delivery_seconds=Histogram(
            "pyramide_webhook_delivery_latency_seconds",
            "From an event's emission to its delivery to an endpoint (retries included)",
            buckets=DELIVERY_BUCKETS,
        ),
        webhook_given_up=Counter(
            "pyramide_webhook_deliveries_failed_total",
            "Webhook deliveries given up (the retry schedule ended, or the endpoint was disabled)",
        ),
        webhook_outboxes=Gauge(
            "pyramide_webhook_outboxes_pending",
            "Outboxes holding events not yet delivered to every endpoint (read from Redis: the same for every replica)",
            multiprocess_mode="mostrecent",
        ),
        solver_waiting=Gauge(
            "pyramide_solver_searches_waiting", "Searches waiting for a solver worker", multiprocess_mode="livesum"
        ),
        solver_seconds=Histogram(
            "pyramide_solver_search_seconds",
            "How long a search took on a solver worker, by kind: hint (a player's), analysis (a deal's), par"
            " (in the background), review, screen (a challenge win's, in the background)",
            ("kind",),
            buckets=SEARCH_BUCKETS,
        ),
        redis_round_trip=Histogram(
            "pyramide_redis_round_trip_seconds",
            "Round trip of a PING to Redis, timed by each process every 5 s (infra/redis_probe.py)",
            buckets=REDIS_BUCKETS,
        ),
    )


class BuildInfo:
    """``pyramide_build_info{version,python} 1``: what runs, for dashboards to show and alerts to compare."""

    def collect(self) -> Iterator[Metric]:
        info = GaugeMetricFamily(
            "pyramide_build_info", "The service's version and Python's (always 1)", labels=("version", "python")
        )
        info.add_metric([pyramide.__version__, platform.python_version()], 1)
        return iter([info])
