"""The stream flood of issue 56 against a real `pyramide serve`: how many connections the API keeps with the live
streams' budget full.

Usage: .venv/bin/python benchmarks/stream_flood.py [--addresses 205] [--per-address 20] [--clients 2000]
[--max-connections 4096] [--path /health/live]

Starts `pyramide serve` (its embedded Redis, one process, ``PYRAMIDE_MAX_CONNECTIONS`` as given, half of them for
streams by default) and opens ``--per-address`` board streams from each of ``--addresses`` loopback addresses
(127.0.1.0 on; 20 is the address's cap), 64 at a time, each waiting for its first event. Then, with the streams
still open, ``--clients`` new clients at once, each on a connection of its own from an address of its own (127.0.2.0
on), ask for ``--path`` and hold their connections until all have been answered. Prints the streams that opened,
those ended to make room (``retry:`` with their last id) and those still open; the server's open connections on its
port (read from the kernel) after the flood and with the clients; what the clients were answered; and the server's
log lines of WARNING and above. Before issue 56 the streams took every connection: the clients got 503.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil

from pyramide.engine.deal_codes import random_deal_code
from service_load import wait_ready

OPENING = 64
"""Streams opened at once."""
CODE = str(random_deal_code())
"""The board every stream follows."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _address(base: str, n: int) -> str:
    return str(ipaddress.ip_address(base) + n)


async def _stream(port: int, source: str, opened: asyncio.Event, outcome: Counter[str]) -> None:
    """One flooding client: a board's stream, read until the server ends it."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    except OSError as error:
        outcome[f"no connection ({type(error).__name__})"] += 1
        opened.set()
        return
    writer.write(f"GET /v1/leaderboards/{CODE}/events HTTP/1.1\r\nHost: flood\r\n\r\n".encode())
    try:
        status = (await reader.readuntil(b"\r\n\r\n")).split(b" ", 2)[1].decode()
        if status != "200":
            outcome[f"refused {status}"] += 1
            return
        seen = b""
        while b"event: board" not in seen:
            chunk = await reader.read(65536)
            if not chunk:
                break
            seen += chunk
        outcome["opened"] += 1
        opened.set()
        while chunk := await reader.read(65536):
            seen = (seen + chunk)[-4096:]
        outcome["ended with retry:" if b"retry: " in seen else "ended without retry:"] += 1
    except (OSError, asyncio.IncompleteReadError) as error:
        outcome[type(error).__name__] += 1
    finally:
        opened.set()
        writer.close()


async def _client(port: int, source: str, path: str, ready: asyncio.Event, done: asyncio.Event) -> str:
    """One new client: connects, asks once, and keeps its connection until every client has been answered."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    except OSError as error:
        ready.set()
        return f"no connection ({type(error).__name__})"
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: flood\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        return head.split(b" ", 2)[1].decode()
    except (OSError, asyncio.IncompleteReadError, TimeoutError) as error:
        return type(error).__name__
    finally:
        ready.set()
        await done.wait()
        writer.close()


def _open_connections(port: int) -> int:
    """The server's established connections on ``port`` (its worker's, whichever process that is)."""
    return sum(
        1
        for c in psutil.net_connections(kind="tcp")
        if c.laddr and c.laddr.port == port and c.status == psutil.CONN_ESTABLISHED
    )


async def _run(port: int, addresses: int, per_address: int, clients: int, path: str) -> None:
    outcome: Counter[str] = Counter()
    streams, started = [], time.monotonic()
    for n in range(addresses * per_address):
        opened = asyncio.Event()
        source = _address("127.0.1.0", n % addresses)
        streams.append((opened, asyncio.create_task(_stream(port, source, opened, outcome))))
        if len(streams) % OPENING == 0:
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e, _ in streams[-OPENING:])), timeout=120)
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e, _ in streams)), timeout=120)
    await asyncio.sleep(2)  # the ended streams' connections closed
    print(f"{addresses * per_address} streams from {addresses} addresses in {time.monotonic() - started:.1f} s:")
    still = outcome["opened"] - outcome["ended with retry:"] - outcome["ended without retry:"]
    print(f"  {dict(sorted(outcome.items()))}; still open: {still}")
    print(f"server's open connections on its port, the streams': {_open_connections(port)}")
    done = asyncio.Event()
    ready = [asyncio.Event() for _ in range(clients)]
    answers = [
        asyncio.create_task(_client(port, _address("127.0.2.0", n), path, ready[n], done)) for n in range(clients)
    ]
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ready)), timeout=120)
    held = _open_connections(port)
    done.set()
    answered = Counter(await asyncio.gather(*answers))
    print(f"{clients} new clients at once, each holding its connection: {dict(sorted(answered.items()))}")
    print(f"server's open connections on its port with them: {held}")
    for _, task in streams:
        task.cancel()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addresses", type=int, default=205)
    parser.add_argument("--per-address", type=int, default=20)
    parser.add_argument("--clients", type=int, default=2000)
    parser.add_argument("--max-connections", type=int, default=4096)
    parser.add_argument("--path", default="/health/live", help="what the new clients ask for")
    options = parser.parse_args()
    wanted = options.addresses * options.per_address + options.clients + 256
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, wanted)), hard))
    port = _free_port()
    with tempfile.TemporaryDirectory() as data:
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
            "PYRAMIDE_DRAIN_S": "0",
            "PYRAMIDE_MAX_CONNECTIONS": str(options.max_connections),
            "PYRAMIDE_SOLVER_TIME_LIMIT_S": "0.5",
            "PYRAMIDE_LOG_LEVEL": "WARNING",
            "PYRAMIDE_REQUEST_LOG_LEVEL": "DEBUG",
        }
        args = [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", data]
        log = Path(data) / "serve.log"
        with log.open("wb") as output:
            process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=output)
        try:
            wait_ready(f"http://127.0.0.1:{port}", 90)
            asyncio.run(_run(port, options.addresses, options.per_address, options.clients, options.path))
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=30)
            said = Counter(
                json.loads(line)["message"][:100] for line in log.read_text().splitlines() if line[:1] == "{"
            )
            print(f"the server's log lines (WARNING and above, at most 100 characters each): {dict(said)}")


if __name__ == "__main__":
    main()
