"""Idle live streams: what 1,000 open Server-Sent Events streams cost a real `pyramide serve`.

Usage: .venv/bin/python benchmarks/streams.py [--streams 1000] [--idle-s 60]

Starts `pyramide serve` (its embedded Redis, one process, the default heartbeat of 15 s), opens ``--streams`` board
streams (each on a deal code of its own: as many Redis channels) from loopback, waits for each one's first event,
then leaves them idle for ``--idle-s`` seconds while the clients read the pings. Prints, read from /proc of the
server process: its RSS before and with the streams open (growth per stream), its CPU seconds per minute idle, and
the Redis connections open (one pub/sub connection per process, whatever the number of streams; the
service's own pool grows with the requests in flight while the streams open, 32 at a time).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from pyramide.engine.deal_codes import random_deal_code
from service_load import expect, run_checked, wait_ready

OPENING = 32
"""Streams opened at once (the service's Redis pool grows with requests in flight, not with open streams)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def _open(port: int, code: str, first: asyncio.Event, pings: list[int]) -> None:
    """One idle client: the request, then reading for ever (counting pings)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /v1/leaderboards/{code}/events HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
    await writer.drain()
    status_line = await reader.readline()
    expect(int(status_line.split(b" ", 2)[1]), 200, f"the board stream of {code}", status_line)
    while True:
        chunk = await reader.read(65536)
        if not chunk:
            return
        if b"event: board" in chunk:
            first.set()
        pings[0] += chunk.count(b": ping")


async def _run(port: int, streams: int, idle_s: float, pid: int, redis_url: str) -> None:
    await asyncio.sleep(1)
    before = _rss_kib(pid)
    codes = {str(random_deal_code()) for _ in range(streams * 2)}
    firsts = [asyncio.Event() for _ in range(streams)]
    pings = [0]
    tasks = []
    started = time.monotonic()
    for code, first in zip(sorted(codes), firsts, strict=False):  # opened 32 at a time, as clients arrive
        tasks.append(asyncio.create_task(_open(port, code, first, pings)))
        if len(tasks) % OPENING == 0:
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in firsts[: len(tasks)])), timeout=60)
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in firsts)), timeout=300)
    print(f"{streams} streams open, each with its first event, in {time.monotonic() - started:.1f} s")
    await asyncio.sleep(2)
    opened = _rss_kib(pid)
    cpu = _cpu_s(pid)
    pings[0] = 0
    await asyncio.sleep(idle_s)
    spent = _cpu_s(pid) - cpu
    idle_rss = _rss_kib(pid)
    clients = redis.Redis.from_url(redis_url).client_list()
    pubsub = sum(1 for c in clients if int(c.get("sub", 0)) > 0)
    print(f"server RSS: {before / 1024:.1f} MiB before, {opened / 1024:.1f} MiB open, {idle_rss / 1024:.1f} MiB after")
    print(f"  growth: {(idle_rss - before) / 1024:.1f} MiB, {(idle_rss - before) / streams:.1f} KiB per stream")
    print(f"server CPU while idle: {spent * 60 / idle_s:.2f} s per minute ({pings[0]} pings read in {idle_s:.0f} s)")
    print(f"Redis connections: {len(clients)} in all, {pubsub} subscribed (pub/sub)")
    for task in tasks:
        task.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--idle-s", type=float, default=60.0)
    options = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, options.streams * 2 + 256)), hard))
    port = _free_port()
    with tempfile.TemporaryDirectory() as data:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
            "PYRAMIDE_DRAIN_S": "0",
            "PYRAMIDE_STREAMS_PER_ADDRESS": str(options.streams + 10),
            "PYRAMIDE_SOLVER_TIME_LIMIT_S": "0.5",
            "PYRAMIDE_LOG_LEVEL": "WARNING",
            "PYRAMIDE_REQUEST_LOG_LEVEL": "WARNING",
        }
        args = [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", data]
        process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(f"http://127.0.0.1:{port}", 60)
            asyncio.run(_run(port, options.streams, options.idle_s, process.pid, f"unix://{data}/redis.sock"))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)


if __name__ == "__main__":
    run_checked(main)
