"""Webhook delivery latency: how long a finished game's event takes to reach an app's endpoint, at a given rate.

Usage: .venv/bin/python benchmarks/webhooks.py [--rate 100] [--seconds 30] [--players 1000] [--wins 0.0]
[--clients 64] [--workers 1]

Starts `pyramide serve` (its embedded Redis, ``PYRAMIDE_WEBHOOK_ALLOW_LOOPBACK=1``, every rate limit and quota
lifted) and, in a process of its own, a receiving HTTP server on 127.0.0.1 that verifies each delivery's signature
with standardwebhooks and notes when it arrived. Creates an app (operator key), registers one endpoint for
game.won/game.lost/game.abandoned, then for ``--seconds`` finishes ``--rate`` games a second as app players
(``Pyramide-Player``, spread over ``--players``), from ``--clients`` concurrent asyncio clients on a fixed schedule:
a game is created, one card drawn and the game abandoned (game.abandoned), or, for a share ``--wins``, won along a
known 16-move line (game.won). Latency: the event's arrival at the receiver minus the arrival at the client of the
answer that finished its game (one machine, one clock). Prints the rate achieved (and whether the schedule was
held), events finished/received/duplicates/bad signatures, p50/p99/max latency, and the CPU seconds of the service's
processes and of Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

import aiohttp
import httpx
import psutil
import redis
from aiohttp import web
from standardwebhooks import Webhook

from pyramide.engine.moves import parse_record
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra import keyspace
from service_load import BadAnswerError, expect, free_port, run_checked, serve_env, wait_ready

OPERATOR_KEY = "operator-key-for-the-benchmark-0123456789"
EVENTS = ["game.won", "game.lost", "game.abandoned"]
EASY_CODE = "PY1-N-LBFWZTELUXTEBHGAYEUSVWYFHNNHPEDOALTSBORBNEFSFGLMIM"
"""tests/support/layouts.py's easy game, won along ``EASY_CLEARING`` (16 moves)."""
EASY_CLEARING = "KS AD+QD 2D+JD 3D+10D 4D+9D 5D+8D 6D+7D KH AC+QC 2C+JC 3C+10C 4C+9C KD 5C+8C 6C+7C KC"
WINNING = [move_body(m) for m in parse_record(EASY_CLEARING)]
DRAW = {"type": "draw"}
DRAIN_S = 30.0
"""How long the receiver may still get events after the last game finished."""


def receive(port: int, secret: str, pipe: Connection) -> None:
    """Receiver process: verifies and timestamps each delivery; on a message from ``pipe``, sends back what it got
    (``(game id, event id, arrival)`` each, and the count of bad signatures) and stops."""
    hook = Webhook(secret)
    got: list[tuple[str, str, float]] = []
    bad = [0]

    async def deliver(request: web.Request) -> web.Response:
        body = await request.read()
        arrived = time.time()
        try:
            event = hook.verify(body, dict(request.headers))
        except Exception:
            bad[0] += 1
            return web.Response(status=400)
        got.append((str(event["data"]["game_id"]), str(event["id"]), arrived))
        return web.Response(status=204)

    async def main() -> None:
        app = web.Application()
        app.router.add_post("/hook", deliver)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        pipe.send("ready")
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, pipe.recv)
        pipe.send((got, bad[0]))
        await runner.cleanup()

    asyncio.run(main())


def _server_env() -> dict[str, str]:
    return serve_env(OPERATOR_KEY) | {"PYRAMIDE_LOG_LEVEL": "WARNING", "PYRAMIDE_REQUEST_LOG_LEVEL": "WARNING"}


