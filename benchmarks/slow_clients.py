"""Slow clients against `pyramide serve`: do connections that trickle their request headers hurt everyone else?

Usage: .venv/bin/python benchmarks/slow_clients.py [--slow 500] [--seconds 8] [--header-timeout 10] [--bodies]
       [--body-timeout 30] [--file-limit N]

Starts `pyramide serve` (embedded Redis) in its own process, then measures the p50 and p99 of game reads and moves
from 4 prompt clients, first on an idle server, then while ``--slow`` connections send their headers one byte at a
time (a slowloris), or with ``--bodies`` send whole headers and then their body a byte at a time. Prints both, their
ratio (goal: p50 at most 2x idle), the longest a new client waited for ``/health/live`` on a fresh connection during
the attack (goal: under 1 s), and how many slow connections the server had closed by the end. ``--file-limit``
starts the server with that many file descriptors (``ulimit -n``), to see what happens when they run out.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import socket
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from service_load import BadAnswerError, expect, no_limits_env, pyramide_serve, run_checked


async def _prompt_client(url: str, until: float, latencies: list[float]) -> None:
    async with httpx.AsyncClient(base_url=url) as client:

        async def sent(method: str, path: str, wanted: int, what: str, body: object = None) -> Any:
            started = time.monotonic()
            response = await client.request(method, path, json=body, headers=auth)
            latencies.append(time.monotonic() - started)
            expect(response.status_code, wanted, what, response.text)
            return response.json()

        auth: dict[str, str] = {}
        auth = {"Authorization": f"Bearer {(await sent('POST', '/v1/players', 201, 'creating a player', {}))['token']}"}
        game = await sent("POST", "/v1/games", 201, "creating a game", {})
        latencies.clear()  # only the reads and moves are timed
        while time.monotonic() < until:
            snapshot = await sent("GET", f"/v1/games/{game['id']}", 200, "reading the game")
            body = {"type": "draw"} if "D" in snapshot["legal_moves"] else {"type": "undo"}
            await sent("POST", f"/v1/games/{game['id']}/moves", 200, "a move", body)


async def _measure(url: str, seconds: float) -> list[float]:
    latencies: list[float] = []
    until = time.monotonic() + seconds
    await asyncio.gather(*(_prompt_client(url, until, latencies) for _ in range(4)))
    return latencies


HEADER = b"GET /health/live HTTP/1.1\r\nHost: slow\r\nX-Padding: " + b"a" * 4096
BODY_HEAD = b"POST /v1/players HTTP/1.1\r\nHost: slow\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"


async def _slow_connection(port: int, until: list[float], closed: list[int], bodies: bool) -> None:
    """One connection trickling a byte a second until ``until[0]``; counted in ``closed`` if the server lets go."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        closed.append(1)
        return
    trickled = b" " * 4096 if bodies else HEADER
    try:
        if bodies:
            writer.write(BODY_HEAD)
        for byte in trickled:
            if time.monotonic() > until[0] or reader.at_eof():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            try:
                await asyncio.wait_for(reader.read(1000), timeout=1.0)  # an answer or the end: the server let go
                closed.append(1)
                return
            except TimeoutError:
                pass
    except ConnectionError:
        closed.append(1)
    finally:
        writer.close()


def _fresh_clients(port: int, until: float) -> list[float]:
    """How long a new client (a new connection each time, one every 0.2 s) waits for ``/health/live``'s answer. In
    a thread with blocking sockets, so that the attackers' event loop in this process does not delay it. No answer
    within 10 s, or not a 200, counts as 10 s."""
    waits = []
    while time.monotonic() < until:
        started = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
                connection.sendall(b"GET /health/live HTTP/1.1\r\nHost: fresh\r\nConnection: close\r\n\r\n")
                answer = connection.recv(1000)
            waits.append(time.monotonic() - started if answer.startswith(b"HTTP/1.1 200 ") else 10.0)
        except OSError:
            waits.append(10.0)
        time.sleep(0.2)
    return waits


async def _under_attack(
    url: str, port: int, args: argparse.Namespace, seconds: float
) -> tuple[list[float], int, list[float]]:
    closed: list[int] = []
    until = [time.monotonic() + 3600]
    attackers = []
    for index in range(args.slow):
        attackers.append(asyncio.create_task(_slow_connection(port, until, closed, args.bodies)))
        if index % 8 == 7:
            await asyncio.sleep(0.005)  # no faster than the server accepts: no SYN dropped, no 1 s retry
    await asyncio.sleep(1)  # every slow connection open and trickling
    until[0] = time.monotonic() + seconds + 5
    fresh = asyncio.create_task(asyncio.to_thread(_fresh_clients, port, time.monotonic() + seconds))
    try:
        latencies = await _measure(url, seconds)
    except (httpx.HTTPError, BadAnswerError) as error:  # the server stopped answering them, or answered an error
        print(f"  the prompt clients failed under attack: {error!r}")
        latencies = []
    waits = await fresh
    await asyncio.gather(*attackers, return_exceptions=True)
    return latencies, len(closed), waits


@contextmanager
def _file_limit(files: int | None) -> Iterator[None]:
    """Processes started in the block may open ``files`` descriptors (this one gets its own limit back)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if files is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _row(name: str, latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    p50 = statistics.median(ordered)
    return f"  {name:<28} p50 {p50 * 1000:6.2f} ms   p99 {p99 * 1000:6.2f} ms   ({len(ordered)} requests)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--slow", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--header-timeout", type=float, default=10)
    parser.add_argument("--bodies", action="store_true", help="trickle request bodies instead of headers")
    parser.add_argument("--body-timeout", type=float, default=30)
    parser.add_argument("--file-limit", type=int, default=None, help="the server's file descriptor limit")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)  # ours
    env = {
        "PYRAMIDE_HEADER_TIMEOUT_S": str(args.header_timeout),
        "PYRAMIDE_BODY_TIMEOUT_S": str(args.body_timeout),
        **no_limits_env(),  # the measuring clients are one address: no limit may end the run
    }
    deadline = args.body_timeout if args.bodies else args.header_timeout
    with _file_limit(args.file_limit), pyramide_serve(env) as url:
        port = int(url.rpartition(":")[2])
        asyncio.run(_measure(url, 1))  # warm-up
        idle = asyncio.run(_measure(url, args.seconds))
        attacked, closed, waits = asyncio.run(_under_attack(url, port, args, deadline + args.seconds))
    ratio = statistics.median(attacked) / statistics.median(idle) if attacked else float("inf")
    kind = "slow-body" if args.bodies else "slow-header"
    limit = f"; server file limit {args.file_limit}" if args.file_limit else ""
    print(f"4 prompt clients (game reads, moves); {args.slow} {kind} connections; deadline {deadline} s{limit}")
    print(_row("idle", idle))
    print(_row(f"with {args.slow} slow connections", attacked) if attacked else "  (no answers under attack)")
    print(f"  p50 ratio under attack / idle: {ratio:.2f} (goal <= 2)")
    late = sum(w >= 1 for w in waits)
    print(f"  new clients' wait for /health/live: longest {max(waits) * 1000:.0f} ms, {late} of {len(waits)} >= 1 s")
    print(f"  slow connections closed by the server: {closed} of {args.slow}")
    if not attacked:
        raise BadAnswerError("the prompt clients got no answer, or an error, under attack (above)")


if __name__ == "__main__":
    run_checked(main)
