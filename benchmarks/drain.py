"""Time to drain (issue 56): SIGTERM to a real `pyramide serve` under steady load, as a deploy sends it.

Usage: .venv/bin/python benchmarks/drain.py [--workers 2] [--drain-s 15] [--clients 4] [--noticed-s 2]

Starts `pyramide serve` (its embedded Redis, ``--workers`` processes, ``PYRAMIDE_DRAIN_S`` as given), opens a board
stream, and runs ``--clients`` players playing games move by move over kept-alive connections. Then SIGTERM; the
clients go on, as a load balancer's would, until ``--noticed-s`` after readiness turned 503 (a health check's
interval). Prints: the time from SIGTERM to readiness 503; the requests sent after SIGTERM, how many were answered 200
and with ``Connection: close``, and any that failed; when the stream ended and how (``retry:`` and its last id); the
time from SIGTERM to the exit, its code, and the processes it started still running after it.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.streams import LAYOUT, MOVES, RawStream

from service_load import expect, no_limits_env, run_checked


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _play(url: str, stop: threading.Event, sent: list[tuple[float, str]]) -> None:
    with httpx.Client(base_url=url, timeout=10) as client:
        player = client.post("/v1/players", json={})
        expect(player.status_code, 201, "creating a player", player.text)
        auth = {"Authorization": f"Bearer {player.json()['token']}"}
        while not stop.is_set():
            created = client.post("/v1/games", json={"layout": LAYOUT.to_json()}, headers=auth)
            if created.status_code != 201:
                sent.append((time.monotonic(), f"new game {created.status_code} {created.json().get('code')}"))
                return
            game = created.json()["id"]
            for move in MOVES:
                if stop.is_set():
                    return
                at = time.monotonic()
                try:
                    answer = client.post(f"/v1/games/{game}/moves", json=move, headers=auth)
                    sent.append((at, f"{answer.status_code} {answer.headers.get('connection', 'keep-alive')}"))
                except httpx.HTTPError as error:
                    sent.append((at, type(error).__name__))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", default="2")
    parser.add_argument("--drain-s", type=float, default=15.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--noticed-s", type=float, default=2.0)
    args = parser.parse_args()
    port, tmp = _free_port(), Path(tempfile.mkdtemp())
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, **no_limits_env(), "PYRAMIDE_DRAIN_S": str(args.drain_s)}  # the load is one address
    command = [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", str(tmp / "data"),
               "--workers", args.workers]  # fmt: skip
    with (tmp / "serve.log").open("w") as log:
        server = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    while True:
        try:
            if httpx.get(f"{url}/health/ready", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.2)
    family = [psutil.Process(server.pid), *psutil.Process(server.pid).children(recursive=True)]
    stream = RawStream(url, f"/v1/leaderboards/{LAYOUT}/events", "127.0.0.1")
    stream.first()
    stop, sent = threading.Event(), [list[tuple[float, str]]() for _ in range(args.clients)]
    clients = [threading.Thread(target=_play, args=(url, stop, mine), daemon=True) for mine in sent]
    for client in clients:
        client.start()
    time.sleep(2)
    sigterm = time.monotonic()
    server.send_signal(signal.SIGTERM)
    while httpx.get(f"{url}/health/ready", timeout=5).status_code != 503:
        time.sleep(0.01)
    unready = time.monotonic() - sigterm
    time.sleep(args.noticed_s)
    stop.set()
    blocks = stream.to_the_end(args.drain_s + 15)
    ended = time.monotonic() - sigterm
    code = server.wait(timeout=120)
    exited = time.monotonic() - sigterm
    running = set(psutil.pids())
    left = [p.pid for p in family if p.pid in running and p.status() != psutil.STATUS_ZOMBIE]
    before = Counter(outcome.split()[0] for mine in sent for at, outcome in mine if at < sigterm)
    expect(200 if set(before) == {"200"} else 0, 200, "the moves before SIGTERM", dict(before))
    after = Counter(outcome for mine in sent for at, outcome in mine if at >= sigterm)
    print(f"readiness 503 after {unready * 1000:.0f} ms")
    print(f"requests sent after SIGTERM: {sum(after.values())}: {dict(after)}")
    print(f"stream ended after {ended:.2f} s with {blocks[-1]}")
    print(f"exit {code} after {exited:.2f} s; processes left: {left}")


if __name__ == "__main__":
    run_checked(main)
