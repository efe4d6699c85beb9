"""A whole game's cost: the CPU seconds random games cost every process of the service, split by cause.

Usage: .venv/bin/python benchmarks/game_cost.py [--games 50] [--clients 8] [--seed 1] [--servers anonymous,app]
[--max-operations 300] [--quiet-s 2] [--idle-s 5] [--drain-s 600]

Two servers, one after the other, each its own `pyramide serve` (its embedded Redis, its solver pool, every limit
lifted, the request log at INFO as in production, sent to /dev/null): ``anonymous``, where anonymous players play
``plain`` games and ``streams`` games (the game's live stream, ``GET /v1/games/{id}/events``, open while it is
played and read until its finished snapshot); and ``app``, where an app's players (its key and
``Pyramide-Player``) play ``app`` games, and another app's players ``webhooks`` games: that app has one endpoint
for game.won/lost/abandoned, at a receiver on loopback in a process of its own (not counted) that checks each
delivery's signature. A game: dealt at random by the server (``{}``), then moves chosen by a seeded random player
from the snapshot's legal moves (a random removal while there is one, else the draw or turn-over, as
``service_load.py`` plays) until it is won or stuck, abandoned after ``--max-operations``; every answer's status is
checked. ``--clients`` concurrent clients on loopback, each with its own player of each kind.

On each server: a few short warm-up games; a wait until the service is quiet (no tracked background task running
and none started for ``--quiet-s``: the jobs ``/health/ready`` lists, a par or a webhook delivery; no delivery due;
polled every half second, ``--drain-s`` at most); ``--idle-s`` asleep to measure what it spends idle (its periodic
jobs, Redis's timers). Then the two kinds of game alternate in blocks of one game a client, until each kind has
played ``--games``; each block ends when its webhook deliveries are done, so that each block's CPU is its own, and
the alternation puts both kinds under the same load of a shared machine. Last, the wait until quiet again: the
background work the games set off (the pars, in the solver pool) done. CPU seconds of every process (the server,
each solver worker, Redis; ``/proc``, ``process_cpu.py``), less the idle rate over as long: the server's and
Redis's by kind of game (its blocks), the rest over the whole span.

By cause, a game: the request path is the server's and Redis's CPU in the ``plain`` blocks (anonymous players) and in
the ``app`` blocks (an app's players); par is the solver workers' over the span, by game of the server (random games set
off no other search: the searches by kind from ``/metrics`` are printed to show it); after the games is the server's and
Redis's from the last block's end until quiet; a live stream is the ``streams`` blocks' less the ``plain`` blocks' a
move times their moves, webhooks the ``webhooks`` blocks' less the ``app`` blocks' likewise (taken a move, as random
games' lengths differ). Then each kind's total (its blocks' server and Redis, the par and what came after the games, a
game) against its request path: the figure issue 58 asks to bring to 1.3 for ``plain``. The deals are the server's
random ones, so the par a game moves from run to run with them (a median par search takes tens of milliseconds, the
worst seconds). The default, 50 games of each of the four kinds, took 4 to 7 minutes on 2 cores shared with other work
(load 3 to 6); ``--servers anonymous`` (plain and streams games) about half that. Exits non-zero on any answer not the
one expected, a stream without its finished snapshot, a webhook event missing or badly signed, or background work still
running after ``--drain-s``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import httpx
from prometheus_client.parser import text_string_to_metric_families

import process_cpu
from service_load import choose_move, free_port, serve_env, wait_ready
from webhooks import EVENTS, OPERATOR_KEY, drained, receive

SERVERS = {"anonymous": ("plain", "streams"), "app": ("app", "webhooks")}
"""Each server's two kinds of game: the base, and the same players with a feature."""
WARM_UP_GAMES = 2
WARM_UP_OPERATIONS = 20
"""The warm-up's games are short: they start the solver pool, and run every route the games take once."""
POLL_S = 0.5
SETTLE_POLL_S = 0.05
STREAM_END_S = 10.0
"""How long a game's stream may take to bring its finished snapshot after the move that finished it."""
KINDS = ("server", "solver", "redis", "other")


@dataclass
class Served:
    """A running `pyramide serve`: its URL, its process id, its data directory, its metrics' URL."""

    url: str
    pid: int
    data: str
    metrics: str


