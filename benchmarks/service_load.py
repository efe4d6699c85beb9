"""Load: whole games played concurrently through HTTP, against a bare baseline measured on the same server.

Usage: .venv/bin/python benchmarks/service_load.py [--clients 32] [--seconds 15] [--rounds 3]

Starts the embedded Redis and one uvicorn process serving the app plus a baseline route that does one Redis GET
and one SET and nothing else. Then, for each round, ``--clients`` concurrent clients (one asyncio process, its own
core, aiohttp) hit the baseline for ``--seconds``, then play whole games (create, then moves chosen from the
snapshot's legal moves, removals first) for ``--seconds``. Prints medians over the rounds: requests/s, p50 and p99
latency, errors, the ratio moves/baseline of each round (the two phases run back to back, so a shared machine's
slow spells touch both) and their median, and Redis's MEMORY USAGE of a stored game with a full undo history.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import redis
import uvicorn
from litestar import post
from litestar.params import FromPath

from pyramide.engine import parse_move
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.http.server import server_config
from pyramide.service.infra import keyspace
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.logs import configure_logging
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.settings import Limits, Settings

BASELINE_VALUE = b"x" * 400  # about the size of a stored game
BENCHMARK_LIMITS: dict[str, Any] = {
    "limits": {group: dict.fromkeys(kind.model_fields, 10**9) for group, kind in Limits.groups().items()},
    "caps": {"max_unfinished_games": 10**9},
}
"""Limits, quotas and caps no load here reaches (all of its clients share one address), but still checked on every
request, so their cost is measured."""


def serve(port: int, redis_url: str) -> None:
    """Server mode: the app and the baseline route, in one uvicorn process."""

    @post("/bench/baseline/{key:str}", include_in_schema=False, status_code=200, exclude_from_auth=True)
    async def baseline(key: FromPath[str], redis: RedisClient) -> dict[str, int]:
        value = await redis.get(f"bench:{{{key}}}")
        await redis.set(f"bench:{{{key}}}", BASELINE_VALUE)
        return {"had": 0 if value is None else len(value)}

    settings = Settings(redis={"url": redis_url}, **BENCHMARK_LIMITS)
    configure_logging(settings.logs)  # as `pyramide serve`: one JSON line per request, at INFO
    app = create_app(settings, extra_route_handlers=[baseline])
    # The protocol `pyramide serve` runs; its header deadline an hour, since under callgrind (50 times slower) a
    # connection may wait longer than the default 10 s for the server to read its request.
    config = server_config(app, "127.0.0.1", port, 3600.0)
    uvicorn.Server(config).run()


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def choose_move(legal: list[str], rng: random.Random) -> dict[str, Any]:
    """The body of a move from ``legal``: a removal at random while there is one, else the draw or turn-over."""
    removals = [m for m in legal if m not in ("D", "R")]
    return move_body(parse_move(rng.choice(removals) if removals else legal[0]))


async def _baseline_client(client: aiohttp.ClientSession, index: int, until: float, out: dict[str, list[Any]]) -> None:
    while time.perf_counter() < until:
        start = time.perf_counter()
        async with client.post(f"/bench/baseline/k{index}") as response:
            await response.read()
        out["latency"].append(time.perf_counter() - start)
        if response.status != 200:
            out["errors"].append(response.status)


async def _game_client(client: aiohttp.ClientSession, index: int, until: float, out: dict[str, list[Any]]) -> None:
    rng = random.Random(index)
    async with client.post("/v1/players", json={}) as response:
        headers = {"Authorization": f"Bearer {(await response.json())['token']}"}
    while time.perf_counter() < until:
        async with client.post("/v1/games", json={}, headers=headers) as response:
            game = await response.json()
        out["games"].append(game["id"])
        legal = game["legal_moves"]
        for _ in range(300):
            if not legal or time.perf_counter() >= until:
                break
            start = time.perf_counter()
            url = f"/v1/games/{game['id']}/moves"
            async with client.post(url, json=choose_move(legal, rng), headers=headers) as response:
                snapshot = await response.json(content_type=None)
            out["latency"].append(time.perf_counter() - start)
            if response.status != 200:
                out["errors"].append(response.status)
                break
            legal = [] if snapshot["status"] != "in_progress" else snapshot["legal_moves"]


async def _phase(url: str, clients: int, seconds: float, worker: Any) -> dict[str, Any]:
    out: dict[str, list[Any]] = {"latency": [], "errors": [], "games": []}
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(url, connector=connector) as client:
        started = time.perf_counter()
        until = started + seconds
        await asyncio.gather(*(worker(client, i, until, out) for i in range(clients)))
        elapsed = time.perf_counter() - started
    latency = out["latency"]
    return {
        "per_second": len(latency) / elapsed,
        "p50_ms": _percentile(latency, 0.50) * 1000,
        "p99_ms": _percentile(latency, 0.99) * 1000,
        "errors": len(out["errors"]),
        "requests": len(latency),
        "games": out["games"],
    }


def _full_history_memory(url: str, redis_url: str) -> int:
    """MEMORY USAGE of a game whose undo history is full (100 operations)."""
    with httpx.Client(base_url=url) as client:
        player = client.post("/v1/players", json={}).json()
        headers = {"Authorization": f"Bearer {player['token']}"}
        snapshot = client.post("/v1/games", json={"code": "PY1-N-MEMORYS"}, headers=headers).json()
        for _ in range(130):
            body = {"type": "draw"} if "D" in snapshot["legal_moves"] else {"type": "recycle"}
            snapshot = client.post(f"/v1/games/{snapshot['id']}/moves", json=body, headers=headers).json()
    assert snapshot["undo_available"] == 100
    usage = redis.Redis.from_url(redis_url).memory_usage(keyspace.game_state(player["id"], snapshot["id"]))
    return -1 if usage is None else int(usage)


def main() -> None:
    parser = argparse.ArgumentParser(description="HTTP load: whole games against a GET+SET baseline")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "REDIS_URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1])
        return
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as server:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        process = subprocess.Popen([sys.executable, __file__, "--serve", str(port), server.url], env={**os.environ})
        try:
            wait_ready(url)
            _run(url, server.url, args)
        finally:
            process.terminate()
            process.wait(timeout=20)


@contextmanager
def pyramide_serve(env: dict[str, str], *options: str) -> Iterator[str]:
    """`pyramide serve` in its own process on a free port, with the embedded Redis in a fresh directory and
    ``env`` added to the environment; yields its URL once it is ready, and stops it after."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data:
        server = subprocess.Popen(
            [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", data, *options],
            env={**os.environ, "PYRAMIDE_DRAIN_S": "0", **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_ready(url, 60)
            yield url
        finally:
            server.terminate()
            server.wait(timeout=60)


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_ready(url: str, seconds: float = 30) -> None:
    """Until the server at ``url`` answers ready (``seconds`` at most: under valgrind it starts slowly)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health/ready", timeout=seconds / 20).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the server did not become ready")


def _run(url: str, redis_url: str, args: argparse.Namespace) -> None:
    asyncio.run(_phase(url, args.clients, 2, _game_client))  # warm-up
    baselines, moves = [], []
    for _ in range(args.rounds):
        baselines.append(asyncio.run(_phase(url, args.clients, args.seconds, _baseline_client)))
        moves.append(asyncio.run(_phase(url, args.clients, args.seconds, _game_client)))

    def med(rows: list[dict[str, Any]], key: str) -> float:
        return float(statistics.median(r[key] for r in rows))

    print(f"{args.clients} concurrent clients, {args.rounds} rounds of {args.seconds:.0f} s each; medians:")
    for name, rows in (("baseline GET+SET", baselines), ("move route", moves)):
        print(
            f"  {name:<17} {med(rows, 'per_second'):8.0f} req/s   p50 {med(rows, 'p50_ms'):6.1f} ms   "
            f"p99 {med(rows, 'p99_ms'):6.1f} ms   errors {sum(r['errors'] for r in rows)} of "
            f"{sum(r['requests'] for r in rows)}"
        )
    games = sum(len(r["games"]) for r in moves)
    ratios = [m["per_second"] / b["per_second"] for b, m in zip(baselines, moves, strict=True)]
    ratio = statistics.median(ratios)
    per_round = ", ".join(f"{r:.2f}" for r in ratios)
    print(f"  games played: {games}; move route / baseline throughput, per round: {per_round}")
    print(f"  median ratio: {ratio:.2f} (goal >= 0.6)")
    print(f"  p99 goal < 25 ms at 32 clients: {'met' if med(moves, 'p99_ms') < 25 else 'NOT met'}")
    print(f"  stored game with a full undo history: {_full_history_memory(url, redis_url)} bytes (goal <= 1024)")


if __name__ == "__main__":
    main()
