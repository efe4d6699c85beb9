"""Load, counted in instructions: the server's own work per request, the move route against the bare baseline.

Usage: .venv/bin/python benchmarks/service_instructions.py [--requests 1000] [--clients 32]

The same server as ``service_load.py`` (the app plus a route doing one Redis GET and one SET), run under valgrind's
callgrind, which counts the instructions the server process executes. After a warm-up the counters are zeroed,
``--requests`` baseline requests are sent by ``--clients`` concurrent clients and the count is read; then the same
for moves of whole games on seeded deals, by anonymous players (a player's token), and again by an app's players
(the app's key and ``Pyramide-Player``). A move's figure is the instructions of whole games (each game's creation
included) over their moves: each client plays whole games and starts none once ``--requests`` moves are sent; its
player is made before the count starts (a player is made once and plays many games). The figures as counted before
issue 58 follow, for comparison: each client made its player inside the count, and the last games were cut at
``--requests`` moves, which put a player's and a game's creation on every 31 moves of the default run. Prints
instructions per request and the ratios baseline / move (the throughput ratio the server would reach were
instructions all that counted). Unlike the timings of
``service_load.py``, the counts hardly move with what else the machine is doing (about 1 % between runs), so they
tell whether a change made a request cheaper; they know nothing of caches and stalls, so they are not a timing.
Needs valgrind (``callgrind_control`` beside it); takes a few minutes.

Built to run on a busy machine: callgrind starts with its instrumentation off (``--instr-atstart=no``; the start-up
and the warm-ups run several times faster uncounted) and turns it on only around each counted phase; the server
gets up to ``--ready-timeout`` seconds to start and a Redis timeout of ``--redis-timeout`` seconds (the service's
2 s is short for a process 50 times slower). Every answer's status is checked (a baseline not answering 200 or a
move not answering 200 stops the run, exit status 1): counts of error answers measure nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import NamedTuple

import aiohttp

from pyramide.engine.deal_codes import random_deal_code
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from service_load import answer, choose_move, free_port, run_checked, wait_ready

SERVER = Path(__file__).with_name("service_load.py")


OPERATOR_KEY = "benchmark-operator-key-0123456789abcdef"


async def _player(client: aiohttp.ClientSession, worker: str, seed: int, index: int) -> dict[str, str]:
    """The headers of a fresh player: an anonymous one's token, or an app's key with a user's external id (bound to
    a player by a first request, as an app's user is on the first day)."""
    if worker == "games":
        async with client.post("/v1/players", json={}) as response:
            return {"Authorization": f"Bearer {(await answer(response, 201, 'creating a player'))['token']}"}
    operator = {"Authorization": f"Bearer {OPERATOR_KEY}"}
    async with client.post(
        "/v1/admin/apps", json={"name": f"Bench {seed} {index}", "scopes": ["players"]}, headers=operator
    ) as response:
        key = (await answer(response, 201, "creating an app"))["key"]
    headers = {"Authorization": f"Bearer {key}", "Pyramide-Player": f"user-{seed}-{index}"}
    async with client.get("/v1/players/me", headers=headers) as response:
        await answer(response, 200, "binding an app's user")
    return headers


class Sent(NamedTuple):
    """What a phase sent: the requests counted per figure (baseline requests, or moves), the games created."""

    requests: int
    games: int


async def players(url: str, clients: int, seed: int, worker: str) -> list[dict[str, str]]:
    """The headers of ``clients`` fresh players, made before a phase that plays whole games."""
    async with aiohttp.ClientSession(url) as client:
        return list(await asyncio.gather(*(_player(client, worker, seed, i) for i in range(clients))))


async def _send(
    url: str, clients: int, count: int, seed: int, worker: str, *, made: list[dict[str, str]] | None = None
) -> Sent:
    """``count`` requests of one kind from ``clients`` concurrent clients. For moves, without ``made`` (the figures
    before issue 58's item 4), each client makes its player, then plays until ``count`` moves are sent, cutting the
    last games short; with ``made`` (the players' headers, made before the phase: a player is made once and plays
    many games), each client plays whole games and starts none once ``count`` moves are sent, so a game's creation
    is spread over the moves of a whole game, as it is in play. A game ends won or stuck, or when a whole pass
    through the stock removed nothing: the player walks away (under unlimited turn-overs it would never end)."""
    sent = created = 0
    whole = made is not None
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(url, connector=connector) as client:

        async def baseline(index: int) -> None:
            nonlocal sent
            while sent < count:
                sent += 1
                async with client.post(f"/bench/baseline/k{index}") as response:
                    await answer(response, 200, "the baseline GET+SET")

        async def games(index: int) -> None:
            nonlocal sent, created
            rng = random.Random(seed * 1000 + index)
            headers = made[index] if made else await _player(client, worker, seed, index)
            while sent < count:
                code = str(random_deal_code(randbelow=rng.randrange))
                async with client.post("/v1/games", json={"code": code}, headers=headers) as response:
                    game = await answer(response, 201, "creating a game")
                created += 1
                legal, idle = game["legal_moves"], False  # idle: no removal since the last turn-over
                while legal and (whole or sent < count):
                    body = choose_move(legal, rng)
                    if whole and body["type"] == "recycle":
                        if idle:
                            break  # a whole pass through the stock removed nothing: the player walks away
                        idle = True
                    elif whole and body["type"] != "draw":
                        idle = False
                    sent += 1
                    async with client.post(f"/v1/games/{game['id']}/moves", json=body, headers=headers) as response:
                        snapshot = await answer(response, 200, f"a move ({worker})")
                    legal = [] if snapshot["status"] != "in_progress" else snapshot["legal_moves"]

        run: Callable[[int], Awaitable[None]] = baseline if worker == "baseline" else games
        await asyncio.gather(*(run(i) for i in range(clients)))
    return Sent(sent, created)


