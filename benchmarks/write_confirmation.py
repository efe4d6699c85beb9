"""What confirming each write costs: CPU time of `pyramide serve` (its HTTP process, and its Redis) per move.

Usage: .venv/bin/python benchmarks/write_confirmation.py [--moves 1500] [--rounds 3]

Each round starts one server for each value of ``PYRAMIDE_CONFIRM_WRITES``: ``always`` (a ``PING`` after every
write), ``auto`` (the default: a ``PING`` only while the disk is low, so none here) and ``never``; each plays
``--moves`` sequential moves (draw, undo, ...) on one game after a warm-up, and reads the CPU time the server
process and its Redis used. CPU time moves less with what else the machine is doing than wall time does, but on a
shared machine it still moves: compare medians of several rounds.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import httpx
import psutil

from service_load import expect, run_checked


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def _moves(http: httpx.Client, auth: dict[str, str], game: str, count: int) -> None:
    for index in range(count):
        body = {"type": "undo" if index % 2 else "draw"}
        answer = http.post(f"/v1/games/{game}/moves", json=body, headers=auth)
        expect(answer.status_code, 200, "a move", answer.text)


def measure(confirm: str, moves: int) -> tuple[float, float]:
    """Microseconds of CPU per move with ``PYRAMIDE_CONFIRM_WRITES=confirm``: the server process's, and its
    Redis's."""
    port, data = _free_port(), tempfile.mkdtemp()
    env = {
        **os.environ,
        "PYRAMIDE_DRAIN_S": "0",
        "PYRAMIDE_LIMIT_MOVES": "0",
        "PYRAMIDE_SOLVER_WORKERS": "1",
        "PYRAMIDE_CONFIRM_WRITES": confirm,
    }
    command = [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", data]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/health/ready").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        server = psutil.Process(process.pid)
        redis = next(c for c in server.children(recursive=True) if "redis-server" in c.name())
        with httpx.Client(base_url=url) as http:
            player = http.post("/v1/players", json={})
            expect(player.status_code, 201, "creating a player", player.text)
            auth = {"Authorization": "Bearer " + player.json()["token"]}
            created = http.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth)
            expect(created.status_code, 201, "creating a game", created.text)
            game = created.json()["id"]
            _moves(http, auth, game, 200)
            server_before, redis_before = _cpu(server), _cpu(redis)
            _moves(http, auth, game, moves)
            server_used, redis_used = _cpu(server) - server_before, _cpu(redis) - redis_before
    finally:
        process.terminate()
        process.wait(timeout=30)
    return server_used / moves * 1e6, redis_used / moves * 1e6


MIN_MOVES = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=1500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.moves < MIN_MOVES:  # CPU time is read in 10 ms ticks: fewer moves measure nothing (and divide by 0)
        parser.error(f"--moves must be at least {MIN_MOVES}")
    results: dict[str, list[tuple[float, float]]] = {"always": [], "auto": [], "never": []}
    for _ in range(args.rounds):
        for confirm, runs in results.items():
            runs.append(measure(confirm, args.moves))
    never = statistics.median(s for s, _ in results["never"])
    for name, runs in results.items():
        server = statistics.median(s for s, _ in runs)
        redis = statistics.median(r for _, r in runs)
        print(
            f"{name:6s}  server {server:6.0f} µs CPU a move ({server / never - 1:+.1%} on never),"
            f" Redis {redis:5.0f} µs (median of {args.rounds})"
        )


if __name__ == "__main__":
    run_checked(main)