@dataclass
class Player:
    """A client's player: the headers that name it, its seeded choice of moves."""

    headers: dict[str, str]
    rng: random.Random


@dataclass
class Tally:
    """What the games of one kind came to: games, moves, outcomes, snapshots streamed, errors; with the CPU seconds
    of their blocks by kind of process and how long they took (for the idle rate)."""

    total: int = 0
    started: int = 0
    moves: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    stream_events: int = 0
    errors: list[str] = field(default_factory=list)
    cpu_s: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    wall_s: float = 0.0


@dataclass
class Result:
    """One server's figures: each kind of game's tally, the whole span's CPU seconds by kind of process and what of
    it came after the last game (idle rate taken off), the searches and webhook attempts from its metrics."""

    server: str
    tallies: dict[str, Tally]
    span_cpu_s: dict[str, float]
    after_cpu_s: dict[str, float]
    idle_per_s: dict[str, float]
    drain_s: float
    searches: dict[str, tuple[float, float]]
    webhook_attempts: dict[str, float]
    processes: list[tuple[str, int, float]]
    """Each process alive at the end: its kind, its pid, its CPU seconds over the span (idle not taken off)."""

    @property
    def games(self) -> int:
        return sum(t.started for t in self.tallies.values())


def server_env(metrics_port: int) -> dict[str, str]:
    """`pyramide serve`'s environment (``service_load.serve_env``: every limit off, the clients share one address;
    webhooks to loopback allowed), with room for every client's stream and metrics on a port of their own."""
    return serve_env(OPERATOR_KEY) | {
        "PYRAMIDE_STREAMS_PER_ADDRESS": "10000",
        "PYRAMIDE_STREAMS_PER_PLAYER": "100",
        "PYRAMIDE_METRICS_PORT": str(metrics_port),
    }


