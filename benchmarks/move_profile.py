"""Where a move's time goes: the server sampled by py-spy while anonymous players play whole games.

Usage: .venv/bin/python benchmarks/move_profile.py [--seconds 30] [--clients 16] [--top 0]

The same server as ``service_load.py`` (its own embedded Redis), warmed up, then sampled (py-spy, 200 samples a
second, its own process) for ``--seconds`` while ``--clients`` concurrent clients play random games through HTTP, as
``service_instructions.py`` does. Prints each part's share of the samples in the server while it was busy: a sample
belongs to the innermost part on its stack (the snapshot's own engine calls count as the snapshot's). Shares of
sampled time, not of instructions: they include the kernel's time in the server's system calls (sending a response,
writing to Redis), which ``service_instructions.py`` does not count. ``--top N`` also prints the N frames with the
most samples, inclusive. Needs py-spy (a dev dependency) and the right to trace a child (root, or ptrace_scope 0).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pyramide.service.infra.embedded_redis import EmbeddedRedis
from service_instructions import OPERATOR_KEY, _send
from service_load import free_port, wait_ready

SERVER = Path(__file__).with_name("service_load.py")
PY_SPY = os.environ.get("PY_SPY", str(Path(sys.executable).with_name("py-spy")))

_LOG = "RequestLog.wrap.<locals>.logged"
_METERED = "RequestMetrics.middleware.<locals>.metered"
PARTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # part: (frames whose whole subtree is the part's, frames counted only for their own samples)
    "request log line": (("RequestLog._line", "request_id"), (_LOG, f"{_LOG}.<locals>.identified")),
    "authentication": (("BearerAuthentication.authenticate_request",), ("AbstractAuthenticationMiddleware.__call__",)),
    "move body parsing": (("parse_body", "move_from_body"), ()),
    "engine: the move": (("Move.apply", "Tap.apply", "Abandon.apply"), ()),
    "snapshot": (("snapshot_json",), ()),
    "stored game to bytes": (("StoredGame.to_bytes",), ()),
    "Redis: script calls (the save)": (("Loaded.__call__",), ()),
    "Redis: other calls": (("Redis.execute_command",), ()),
    "creating players and games (once a game)": (("GameController.create", "PlayerController.create"), ()),
    "reading requests (uvicorn, httptools)": (("GuardedProtocol.data_received",), ()),
    "writing responses (uvicorn, the socket)": (("RequestResponseCycle.send",), ()),
    "metrics": (("RequestMetrics._record",), (_METERED, f"{_METERED}.<locals>.timed_send")),
}


def _frame_name(frame: str) -> str:
    match = re.match(r"(\S+) \(", frame)
    return match.group(1) if match else frame


def _part_of(frames: list[str]) -> str:
    """The innermost part on a stack (root first), or ``other``."""
    for depth in range(len(frames) - 1, -1, -1):
        name = frames[depth]
        for part, (whole, own) in PARTS.items():
            if name in whole or (name in own and depth == len(frames) - 1):
                return part
    return "other (Litestar, middleware, event loop, the handlers' own code)"


def shares(raw: Path) -> tuple[int, collections.Counter[str], collections.Counter[str]]:
    """Samples, samples per part, and inclusive samples per frame, from py-spy's raw (collapsed) output."""
    total, parts, frames_seen = 0, collections.Counter[str](), collections.Counter[str]()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [_frame_name(f) for f in stack.split(";")]
        if "serve" not in frames:
            continue  # not the server's request work (py-spy's own view of other threads)
        total += int(count)
        parts[_part_of(frames)] += int(count)
        for name in set(frames):
            frames_seen[name] += int(count)
    return total, parts, frames_seen


async def _play(url: str, clients: int, seconds: float) -> None:
    deadline, seed = time.monotonic() + seconds, 1
    while time.monotonic() < deadline:
        await _send(url, clients, 500, seed, "games")
        seed += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--top", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as redis:
        port, raw = free_port(), Path(data) / "samples.txt"
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY, "PYRAMIDE_DRAIN_S": "0"}
        command = [sys.executable, str(SERVER), "--serve", str(port), redis.url]
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            wait_ready(url, 300, server)
            asyncio.run(_send(url, args.clients, 300, 100, "games"))  # warm-up
            spy = [PY_SPY, "record", "-p", str(server.pid), "-d", str(args.seconds), "-r", "200"]
            sampler = subprocess.Popen([*spy, "-f", "raw", "-o", str(raw)], stdout=subprocess.DEVNULL)
            asyncio.run(_play(url, args.clients, args.seconds + 2))
            sampler.wait(timeout=60)
        finally:
            server.terminate()
            server.wait(timeout=60)
        total, parts, frames = shares(raw)
    print(f"{total:,} samples of the server's work over {args.seconds} s of moves ({args.clients} clients):")
    for part, count in parts.most_common():
        print(f"  {100 * count / total:5.1f} %  {part}")
    for name, count in frames.most_common(args.top):
        print(f"  {100 * count / total:5.1f} %  (inclusive) {name}")


if __name__ == "__main__":
    main()
