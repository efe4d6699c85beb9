"""A leaderboard filled by several players through HTTP, against a real `pyramide serve` with its embedded Redis.

Usage: .venv/bin/python examples/leaderboard.py [--code PY1-N-AAAAAAS]

Starts the service on a free port (data in a temporary directory), asks it for a winning line of the deal, lets
four players play that deal in their own ways (straight; with draws taken back by undo; after a hint; slowly), one
of them twice, and prints the leaderboard (clean wins first, then the assisted ones that used an undo or a hint) and
one player's statistics as the API returns them.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Any

import httpx

from pyramide.engine.moves import parse_record
from pyramide.service.games.commands_controller import move_body


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _player(client: httpx.Client, name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {client.post('/v1/players', json={'name': name}).json()['token']}"}


def _play(client: httpx.Client, auth: dict[str, str], code: str, line: list[str], *, before: list[dict[str, Any]],
          hint: bool = False, pause_s: float = 0.0) -> dict[str, Any]:  # fmt: skip
    game = client.post("/v1/games", json={"code": code}, headers=auth).json()
    url = f"/v1/games/{game['id']}/moves"
    for body in before:
        client.post(url, json=body, headers=auth).raise_for_status()
    if hint:
        client.get(f"/v1/games/{game['id']}/hint", headers=auth).raise_for_status()
    snapshot: dict[str, Any] = {}
    for move in parse_record(" ".join(line)):
        response = client.post(url, json=move_body(move), headers=auth)
        response.raise_for_status()
        snapshot = response.json()
        time.sleep(pause_s)
    return snapshot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", default="PY1-N-AAAAAAS")
    args = parser.parse_args()
    port = _free_port()
    with tempfile.TemporaryDirectory() as data:
        server = subprocess.Popen(
            [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", data],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
                _wait(client)
                _demo(client, args.code)
        finally:
            server.send_signal(signal.SIGINT)  # Ctrl-C: at once (SIGTERM would drain for a load balancer first)
            server.wait(timeout=20)


def _wait(client: httpx.Client) -> None:
    for _ in range(300):
        try:
            if client.get("/health/ready").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the service did not become ready")


def _demo(client: httpx.Client, code: str) -> None:
    analysis = client.get(f"/v1/deals/{code}/analysis").json()
    if not analysis["winnable"]:
        raise SystemExit(f"{code} is not proven winnable: pick another deal")
    line = analysis["line"]
    ana, bence, csilla, dani = (_player(client, name) for name in ("Ana", "Bence", "Csilla", "Dani"))
    draws_undone = [{"type": "draw"}] * 3 + [{"type": "undo"}] * 3
    _play(client, ana, code, line, before=[], pause_s=0.02)
    # Pauses 10, 30 and 80 ms a move: gaps wide enough that a loaded machine's slower requests keep the order
    _play(client, bence, code, line, before=draws_undone, pause_s=0.01)
    _play(client, csilla, code, line, before=[], hint=True, pause_s=0.03)
    _play(client, dani, code, line, before=[], pause_s=0.08)
    _play(client, ana, code, line, before=[])  # Ana again, faster: her entry improves, she still appears once
    board = client.get(f"/v1/leaderboards/{code}").json()
    print(f"GET /v1/leaderboards/{code}")
    print(json.dumps(board, indent=2))
    print("\nrank  player  elapsed_ms  moves  undos  hints  tier")
    for entry in board["entries"]:
        print(f"{entry['rank']:>4}  {entry['name']:<6}  {entry['elapsed_ms']:>10}  {entry['moves']:>5}"
              f"  {entry['undos']:>5}  {entry['hints']:>5}  {entry['tier']}")  # fmt: skip
    print("\nGET /v1/players/me/stats (Ana)")
    print(json.dumps(client.get("/v1/players/me/stats", headers=ana).json(), indent=2))


if __name__ == "__main__":
    main()
