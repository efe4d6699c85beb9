"""Scaling out on one box: `pyramide serve --workers K` against K processes of a bare GET+SET app.

Usage: .venv/bin/python benchmarks/service_scale.py [--workers 1,2,4] [--seconds 10] [--loaders 2] [--clients 32]

For each K, one Redis (the embedded one's binary, started here) serves both: first K uvicorn workers of a bare app
whose one route does a Redis GET and a SET (the baseline), then `pyramide serve --workers K` playing whole random
games. The load comes from ``--loaders`` processes of their own, ``--clients`` connections each. Prints, per K,
moves/s, p50 and p99, the baseline's requests/s, the move route's share of the baseline, and each one's efficiency
against K = 1 (throughput / (K x throughput at 1)). On a machine with fewer cores than K + loaders the processes
share cores, and the efficiency says so. Every answer's status is checked: one that is not the route's own stops the
run (exit status 1). ``pyramide serve`` runs with every rate limit, quota and cap off (all the load comes from one
address); the bare app's route is :func:`baseline_app` (each of its answers is checked to be
200).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
from litestar import Litestar, get, post
from litestar.params import FromPath

from process_cpu import TICKS, sample, spent
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.redis import connect
from pyramide.service.infra.settings import Settings
from service_load import (
    BASELINE_VALUE,
    BadAnswerError,
    _baseline_client,
    _game_client,
    free_port,
    no_limits_env,
    run_checked,
    wait_ready,
)


def baseline_app() -> Litestar:
    """The bare app: one route, one GET and one SET on the Redis of ``REDIS_URL``, through the service's own client."""
    settings = Settings.from_env()
    state: dict[str, Any] = {}

    async def startup() -> None:
        state["redis"] = connect(settings.redis)

    @post("/bench/baseline/{key:str}", status_code=200)
    async def baseline(key: FromPath[str]) -> dict[str, int]:
        client = state["redis"]
        value = await client.get(f"bench:{{{key}}}")
        await client.set(f"bench:{{{key}}}", BASELINE_VALUE)
        return {"had": 0 if value is None else len(value)}

    @get("/health/ready")
    async def ready() -> dict[str, str]:
        return {"status": "ok"}

    return Litestar([baseline, ready], on_startup=[startup])


def _loader(url: str, clients: int, seconds: float, kind: str, out: Any) -> None:
    """One load process: ``clients`` connections for ``seconds``; puts (requests, latencies) on ``out``."""
    worker = _game_client if kind == "moves" else _baseline_client

    async def run() -> None:
        results: dict[str, list[Any]] = {"latency": [], "games": []}
        connector = aiohttp.TCPConnector(limit=clients)
        failed = ""
        async with aiohttp.ClientSession(url, connector=connector) as client:
            until = time.perf_counter() + seconds
            offset = os.getpid() * 1000
            try:
                await asyncio.gather(*(worker(client, offset + i, until, results) for i in range(clients)))
            except BadAnswerError as error:
                failed = str(error)
        out.put((results["latency"], failed))

    asyncio.run(run())


def _load(url: str, args: argparse.Namespace, kind: str) -> dict[str, float]:
    queue: Any = multiprocessing.get_context("spawn").Queue()
    started = time.perf_counter()
    processes = [
        multiprocessing.get_context("spawn").Process(
            target=_loader, args=(url, args.clients, args.seconds, kind, queue)
        )
        for _ in range(args.loaders)
    ]
    for process in processes:
        process.start()
    latencies: list[float] = []
    failures: list[str] = []
    for _ in processes:
        got, failed = queue.get(timeout=args.seconds + 300)
        latencies += got
        failures += [failed] if failed else []
    for process in processes:
        process.join()
    if failures:
        raise BadAnswerError(f"{kind}: {failures[0]}")
    elapsed = max(args.seconds, time.perf_counter() - started - 2)  # the loaders' start-up is not load
    ordered = sorted(latencies)
    return {
        "requests": float(len(ordered)),
        "per_second": len(ordered) / args.seconds if elapsed else 0.0,
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[int(0.99 * (len(ordered) - 1))] * 1000,
    }