def _control(pid: int, *options: str) -> None:
    """``callgrind_control`` on the server (it waits until callgrind has taken the request in)."""
    subprocess.run(["callgrind_control", *options, str(pid)], check=True, capture_output=True, timeout=600)


def _counted(pid: int, out: Path, send: Callable[[], None]) -> int:
    """The instructions the server executed while ``send`` ran: instrumentation on and counters zeroed just before,
    counts dumped and instrumentation off again just after."""
    _control(pid, "--instr=on")
    _control(pid, "--zero")
    send()
    for stale in out.parent.glob(out.name + "*"):
        stale.unlink()
    _control(pid, "--dump")
    _control(pid, "--instr=off")
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        for dump in out.parent.glob(out.name + "*"):
            for line in dump.read_text().splitlines():
                if line.startswith("totals:"):
                    return int(line.split()[1])
        time.sleep(0.5)
    raise RuntimeError("callgrind wrote no counts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--ready-timeout", type=float, default=1800, help="seconds the server may take to start")
    parser.add_argument("--redis-timeout", type=float, default=60, help="the server's Redis timeout, seconds")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data, EmbeddedRedis(Path(data)) as redis:
        port = free_port()
        url, out = f"http://127.0.0.1:{port}", Path(data) / "callgrind.out"
        command = [
            sys.executable,
            str(SERVER),
            "--serve",
            str(port),
            redis.url,
            "--redis-timeout",
            str(args.redis_timeout),
        ]
        valgrind = [
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-instr=no", "--instr-atstart=no",
        ]  # fmt: skip
        env = {**os.environ, "PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY, "PYRAMIDE_DRAIN_S": "0"}
        server = subprocess.Popen(valgrind + command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            wait_ready(url, args.ready_timeout, server)
            counts = _phases(url, server.pid, out, args)
        finally:
            server.terminate()
            server.wait(timeout=120)
    _report(counts, args)


PHASES = (  # (figure, worker, seed, whole games): the same deals for both kinds of move, others for the old count's
    ("baseline", "baseline", 0, False),
    ("move", "games", 1, True),
    ("app move", "app_games", 1, True),
    ("move, cut", "games", 2, False),
    ("app move, cut", "app_games", 2, False),
)


def _phases(url: str, pid: int, out: Path, args: argparse.Namespace) -> dict[str, tuple[int, Sent]]:
    """Each phase's instructions and what it sent, after one uncounted warm-up of each kind of request."""
    counts: dict[str, tuple[int, Sent]] = {}
    for figure, worker, seed, whole in PHASES:
        if not figure.endswith(", cut"):
            asyncio.run(_send(url, args.clients, 300, 100 + seed, worker))  # warm-up
        made = asyncio.run(players(url, args.clients, seed, worker)) if whole else None
        sent: list[Sent] = []

        def send(
            worker: str = worker, seed: int = seed, made: list[dict[str, str]] | None = made, sent: list[Sent] = sent
        ) -> None:
            sent.append(asyncio.run(_send(url, args.clients, args.requests, seed, worker, made=made)))

        counts[figure] = (_counted(pid, out, send), sent[0])
    return counts


def _report(counts: dict[str, tuple[int, Sent]], args: argparse.Namespace) -> None:
    def per(figure: str) -> float:
        total, sent = counts[figure]
        return total / sent.requests

    base = per("baseline")
    print(f"server instructions per request, {args.clients} concurrent clients:")
    print(f"  baseline GET+SET {base:12,.0f}   ({counts['baseline'][1].requests} requests)")
    for figure, name in (("move", "anonymous move"), ("app move", "app player move")):
        sent = counts[figure][1]
        print(
            f"  {name:16} {per(figure):12,.0f}   ratio {base / per(figure):.3f}   ({sent.requests} moves of"
            f" {sent.games} whole games, their creation included; players made before)"
        )
    print(f"as counted before issue 58 (players made in the phase, games cut at {args.requests} moves):")
    for figure, name in (("move, cut", "anonymous move"), ("app move, cut", "app player move")):
        sent = counts[figure][1]
        print(f"  {name:16} {per(figure):12,.0f}   ratio {base / per(figure):.3f}   ({sent.games} games)")


if __name__ == "__main__":
    run_checked(main)
