"""Redis's round trip as each process sees it: a PING every ``PROBE_S``, timed, in a histogram
(``pyramide_redis_round_trip_seconds``).

Timing every script call instead put a histogram observation (about 8,500 instructions) on every move, which with
the rest of the move route took it past its budget (issue 55: +3 % at most); a probe measures the same network and
server latency at a fixed, negligible cost, and reads it while no request comes too. What one script costs is in
its trace span (``docs/operations.md``, "Traces")."""

from __future__ import annotations

import time
from typing import Final

from prometheus_client import Histogram

from pyramide.service.infra.redis import RedisClient

PROBE_S: Final = 5.0
"""How often each process times a PING."""


class RedisProbe:
    """One periodic job's pass: time a PING (``time.perf_counter``: measuring work, not telling the time)."""

    def __init__(self, redis: RedisClient, seconds: Histogram) -> None:
        self.redis = redis
        self.seconds = seconds

    async def probe(self) -> None:
        started = time.perf_counter()
        await self.redis.ping()
        self.seconds.observe(time.perf_counter() - started)