def _machine_busy_s() -> float:
    """CPU seconds every core of the machine has been busy since boot (``/proc/stat``: all but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / TICKS


def _costed(server: subprocess.Popen[bytes], redis_pid: int, load: Callable[[], dict[str, float]]) -> dict[str, float]:
    """``load()``'s figures, with the CPU milliseconds per request of the server (every worker of it) and of Redis,
    and how busy the machine's cores were meanwhile (all of them together, other work included): where the limit
    is when the server's own CPU per request does not grow with more workers but the throughput does not either."""
    families = (server.pid, redis_pid)
    before = [sample(pid) for pid in families]
    busy, started = _machine_busy_s(), time.perf_counter()
    figures = load()
    busy, elapsed = _machine_busy_s() - busy, time.perf_counter() - started
    after = [sample(pid) for pid in families]
    server_s, redis_s = (
        sum(spent(b, a, pid, lambda _: "all").values()) for b, a, pid in zip(before, after, families, strict=True)
    )
    requests = figures["requests"] or 1.0
    return figures | {
        "server_ms": server_s * 1000 / requests,
        "redis_ms": redis_s * 1000 / requests,
        "busy": busy / (elapsed * (os.cpu_count() or 1)),
    }


def _serve(command: list[str], env: dict[str, str], url: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_ready(url, 300, process)
    except BaseException:
        _stop(process)
        raise
    return process


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(timeout=60)


def _one(workers: int, redis: EmbeddedRedis, args: argparse.Namespace) -> tuple[dict[str, float], dict[str, float]]:
    env = {
        **os.environ,
        "REDIS_URL": redis.url,
        "PYRAMIDE_DRAIN_S": "0",
        **no_limits_env(),
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    here = str(Path(__file__).resolve().parent)
    bare = [
        sys.executable, "-m", "uvicorn", "service_scale:baseline_app", "--factory", "--app-dir", here,
        "--port", str(port), "--workers", str(workers), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    process = _serve(bare, env, url)
    try:
        baseline = _costed(process, redis.pid or 0, lambda: _load(url, args, "baseline"))
    finally:
        _stop(process)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    service = [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--workers", str(workers)]
    process = _serve(service, env, url)
    try:
        moves = _costed(process, redis.pid or 0, lambda: _load(url, args, "moves"))
    finally:
        _stop(process)
    return baseline, moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--loaders", type=int, default=2)
    parser.add_argument("--clients", type=int, default=32)
    args = parser.parse_args()
    counts = [int(k) for k in args.workers.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as redis:
        for workers in counts:
            rows.append((workers, *_one(workers, redis, args)))
    print(f"{os.cpu_count()} cores; load: {args.loaders} processes x {args.clients} clients, {args.seconds:.0f} s each")
    one_base, one_moves = rows[0][1]["per_second"], rows[0][2]["per_second"]
    for workers, baseline, moves in rows:
        print(
            f"  K={workers}: moves {moves['per_second']:7.0f}/s p50 {moves['p50_ms']:5.1f} ms"
            f" p99 {moves['p99_ms']:6.1f} ms"
            f" | baseline {baseline['per_second']:7.0f}/s"
            f" | moves/baseline {moves['per_second'] / baseline['per_second']:.2f}"
            f" | efficiency moves {moves['per_second'] / (workers * one_moves):.2f},"
            f" baseline {baseline['per_second'] / (workers * one_base):.2f}"
        )
        for name, figures in (("moves", moves), ("baseline", baseline)):
            print(
                f"       {name:8} CPU per request: server {figures['server_ms']:.3f} ms, Redis"
                f" {figures['redis_ms']:.3f} ms; the machine's cores {figures['busy']:.0%} busy"
            )


if __name__ == "__main__":
    run_checked(main)
