"""Daily challenges: how long choosing a day's deal takes, and what the first request of a day waits.

Usage: .venv/bin/python benchmarks/challenge_choice.py [--days 30] [--presets N 2S] [--time-limit 5]

For each preset, chooses ``--days`` consecutive days' deals with a fresh secret exactly as the service does (sealed
candidates in order, each solved in a worker process until one is proven winnable) and prints the median and worst
time and the candidates tried. Then, against an embedded Redis, the first request of a day: with the day prepared
ahead (as the previous day's first use does) and with nothing prepared (the very first day, or after an outage).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pyramide.engine import Game
from pyramide.service.challenges.calendar import ChallengeId, day_of
from pyramide.service.challenges.deals import ChallengeDeals
from pyramide.service.deals import DealSecret, Solver
from pyramide.service.infra.clock import SystemClock, now_ms
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.redis import connect
from pyramide.service.infra.settings import RedisSettings


async def choosing(deals: ChallengeDeals, preset: str, days: int) -> None:
    start = datetime(2027, 1, 1, tzinfo=UTC).date()
    times, tried = [], []
    for day in range(days):
        began = time.perf_counter()
        chosen = await deals.choose(ChallengeId(start + timedelta(days=day), preset))
        times.append((time.perf_counter() - began) * 1000)
        tried.append(chosen.candidate + 1)
    print(
        f"{preset:>3}  {days} days  choosing: median {statistics.median(times):.0f} ms, worst {max(times):.0f} ms;"
        f"  candidates tried: mean {statistics.mean(tried):.2f}, most {max(tried)}"
    )


async def first_request(deals: ChallengeDeals, preset: str) -> None:
    today = ChallengeId(day_of(now_ms(deals.clock)), preset)
    began = time.perf_counter()
    await deals.chosen(today, now_ms(deals.clock))
    cold = (time.perf_counter() - began) * 1000
    await deals.prepare(today.next_day())  # what the day's first use starts in the background
    began = time.perf_counter()
    await deals.kept(today.next_day())
    warm = (time.perf_counter() - began) * 1000
    print(f"{preset:>3}  first request of a day: nothing prepared {cold:.1f} ms; prepared ahead {warm:.2f} ms")


async def main(days: int, presets: list[str], time_limit_s: float) -> None:
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as server:
        redis = connect(RedisSettings(url=server.url))
        solver = Solver(1, time_limit_s)
        try:
            deals = ChallengeDeals(
                redis, DealSecret(redis, secrets.token_hex(16)), solver, tuple(presets), 64, clock=SystemClock()
            )
            await solver.analyse(Game("PY1-N-AAAAAAS"))  # the worker processes start: not part of choosing
            for preset in presets:
                await choosing(deals, preset, days)
            for preset in presets:
                await first_request(deals, preset)
        finally:
            solver.close()
            await redis.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--presets", nargs="+", default=["N", "2S"])
    parser.add_argument("--time-limit", type=float, default=5.0)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.days, arguments.presets, arguments.time_limit))