def _cpu_s(processes: list[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def _split(server: psutil.Process) -> tuple[list[psutil.Process], list[psutil.Process]]:
    """The service's processes and the embedded Redis."""
    family = [server, *server.children(recursive=True)]
    redis = [p for p in family if "redis" in p.name()]
    return [p for p in family if p not in redis], redis


async def _finish(client: aiohttp.ClientSession, headers: dict[str, str], win: bool, out: Schedule) -> None:
    """One game to its end through HTTP; notes when the finishing answer arrived."""
    async with client.post("/v1/games", json={"code": EASY_CODE}, headers=headers) as response:
        game = await response.json()
        if response.status != 201:
            out.errors.append(response.status)
            return
    moves = [(f"/v1/games/{game['id']}/moves", m) for m in (WINNING if win else [DRAW])]
    steps = [*moves] if win else [*moves, (f"/v1/games/{game['id']}/abandon", None)]
    for url, body in steps:
        async with client.post(url, json=body, headers=headers) as response:
            await response.read()
            finished = time.time()
            if response.status != 200:
                out.errors.append(response.status)
                return
    out.finished[game["id"]] = finished


@dataclass
class Schedule:
    """The games to finish: ``rate`` a second from ``start`` (monotonic), the next one's number, what came of them."""

    key: str
    args: argparse.Namespace
    start: float
    next: int = 0
    finished: dict[str, float] = field(default_factory=dict)
    """Each finished game's id and when the answer that finished it arrived (wall clock)."""
    errors: list[int] = field(default_factory=list)
    late: int = 0
    """Games started more than 100 ms after their time (the rate could not be held)."""
    elapsed: float = 0.0


async def _client(client: aiohttp.ClientSession, schedule: Schedule) -> None:
    """Takes the next game of the schedule until ``--seconds`` are up."""
    args = schedule.args
    total = int(args.rate * args.seconds)
    while schedule.next < total:
        slot = schedule.next
        schedule.next += 1
        wait = schedule.start + slot / args.rate - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        elif wait < -0.1:
            schedule.late += 1
        headers = {"Authorization": f"Bearer {schedule.key}", "Pyramide-Player": f"bench-{slot % args.players}"}
        await _finish(client, headers, int((slot + 1) * args.wins) > int(slot * args.wins), schedule)


async def _play(url: str, key: str, args: argparse.Namespace) -> Schedule:
    connector = aiohttp.TCPConnector(limit=args.clients)
    async with aiohttp.ClientSession(url, connector=connector) as client:
        schedule = Schedule(key, args, time.monotonic() + 0.5)
        await asyncio.gather(*(_client(client, schedule) for _ in range(args.clients)))
        schedule.elapsed = time.monotonic() - schedule.start
    return schedule


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def _report(args: argparse.Namespace, out: Schedule, got: list[tuple[str, str, float]], bad: int) -> None:
    finished = out.finished
    ids = [event_id for _, event_id, _ in got]
    first: dict[str, float] = {}
    for game, _, arrived in got:
        first.setdefault(game, arrived)
    latency = [first[g] - finished[g] for g in first if g in finished]
    rate = len(finished) / out.elapsed
    held = out.late == 0 and rate >= 0.97 * args.rate
    wins = f", a share {args.wins:.0%} of them won along a 16-move line" if args.wins else ""
    print(f"{args.rate} finished games a second asked for {args.seconds:.0f} s ({args.clients} clients, "
          f"{args.players} app players{wins})")  # fmt: skip
    print(f"  achieved {rate:.1f} a second; {'held' if held else 'NOT held'} ({out.late} games started "
          f"over 100 ms late; {len(out.errors)} errors)")  # fmt: skip
    print(f"  events: {len(finished)} sent (games finished), {len(set(ids))} received, "
          f"{len(ids) - len(set(ids))} duplicates, {bad} bad signatures, "
          f"{len(set(finished) - set(first))} missing after {DRAIN_S:.0f} s")  # fmt: skip
    if latency:
        print(f"  latency: p50 {_percentile(latency, 0.5) * 1000:.0f} ms, p99 {_percentile(latency, 0.99) * 1000:.0f} "
              f"ms, max {max(latency) * 1000:.0f} ms, mean {statistics.mean(latency) * 1000:.0f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--wins", type=float, default=0.0, help="share of games won (the rest abandoned)")
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--workers", default="1")
    args = parser.parse_args()
    port, hook_port = free_port(), free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data:
        command = [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", data]
        process = subprocess.Popen([*command, "--workers", args.workers], env=_server_env(),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        receiver: multiprocessing.Process | None = None
        try:
            wait_ready(url, 60)
            admin = {"Authorization": f"Bearer {OPERATOR_KEY}"}
            with httpx.Client(base_url=url, timeout=30) as http:
                app = http.post("/v1/admin/apps", json={"name": "Bench", "scopes": ["players"]}, headers=admin)
                expect(app.status_code, 201, "creating the app", app.text)
                key = str(app.json()["key"])
                hook = {"url": f"http://127.0.0.1:{hook_port}/hook", "events": EVENTS}
                registered = http.post("/v1/apps/me/webhooks", json=hook, headers={"Authorization": f"Bearer {key}"})
                assert registered.status_code == 201, registered.text
                secret = str(registered.json()["secret"])
            ours, theirs = multiprocessing.Pipe()
            receiver = multiprocessing.Process(target=receive, args=(hook_port, secret, theirs), daemon=True)
            receiver.start()
            assert ours.recv() == "ready"
            service, store = _split(psutil.Process(process.pid))
            cpu_service, cpu_redis = _cpu_s(service), _cpu_s(store)
            out = asyncio.run(_play(url, key, args))
            deadline = time.monotonic() + DRAIN_S
            while time.monotonic() < deadline and not drained(data):
                time.sleep(0.2)
            cpu_service, cpu_redis = _cpu_s(service) - cpu_service, _cpu_s(store) - cpu_redis
            ours.send("stop")
            got, bad = ours.recv()
            _report(args, out, got, bad)
            print(f"  CPU during the run and the drain: service {cpu_service:.1f} s, Redis {cpu_redis:.1f} s "
                  f"({(cpu_service + cpu_redis) / max(1, len(out.finished)) * 1000:.2f} ms a game, "
                  "requests included)")  # fmt: skip
            if out.errors:
                raise BadAnswerError(f"{len(out.errors)} game requests answered an error, statuses {out.errors[:10]}")
        finally:
            if receiver is not None:
                receiver.kill()
            process.terminate()
            process.wait(timeout=60)


def drained(data: str) -> bool:
    """Whether no outbox is due any more (every event delivered or given up)."""
    client = redis.Redis(unix_socket_path=f"{data}/redis.sock")
    try:
        return int(client.zcard(keyspace.EVENTS_DUE)) == 0
    finally:
        client.close()


if __name__ == "__main__":
    run_checked(main)
