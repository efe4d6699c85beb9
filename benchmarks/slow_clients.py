"""Slow clients against `pyramide serve`: do connections that trickle their request headers hurt everyone else?

Usage: .venv/bin/python benchmarks/slow_clients.py [--slow 500] [--seconds 8] [--header-timeout 10]

Starts `pyramide serve` (embedded Redis) in its own process, then measures the p50 and p99 of game reads and moves
from 4 prompt clients, first on an idle server, then while ``--slow`` connections send their headers one byte at a
time (a slowloris). Prints both, their ratio (goal: p50 at most 2x idle) and how many slow connections the server
had closed by the end (all of them, once the header deadline has passed).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import httpx

from service_load import pyramide_serve


async def _prompt_client(url: str, until: float, latencies: list[float]) -> None:
    async with httpx.AsyncClient(base_url=url) as client:
        token = (await client.post("/v1/players", json={})).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        game = (await client.post("/v1/games", json={}, headers=auth)).json()
        while time.monotonic() < until:
            started = time.monotonic()
            snapshot = (await client.get(f"/v1/games/{game['id']}", headers=auth)).json()
            latencies.append(time.monotonic() - started)
            body = {"type": "draw"} if "D" in snapshot["legal_moves"] else {"type": "undo"}
            started = time.monotonic()
            await client.post(f"/v1/games/{game['id']}/moves", json=body, headers=auth)
            latencies.append(time.monotonic() - started)


async def _measure(url: str, seconds: float) -> list[float]:
    latencies: list[float] = []
    until = time.monotonic() + seconds
    await asyncio.gather(*(_prompt_client(url, until, latencies) for _ in range(4)))
    return latencies


async def _slow_connection(port: int, until: float, closed: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    header = b"GET /health/live HTTP/1.1\r\nHost: slow\r\nX-Padding: " + b"a" * 4096
    try:
        for byte in header:
            if time.monotonic() > until or reader.at_eof():
                break
            writer.write(bytes([byte]))
            await writer.drain()
            try:
                if await asyncio.wait_for(reader.read(1000), timeout=1.0) == b"" or reader.at_eof():
                    closed.append(1)
                    return
            except TimeoutError:
                pass
    except ConnectionError:
        closed.append(1)
    finally:
        writer.close()


async def _under_attack(url: str, port: int, slow: int, seconds: float) -> tuple[list[float], int]:
    closed: list[int] = []
    until = time.monotonic() + seconds
    attackers = [asyncio.create_task(_slow_connection(port, until + 5, closed)) for _ in range(slow)]
    await asyncio.sleep(1)  # every slow connection open and trickling
    latencies = await _measure(url, seconds - 1)
    await asyncio.gather(*attackers, return_exceptions=True)
    return latencies, len(closed)


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
    args = parser.parse_args()
    env = {"PYRAMIDE_HEADER_TIMEOUT_S": str(args.header_timeout), "PYRAMIDE_LIMIT_MOVES": "0"}
    with pyramide_serve(env) as url:
        port = int(url.rpartition(":")[2])
        asyncio.run(_measure(url, 1))  # warm-up
        idle = asyncio.run(_measure(url, args.seconds))
        attacked, closed = asyncio.run(_under_attack(url, port, args.slow, args.header_timeout + args.seconds))
    ratio = statistics.median(attacked) / statistics.median(idle)
    print(
        f"4 prompt clients (game reads, moves); {args.slow} slow-header connections; deadline {args.header_timeout} s"
    )
    print(_row("idle", idle))
    print(_row(f"with {args.slow} slow connections", attacked))
    print(f"  p50 ratio under attack / idle: {ratio:.2f} (goal <= 2)")
    print(f"  slow connections closed by the server: {closed} of {args.slow}")


if __name__ == "__main__":
    main()
