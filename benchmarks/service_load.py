"""Load: whole games played concurrently through HTTP, against a bare baseline measured on the same server.

Usage: .venv/bin/python benchmarks/service_load.py [--clients 32] [--seconds 15] [--rounds 3]

Starts the embedded Redis and one uvicorn process serving the app plus a baseline route that does one Redis GET
and one SET and nothing else (:func:`bench_app`; each of its answers is checked to be
200). Then, for each round, ``--clients`` concurrent clients (one asyncio process, its own core, aiohttp) hit the
baseline for ``--seconds``, then play whole games (create, then moves chosen from the snapshot's legal moves,
removals first) for ``--seconds``. Prints medians over the rounds: requests/s, p50 and p99 latency, the ratio
moves/baseline of each round (the two phases run back to back, so a shared machine's slow spells touch both) and
their median, and Redis's MEMORY USAGE of a stored game with a full undo history.
Every timed answer's status is checked: one that is not the expected one stops the run with a message and exit status
1 (:class:`BadAnswerError`), since a figure over error answers measures the error path, not the route.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import redis
import uvicorn
from litestar import Litestar, post
from litestar.params import FromPath

from pyramide.engine import parse_move
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.http.injection import Injected
from pyramide.service.http.server import server_config
from pyramide.service.infra import keyspace
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.logs import configure_logging
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.settings import Caps, Limits, Settings

BASELINE_VALUE = b"x" * 400  # about the size of a stored game
BENCHMARK_LIMITS: dict[str, Any] = {
    "limits": {group: dict.fromkeys(kind.model_fields, 10**9) for group, kind in Limits.groups().items()},
    "caps": {"max_unfinished_games": 10**9},
}
"""Limits, quotas and caps no load here reaches (all of its clients share one address), but still checked on every
request, so their cost is measured."""


class BadAnswerError(RuntimeError):
    """A timed request answered with another status than the route's own: the benchmark stops, since its figures
    would count an error path (until issue 58 the baseline route answered 500 on every request, unnoticed)."""


def expect(status: int, wanted: int, what: str, body: object = "") -> None:
    """Raises :class:`BadAnswerError` unless ``status`` is ``wanted``; ``what`` and the start of ``body`` say which."""
    if status != wanted:
        raise BadAnswerError(f"{what} answered {status}, not {wanted}: {str(body)[:300]}")


def run_checked(main: Callable[[], None]) -> None:
    """Runs a benchmark's ``main``; on a :class:`BadAnswerError` exits with status 1 and one line naming it."""
    try:
        main()
    except BadAnswerError as error:
        sys.exit(f"benchmark stopped, an answer was not the route's own: {error}")


@post("/bench/baseline/{key:str}", include_in_schema=False, status_code=200, exclude_from_auth=True)
async def baseline(key: FromPath[str], redis: Injected[RedisClient]) -> dict[str, int]:
    """The baseline: one Redis GET and one SET through the service's own client, behind the app's middleware.
    ``Injected`` as the service's handlers ask: Litestar cannot check a ``Protocol`` at run time, and a bare
    ``RedisClient`` made every request answer 500 before any Redis call."""
    value = await redis.get(f"bench:{{{key}}}")
    await redis.set(f"bench:{{{key}}}", BASELINE_VALUE)
    return {"had": 0 if value is None else len(value)}


def bench_app(settings: Settings) -> Litestar:
    """The service's app with the baseline route added: what the benchmarks' server runs."""
    return create_app(settings, extra_route_handlers=[baseline])


def no_limits_env() -> dict[str, str]:
    """The environment that switches every rate limit, quota and cap of ``pyramide serve`` off (0: none): one load
    address plays far past a person's limits (before issue 58 service_scale.py switched only three off, and the
    daily quota of games ended its runs with ``KeyError: 'id'``)."""
    names = [group.variable(field) for group in Limits.groups().values() for field in group.model_fields]
    return dict.fromkeys([*names, Caps.variable("max_unfinished_games"), Caps.variable("max_game_operations")], "0")