@contextmanager
def served() -> Iterator[Served]:
    """`pyramide serve` with a fresh embedded Redis, ready; stopped after."""
    port, metrics_port = free_port(), free_port()
    with tempfile.TemporaryDirectory() as data:
        command = [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", data]
        process = subprocess.Popen(
            command, env=server_env(metrics_port), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_ready(url, 120)
            yield Served(url, process.pid, data, f"http://127.0.0.1:{metrics_port}/metrics")
        finally:
            process.terminate()
            process.wait(timeout=60)


class Watch:
    """A game's live stream, read by a task of its own: how many snapshots came, and whether the finished one did."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response
        self.events = 0
        self.first = asyncio.Event()
        self.finished = asyncio.Event()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        buffer = b""
        async for chunk in self.response.content.iter_any():
            buffer += chunk
            *blocks, buffer = buffer.split(b"\n\n")
            for block in blocks:
                self._event(block)

    def _event(self, block: bytes) -> None:
        lines = block.decode().splitlines()
        if "event: snapshot" not in lines:
            return  # a ping
        self.events += 1
        self.first.set()
        data = next(line.removeprefix("data: ") for line in lines if line.startswith("data: "))
        if json.loads(data)["status"] != "in_progress":
            self.finished.set()

    async def close(self) -> None:
        self.task.cancel()
        with suppress(asyncio.CancelledError):
            await self.task
        self.response.close()


async def _watch(session: aiohttp.ClientSession, game_id: str, headers: dict[str, str], tally: Tally) -> Watch | None:
    """The game's live stream open, its first snapshot read; None (an error noted) if it did not open."""
    response = await session.get(f"/v1/games/{game_id}/events", headers=headers)
    if response.status != 200:
        tally.errors.append(f"stream: {response.status} {(await response.read())[:200]!r}")
        response.close()
        return None
    watch = Watch(response)
    try:
        await asyncio.wait_for(watch.first.wait(), STREAM_END_S)
    except TimeoutError:
        tally.errors.append("stream: no first snapshot")
        await watch.close()
        return None
    return watch


async def _post(session: aiohttp.ClientSession, url: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    async with session.post(url, json=body, headers=headers) as response:
        text = await response.read()
        return response.status, json.loads(text) if text else None


async def _game(session: aiohttp.ClientSession, player: Player, tally: Tally, stream: bool, limit: int) -> None:
    """One game from its deal to its end (won, stuck, or abandoned after ``limit`` moves), its live stream open if
    ``stream``; any answer not the one expected is noted in ``tally.errors`` and ends it."""
    headers = player.headers
    status, game = await _post(session, "/v1/games", {}, headers)
    if status != 201:
        tally.errors.append(f"create: {status} {game}")
        return
    watch = await _watch(session, game["id"], headers, tally) if stream else None
    if stream and watch is None:
        return
    try:
        for _ in range(limit):
            if game["status"] != "in_progress":
                break
            move = choose_move(game["legal_moves"], player.rng)
            status, game = await _post(session, f"/v1/games/{game['id']}/moves", move, headers)
            tally.moves += 1
            if status != 200:
                tally.errors.append(f"move: {status} {game}")
                return
        if game["status"] == "in_progress":
            status, game = await _post(session, f"/v1/games/{game['id']}/abandon", None, headers)
            if status != 200:
                tally.errors.append(f"abandon: {status} {game}")
                return
        tally.outcomes[game["status"]] += 1
        if watch is not None:
            try:
                await asyncio.wait_for(watch.finished.wait(), STREAM_END_S)
            except TimeoutError:
                tally.errors.append("stream: no finished snapshot")
            tally.stream_events += watch.events
    finally:
        if watch is not None:
            await watch.close()


async def _play(url: str, players: list[Player], tally: Tally, stream: bool, limit: int) -> None:
    """One game for each of ``players`` at once (the first ``tally.total - tally.started``), into ``tally``."""
    players = players[: tally.total - tally.started]
    tally.started += len(players)
    connector = aiohttp.TCPConnector(limit=2 * len(players) + 4)
    async with aiohttp.ClientSession(url, connector=connector, timeout=aiohttp.ClientTimeout(total=300)) as session:
        await asyncio.gather(*(_game(session, p, tally, stream, limit) for p in players))


def _players(url: str, server: str, clients: int, seed: int) -> tuple[list[Player], list[Player], str | None]:
    """Each client's player of each kind of game: anonymous players for both, or the players of two apps; and the
    key of the app whose players' games are the ``webhooks`` kind."""
    rngs = [random.Random(seed * 1000 + i) for i in range(2 * clients)]
    with httpx.Client(base_url=url, timeout=60) as http:
        if server == "anonymous":
            tokens = [http.post("/v1/players", json={}) for _ in range(clients)]
            assert all(t.status_code == 201 for t in tokens), [t.text for t in tokens]
            headers = [{"Authorization": f"Bearer {t.json()['token']}"} for t in tokens]
            return (
                [Player(h, r) for h, r in zip(headers, rngs, strict=False)],
                [Player(h, r) for h, r in zip(headers, rngs[clients:], strict=False)],
                None,
            )
        admin = {"Authorization": f"Bearer {OPERATOR_KEY}"}
        keys = []
        for name in ("Plain", "Hooked"):
            app = http.post("/v1/admin/apps", json={"name": name, "scopes": ["players"]}, headers=admin)
            assert app.status_code == 201, app.text
            keys.append(str(app.json()["key"]))
    kinds = [
        [Player({"Authorization": f"Bearer {key}", "Pyramide-Player": f"bench-{i}"}, rngs[k * clients + i])
         for i in range(clients)]
        for k, key in enumerate(keys)
    ]  # fmt: skip
    return kinds[0], kinds[1], keys[1]


def _register(url: str, key: str, hook_port: int) -> str:
    """The app's webhook endpoint at the receiver; its secret."""
    hook = {"url": f"http://127.0.0.1:{hook_port}/hook", "events": EVENTS}
    with httpx.Client(base_url=url, timeout=60) as http:
        registered = http.post("/v1/apps/me/webhooks", json=hook, headers={"Authorization": f"Bearer {key}"})
    assert registered.status_code == 201, registered.text
    return str(registered.json()["secret"])


def _jobs(http: httpx.Client) -> list[dict[str, Any]]:
    """The tracked background tasks ``/health/ready`` lists (a par, an outbox's delivery, ...)."""
    answer = http.get("/health/ready")
    if answer.status_code != 200:
        raise RuntimeError(f"/health/ready answered {answer.status_code}: {answer.text}")
    return [job for job in answer.json()["jobs"] if job["kind"] == "task"]


def wait_quiet(served: Served, quiet_s: float, limit_s: float) -> None:
    """Until no tracked background task has run or started for ``quiet_s`` and no webhook delivery is due (polled
    every :data:`POLL_S`); ``TimeoutError`` after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    quiet_since: float | None = None
    last: int | None = None
    with httpx.Client(base_url=served.url, timeout=30) as http:
        while time.monotonic() < deadline:
            tasks = _jobs(http)
            runs = sum(job["runs"] for job in tasks)
            busy = runs != last or any(job["running"] for job in tasks) or not drained(served.data)
            last, now = runs, time.monotonic()
            if busy:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= quiet_s:
                return
            time.sleep(POLL_S)
    raise TimeoutError(f"background work still running after {limit_s:.0f} s")


def _settle(http: httpx.Client, served: Served, limit_s: float = 60.0) -> None:
    """Until no webhook delivery is due or under way (pars may go on: they are the solver's, counted over the span);
    run after every block, of either kind, so that both pay for its polls."""
    deadline = time.monotonic() + limit_s
    while any(job["running"] for job in _jobs(http) if job["name"] != "par") or not drained(served.data):
        if time.monotonic() > deadline:
            raise TimeoutError(f"webhook deliveries still under way after {limit_s:.0f} s")
        time.sleep(SETTLE_POLL_S)


def _metrics(served: Served) -> dict[tuple[str, str], float]:
    """The solver searches' count and seconds by kind, the webhook attempts by outcome, from ``/metrics``."""
    found: dict[tuple[str, str], float] = {}
    text = httpx.get(served.metrics, timeout=30).text
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name in ("pyramide_solver_search_seconds_count", "pyramide_solver_search_seconds_sum"):
                found[(s.name, s.labels["kind"])] = s.value
            elif s.name == "pyramide_webhook_attempts_total":
                found[(s.name, s.labels["outcome"])] = s.value
    return found


def _idle(served: Served, seconds: float) -> dict[str, float]:
    """CPU seconds a second of each kind of process while nothing is asked of the service."""
    kind = process_cpu.Kind(served.pid)
    start, began = process_cpu.sample(served.pid), time.monotonic()
    time.sleep(seconds)
    spent = process_cpu.spent(start, process_cpu.sample(served.pid), served.pid, kind)
    return {k: v / (time.monotonic() - began) for k, v in spent.items()}


def _blocks(served: Served, kinds: dict[str, list[Player]], args: argparse.Namespace) -> dict[str, Tally]:
    """The kinds of game in alternate blocks, one game a client, until each has played ``--games``; each block's
    CPU by kind of process and its wall time into its kind's tally."""
    tallies = {name: Tally(total=args.games) for name in kinds}
    kind_of = process_cpu.Kind(served.pid)
    with httpx.Client(base_url=served.url, timeout=30) as http:
        while any(t.started < t.total for t in tallies.values()):
            for name, players in kinds.items():
                tally = tallies[name]
                if tally.started >= tally.total:
                    continue
                before, began = process_cpu.sample(served.pid), time.monotonic()
                asyncio.run(_play(served.url, players, tally, name == "streams", args.max_operations))
                _settle(http, served)
                spent = process_cpu.spent(before, process_cpu.sample(served.pid), served.pid, kind_of)
                tally.wall_s += time.monotonic() - began
                for k, v in spent.items():
                    tally.cpu_s[k] += v
                if tally.errors:
                    return tallies
    return tallies


def measure(name: str, args: argparse.Namespace) -> Result:
    """One server (``anonymous`` or ``app``): warm-up, idle, the games in blocks, the wait for their background."""
    receiver: multiprocessing.Process | None = None
    ours, theirs = multiprocessing.Pipe()
    with served() as server:
        base, featured, hooked = _players(server.url, name, args.clients, args.seed)
        if hooked is not None:
            hook_port = free_port()
            secret = _register(server.url, hooked, hook_port)
            receiver = multiprocessing.Process(target=receive, args=(hook_port, secret, theirs), daemon=True)
            receiver.start()
            assert ours.recv() == "ready"
        try:
            kinds = dict(zip(SERVERS[name], (base, featured), strict=True))
            for kind, players in kinds.items():
                warm = Tally(total=WARM_UP_GAMES)
                asyncio.run(_play(server.url, players, warm, kind == "streams", WARM_UP_OPERATIONS))
                if warm.errors:
                    raise RuntimeError(f"warm-up: {warm.errors[:3]}")
            wait_quiet(server, args.quiet_s, args.drain_s)  # the pool started, the day's challenges chosen
            result = _measured(server, name, kinds, args)
            if receiver is not None:
                ours.send("stop")
                got, bad = ours.recv()
                games = len({game for game, _, _ in got})
                tally = result.tallies["webhooks"]
                if bad or games != WARM_UP_GAMES + tally.started:
                    tally.errors.append(
                        f"webhooks: events of {games} games of {WARM_UP_GAMES + tally.started}, {bad} bad"
                    )
        finally:
            if receiver is not None:
                receiver.kill()
    return result


def _measured(served: Served, name: str, kinds: dict[str, list[Player]], args: argparse.Namespace) -> Result:
    """The idle rate; the games in blocks; the wait for their background work; the CPU by kind of game and process."""
    idle = _idle(served, args.idle_s)
    metrics = _metrics(served)
    kind_of = process_cpu.Kind(served.pid)
    before, began = process_cpu.sample(served.pid), time.monotonic()
    tallies = _blocks(served, kinds, args)
    played = time.monotonic()
    if not any(t.errors for t in tallies.values()):
        wait_quiet(served, args.quiet_s, args.drain_s)
    last = process_cpu.sample(served.pid)
    spent = process_cpu.spent(before, last, served.pid, kind_of)
    ended = time.monotonic()
    processes = [(kind_of(last[pid]), pid, s) for pid, s in process_cpu.each(before, last).items()]
    span = {k: spent.get(k, 0.0) - idle.get(k, 0.0) * (ended - began) for k in KINDS}
    for tally in tallies.values():
        tally.cpu_s = {k: tally.cpu_s.get(k, 0.0) - idle.get(k, 0.0) * tally.wall_s for k in KINDS}
    after = {k: span[k] - sum(t.cpu_s[k] for t in tallies.values()) for k in KINDS}
    delta = {key: value - metrics.get(key, 0.0) for key, value in _metrics(served).items()}
    searches = {
        k: (delta[(n, k)], delta[("pyramide_solver_search_seconds_sum", k)])
        for n, k in delta
        if n == "pyramide_solver_search_seconds_count" and delta[(n, k)] > 0
    }
    attempts = {k: v for (n, k), v in delta.items() if n == "pyramide_webhook_attempts_total" and v > 0}
    return Result(name, tallies, span, after, idle, ended - played, searches, attempts, sorted(processes))


def _commit() -> str:
    here = Path(__file__).parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True, check=True)
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, check=True).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.decode().strip() + (" with changes" if dirty.strip() else "")


def _path(tally: Tally) -> float:
    """The server's and Redis's CPU seconds of a kind's blocks."""
    return tally.cpu_s["server"] + tally.cpu_s["redis"]


def _a_game(seconds: float, games: int) -> float:
    return seconds / max(1, games) * 1000


def report(results: list[Result], args: argparse.Namespace, load: tuple[float, ...]) -> None:
    """By server: each kind's blocks, the par, what came after; then the causes and the ratios."""
    loads = f"{'/'.join(f'{x:.1f}' for x in load)} before, {'/'.join(f'{x:.1f}' for x in os.getloadavg())} after"
    print(f"whole random games: {args.games} of each kind, {args.clients} clients, seed {args.seed}, abandoned "
          f"after {args.max_operations} operations; commit {_commit()}; load average {loads}")  # fmt: skip
    for r in results:
        idle = ", ".join(f"{k} {v * 1000:.1f}" for k, v in sorted(r.idle_per_s.items()) if k != "other")
        print(f"{r.server} server (idle CPU ms a second: {idle}); CPU ms a game, idle taken off:")
        print("  kind of game     games  moves/game    server     redis    solver     other   outcomes")
        for kind, t in r.tallies.items():
            outcomes = ", ".join(f"{n} {s}" for s, n in sorted(t.outcomes.items()))
            figures = "".join(f"{_a_game(t.cpu_s[k], t.started):10.1f}" for k in ("server", "redis")) + " " * 20
            events = (
                f"; {t.stream_events / max(1, t.started):.1f} snapshots streamed a game" if kind == "streams" else ""
            )
            print(f"  {kind:<15}{t.started:7d}{t.moves / max(1, t.started):12.1f}{figures}   {outcomes}{events}")
        after = "".join(f"{_a_game(r.after_cpu_s[k], r.games):10.1f}" for k in ("server", "redis", "solver", "other"))
        print(f"  {f'after the games ({r.drain_s:.0f} s)':<34}{after}   (a game of either kind)")
        span = "".join(f"{_a_game(r.span_cpu_s[k], r.games):10.1f}" for k in ("server", "redis", "solver", "other"))
        print(f"  {'the whole span':<34}{span}")
        each = ", ".join(f"{kind} {pid} {_a_game(s, r.games):.1f}" for kind, pid, s in r.processes if s > 0)
        print(f"  each process over the span, idle not taken off: {each}")
        searches = ", ".join(f"{k} {n:.0f} ({s / max(1, n) * 1000:.0f} ms each)" for k, (n, s) in r.searches.items())
        hooks = f"; webhook attempts: {r.webhook_attempts}" if r.webhook_attempts else ""
        print(f"  solver searches (metrics): {searches or 'none'}{hooks}")
    _causes({r.server: r for r in results})


def _causes(by_server: dict[str, Result]) -> None:
    """CPU ms a game by cause, and each kind's total against its request path."""
    print("by cause, CPU ms a game:")
    ratios = []
    for r in by_server.values():
        base, feature = (r.tallies[k] for k in SERVERS[r.server])
        per_move = _path(base) / max(1, base.moves)
        par_game = _a_game(r.span_cpu_s["solver"] + r.span_cpu_s["other"], r.games)
        after = _a_game(r.after_cpu_s["server"] + r.after_cpu_s["redis"], r.games)
        base_name, feature_name = SERVERS[r.server]
        what = f"request path, {base_name} games (server + Redis)"
        print(f"  {what:<58}{_a_game(_path(base), base.started):9.1f}   ({per_move * 1e6:.0f} µs a move)")
        print(f"  {f'par, {r.server} server (solver workers)':<58}{par_game:9.1f}")
        print(f"  {f'after the games, {r.server} server (server + Redis)':<58}{after:9.1f}")
        extra = _a_game(_path(feature) - per_move * feature.moves, feature.started)
        what = (
            f"{'a live stream' if feature_name == 'streams' else 'webhooks'} ({feature_name} less {base_name} a move)"
        )
        print(f"  {what:<58}{extra:9.1f}")
        for t, name in ((base, base_name), (feature, feature_name)):
            own = _a_game(_path(t), t.started) + par_game + after
            path = per_move * t.moves / max(1, t.started) * 1000
            ratios.append(f"{name} {own / path:.2f}" + (" (goal <= 1.3)" if name == "plain" else ""))
    print(f"total / request path: {', '.join(ratios)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50, help="games of each kind")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--servers", default=",".join(SERVERS), help=f"comma-separated, of {', '.join(SERVERS)}")
    parser.add_argument("--max-operations", type=int, default=300)
    parser.add_argument("--quiet-s", type=float, default=2.0)
    parser.add_argument("--idle-s", type=float, default=5.0)
    parser.add_argument("--drain-s", type=float, default=600.0)
    args = parser.parse_args()
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    if unknown := set(servers) - set(SERVERS):
        parser.error(f"unknown servers: {', '.join(sorted(unknown))}")
    load = os.getloadavg()
    results = []
    for name in servers:
        results.append(measure(name, args))
        errors = [e for t in results[-1].tallies.values() for e in t.errors]
        if errors:
            report(results, args, load)
            sys.exit(f"{name}: {len(errors)} errors, the first: {errors[:3]}")
    report(results, args, load)


if __name__ == "__main__":
    main()