def serve_env(operator_key: str) -> dict[str, str]:
    """`pyramide serve`'s environment for a benchmark that starts it: this process's without ``REDIS_URL`` (the
    server starts its own embedded Redis), every limit off (:func:`no_limits_env`), no drain at the stop, the
    operator's key, and webhooks to loopback allowed (the benchmarks' receivers listen on 127.0.0.1)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    return (
        env
        | no_limits_env()
        | {
            "PYRAMIDE_DRAIN_S": "0",
            "PYRAMIDE_OPERATOR_KEY": operator_key,
            "PYRAMIDE_WEBHOOK_ALLOW_LOOPBACK": "1",
        }
    )


def serve(port: int, redis_url: str, redis_timeout_s: float = 2.0) -> None:
    """Server mode: the app and the baseline route, in one uvicorn process; ``redis_timeout_s`` for Redis's
    commands (raised under callgrind, where the server runs 50 times slower)."""
    settings = Settings(redis={"url": redis_url, "timeout_s": redis_timeout_s}, **BENCHMARK_LIMITS)
    configure_logging(settings.logs)  # as `pyramide serve`: one JSON line per request, at INFO
    app = bench_app(settings)
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


async def answer(response: aiohttp.ClientResponse, wanted: int, what: str) -> Any:
    """The JSON body of ``response``, once its status is ``wanted`` (else :class:`BadAnswerError`)."""
    body = await response.read()
    expect(response.status, wanted, what, body)
    return json.loads(body)


async def _baseline_client(client: aiohttp.ClientSession, index: int, until: float, out: dict[str, list[Any]]) -> None:
    while time.perf_counter() < until:
        start = time.perf_counter()
        async with client.post(f"/bench/baseline/k{index}") as response:
            await answer(response, 200, "the baseline GET+SET")
        out["latency"].append(time.perf_counter() - start)


async def _game_client(client: aiohttp.ClientSession, index: int, until: float, out: dict[str, list[Any]]) -> None:
    rng = random.Random(index)
    async with client.post("/v1/players", json={}) as response:
        headers = {"Authorization": f"Bearer {(await answer(response, 201, 'creating a player'))['token']}"}
    while time.perf_counter() < until:
        async with client.post("/v1/games", json={}, headers=headers) as response:
            game = await answer(response, 201, "creating a game")
        out["games"].append(game["id"])
        legal = game["legal_moves"]
        for _ in range(300):
            if not legal or time.perf_counter() >= until:
                break
            start = time.perf_counter()
            url = f"/v1/games/{game['id']}/moves"
            async with client.post(url, json=choose_move(legal, rng), headers=headers) as response:
                snapshot = await answer(response, 200, "a move")
            out["latency"].append(time.perf_counter() - start)
            legal = [] if snapshot["status"] != "in_progress" else snapshot["legal_moves"]


async def _phase(url: str, clients: int, seconds: float, worker: Any) -> dict[str, Any]:
    out: dict[str, list[Any]] = {"latency": [], "games": []}
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
        "requests": len(latency),
        "games": out["games"],
    }


def _full_history_memory(url: str, redis_url: str) -> int:
    """MEMORY USAGE of a game whose undo history is full (100 operations)."""
    with httpx.Client(base_url=url) as client:

        def sent(path: str, body: dict[str, Any], wanted: int, what: str) -> Any:
            response = client.post(path, json=body, headers=headers)
            expect(response.status_code, wanted, what, response.text)
            return response.json()

        headers: dict[str, str] = {}
        player = sent("/v1/players", {}, 201, "creating a player")
        headers = {"Authorization": f"Bearer {player['token']}"}
        snapshot = sent("/v1/games", {"code": "PY1-N-MEMORYS"}, 201, "creating a game")
        for _ in range(130):
            body = {"type": "draw"} if "D" in snapshot["legal_moves"] else {"type": "recycle"}
            snapshot = sent(f"/v1/games/{snapshot['id']}/moves", body, 200, "a move")
    assert snapshot["undo_available"] == 100
    usage = redis.Redis.from_url(redis_url).memory_usage(keyspace.game_state(player["id"], snapshot["id"]))
    return -1 if usage is None else int(usage)


def main() -> None:
    parser = argparse.ArgumentParser(description="HTTP load: whole games against a GET+SET baseline")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "REDIS_URL"), help=argparse.SUPPRESS)
    parser.add_argument("--redis-timeout", type=float, default=2.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1], args.redis_timeout)
        return
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as server:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        process = subprocess.Popen([sys.executable, __file__, "--serve", str(port), server.url], env={**os.environ})
        try:
            wait_ready(url, 300, process)
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
            wait_ready(url, 300, server)
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


def wait_ready(url: str, seconds: float = 30, process: subprocess.Popen[bytes] | None = None) -> None:
    """Until the server at ``url`` answers ready (``seconds`` at most: under valgrind, or on a busy machine, it
    starts slowly); stops at once if ``process`` has ended."""
    deadline = time.monotonic() + seconds
    status: int | str = "no answer"
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode} before it was ready")
        try:
            status = httpx.get(f"{url}/health/ready", timeout=max(5.0, seconds / 20)).status_code
            if status == 200:
                return
        except httpx.TransportError as error:
            status = type(error).__name__
        time.sleep(0.2)
    raise RuntimeError(f"the server was not ready within {seconds:.0f} s (last: {status})")


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
            f"p99 {med(rows, 'p99_ms'):6.1f} ms   {sum(r['requests'] for r in rows)} requests, all answered 200"
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
    run_checked(main)
