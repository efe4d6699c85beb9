"""Storage growth: how fast one client address can grow Redis within the default limits and quotas.

Usage: .venv/bin/python benchmarks/storage_growth.py [--seconds 120] [--concurrency 16] [--address 127.0.0.1]
[--moves 0]

Starts a real ``pyramide serve`` (default settings: rate limits, daily quotas, unfinished-game cap, the embedded Redis
with ``maxmemory`` 1gb) on a free loopback port, then drives it from one source address at full speed for
``--seconds``: players are created as fast as the service lets (waiting out ``rate_limited``, stopping at
``quota_exceeded``), and every player creates games as fast as it may, abandoning its oldest unfinished game when
the cap refuses a new one (abandoned games are kept for good: the most a client can store). Redis's ``used_memory``
is sampled throughout. Prints what was stored, bytes per player and per game, the growth in bytes per minute, and
the projected time to fill the default ``maxmemory`` (the quotas start afresh after a day, so a day's growth at most
is what one address adds each day). With ``--moves S``, the players then play their open games for ``S`` more seconds
(draw and undo, each with a fresh Idempotency-Key, as fast as the service serves them), and the growth and what each
kind of key holds (``MEMORY USAGE``) are printed, with the moves served a minute (the address's allowance,
``PYRAMIDE_LIMIT_ADDRESS_MOVES``, refuses past it: the players wait out the 429) and the projected time to fill
the default ``maxmemory`` at that growth. The limits' refusals (429, and 409 for the cap of unfinished games) are
what is measured; any other status than the route's own stops the run (exit status 1).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import redis

from pyramide.service.infra.settings import LimitName, Limits
from service_load import BadAnswerError, expect, run_checked

MAXMEMORY = 1024**3  # the default PYRAMIDE_REDIS_MAXMEMORY, 1gb
DAY_S = 24 * 3600


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """``pyramide serve`` with every setting at its default (no PYRAMIDE_ variable passed on)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYRAMIDE_") and k not in ("REDIS_URL",)}
    env["PYRAMIDE_DRAIN_S"] = "0"  # its SIGTERM at the end stops at once
    command = [sys.executable, "-m", "pyramide.cli", "serve", "--port", str(port), "--data-dir", str(data_dir)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health/ready", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    server.kill()
    raise RuntimeError("pyramide serve did not become ready in 60 s")


class Driver:
    """One address at full speed: players and games, counted by outcome."""

    def __init__(self, client: httpx.AsyncClient, until: float) -> None:
        self.client = client
        self.until = until
        self.players: list[dict[str, str]] = []
        self.open: dict[int, collections.deque[str]] = collections.defaultdict(collections.deque)
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.players_done = False
        self.quota_reached_at: dict[str, float] = {}

    def _refused(self, kind: str, response: httpx.Response) -> str:
        if response.status_code not in (409, 429):
            raise BadAnswerError(f"{kind}: answered {response.status_code}: {response.text[:300]}")
        code = str(response.json().get("code", response.status_code))
        self.outcomes[f"{kind} {code}"] += 1
        if code == "quota_exceeded":
            self.quota_reached_at.setdefault(kind, time.monotonic())
        return code

    async def make_players(self) -> None:
        while time.monotonic() < self.until:
            response = await self.client.post("/v1/players", json={})
            if response.status_code == 201:
                self.outcomes["player created"] += 1
                self.players.append({"Authorization": f"Bearer {response.json()['token']}"})
                continue
            code = self._refused("player", response)
            if code == "quota_exceeded":
                break
            await asyncio.sleep(min(float(response.headers.get("retry-after", "1")), self.until - time.monotonic()))
        self.players_done = True

    async def make_games(self, worker: int, workers: int) -> None:
        turn = worker
        while time.monotonic() < self.until and "game" not in self.quota_reached_at:
            if len(self.players) <= turn % max(1, len(self.players)) or not self.players:
                await asyncio.sleep(0.01)
                continue
            index = turn % len(self.players)
            turn += workers
            auth = self.players[index]
            response = await self.client.post("/v1/games", json={}, headers=auth)
            if response.status_code == 201:
                self.outcomes["game created"] += 1
                self.open[index].append(response.json()["id"])
                continue
            code = self._refused("game", response)
            if code == "too_many_unfinished_games" and self.open[index]:
                oldest = self.open[index].popleft()
                abandoned = await self.client.post(f"/v1/games/{oldest}/abandon", headers=auth)
                expect(abandoned.status_code, 200, "abandoning a game", abandoned.text)
                self.outcomes[f"abandon {abandoned.status_code}"] += 1
            elif code == "rate_limited" and self.players_done and len(self.players) <= workers:
                await asyncio.sleep(0.5)


async def _drive(
    base: str, address: str, seconds: float, concurrency: int, *, then: Callable[[Driver], Awaitable[None]]
) -> Driver:
    """Creation at full speed for ``seconds``; then ``then`` with the same client (the moves phase)."""
    limits = httpx.Limits(max_connections=concurrency + 1)
    transport = httpx.AsyncHTTPTransport(local_address=address, limits=limits)
    async with httpx.AsyncClient(base_url=base, transport=transport, timeout=30) as client:
        driver = Driver(client, time.monotonic() + seconds)
        await asyncio.gather(driver.make_players(), *(driver.make_games(i, concurrency) for i in range(concurrency)))
        await then(driver)
        return driver


async def _moves(driver: Driver, store: redis.Redis, seconds: float, concurrency: int) -> None:
    """The moves phase, and what it added."""
    before, started = _used(store), time.monotonic()
    statuses = await _play(driver, seconds, concurrency)
    grown, elapsed = _used(store) - before, time.monotonic() - started
    played = statuses.get("200", 0)
    per_minute = grown / elapsed * 60
    print(f"moves for {elapsed:.0f} s: {dict(statuses)}; +{grown:,} bytes ({per_minute:,.0f} a minute,")
    print(
        f"{grown / max(1, played):,.0f} a move over {len(driver.open)} players' {sum(map(len, driver.open.values()))}"
    )
    print(f"open games); keys (count, bytes) by kind: {_by_kind(store)}")
    allowance = Limits().per_minute[LimitName.ADDRESS_MOVES]
    print(
        f"moves served {played / elapsed * 60:,.0f} a minute (the address's allowance: {allowance:,});"
        f" at {per_minute:,.0f} bytes a minute the default maxmemory (1gb) fills in"
        f" {MAXMEMORY / max(1.0, per_minute) / 60:,.1f} hours"
    )


async def _play(driver: Driver, seconds: float, concurrency: int) -> collections.Counter[str]:
    """Draw and undo on every open game, each request with a fresh Idempotency-Key, ``concurrency`` at a time."""
    games = [(driver.players[i], game) for i, ids in driver.open.items() for game in ids]
    until = time.monotonic() + seconds
    statuses: collections.Counter[str] = collections.Counter()

    async def worker(first: int) -> None:
        turn, moves = first, ("draw", "undo")
        while time.monotonic() < until and games:
            auth, game = games[turn % len(games)]
            body = {"type": moves[(turn // len(games)) % 2]}
            headers = {**auth, "Idempotency-Key": f"bench-{turn}-{time.monotonic_ns()}"}
            response = await driver.client.post(f"/v1/games/{game}/moves", json=body, headers=headers)
            if response.status_code not in (200, 429):
                raise BadAnswerError(f"a move answered {response.status_code}: {response.text[:300]}")
            ok = response.status_code == 200
            statuses["200" if ok else str(response.json().get("code", response.status_code))] += 1
            turn += concurrency
            if response.status_code == 429:  # the address's allowance: wait for the next minute, as a client would
                wait = float(response.headers.get("retry-after", "1"))
                await asyncio.sleep(max(0.0, min(wait, until - time.monotonic())))

    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return statuses


def _by_kind(store: redis.Redis) -> dict[str, tuple[int, int]]:
    """Keys and their ``MEMORY USAGE`` by kind (the last part of a key: state, record, idem, kept, list, …)."""
    kinds: dict[str, tuple[int, int]] = {}
    for key in store.scan_iter("pyr:*", count=1000):
        tail = key.decode().split("}:")[-1]
        kind = tail.split(":")[2] if tail.startswith("g:") else tail.split(":")[0]
        count, size = kinds.get(kind, (0, 0))
        kinds[kind] = (count + 1, size + int(store.memory_usage(key) or 0))
    return dict(sorted(kinds.items(), key=lambda item: -item[1][1]))


def _used(client: redis.Redis) -> int:
    return int(client.info("memory")["used_memory"])


PROBE_PLAYERS = 120


def _probe(base: str, address: str, store: redis.Redis) -> float:
    """Bytes per player, measured alone with ``used_memory`` before and after ``PROBE_PLAYERS`` players (from
    another loopback address: the run's own quotas stay whole)."""
    probe_address = "127.0.0.3" if address != "127.0.0.3" else "127.0.0.4"
    transport = httpx.HTTPTransport(local_address=probe_address)
    with httpx.Client(base_url=base, transport=transport, timeout=30) as client:
        before = _used(store)
        for _ in range(PROBE_PLAYERS):
            created = client.post("/v1/players", json={})
            expect(created.status_code, 201, "creating a player", created.text)
        return (_used(store) - before) / PROBE_PLAYERS


def _worst_minute(samples: list[tuple[float, int]]) -> int:
    """The most ``used_memory`` grew in any 60 s between two samples (or over the run, when shorter)."""
    return max(
        (later - earlier for t0, earlier in samples for t1, later in samples if 0 < t1 - t0 <= 60.5),
        default=samples[-1][1] - samples[0][1],
    )


def _report(
    driver: Driver, started: float, seconds: float, per_player: float, samples: list[tuple[float, int]]
) -> None:
    """What grew, per player and per game, and the day's worst case under the default quotas."""
    defaults = Limits()
    quota_players, quota_games = defaults.per_day[LimitName.PLAYERS], defaults.per_day[LimitName.GAMES]
    address_games = defaults.per_minute[LimitName.ADDRESS_GAMES]
    players, games = driver.outcomes["player created"], driver.outcomes["game created"]
    grown = samples[-1][1] - samples[0][1]
    per_game = (grown - players * per_player) / max(1, games)
    worst_minute = _worst_minute(samples)
    day = quota_players * per_player + quota_games * per_game
    minute = 240 * per_player + 2 * address_games * per_game
    print(f"ran {seconds:.0f} s from one address; outcomes: {dict(sorted(driver.outcomes.items()))}")
    for kind, at in sorted(driver.quota_reached_at.items()):
        print(f"{kind} quota reached after {at - started:.1f} s")
    print("used_memory (s, bytes): " + ", ".join(f"({t:.0f}, {m:,})" for t, m in samples))
    print(f"grew {grown:,} bytes: {grown / (seconds / 60):,.0f} bytes a minute over the run, at most {worst_minute:,}")
    print(
        f"in any 60 s; {per_player:,.0f} bytes per player ({PROBE_PLAYERS} alone), {per_game:,.0f} per game (the"
        " rest of the run's growth, with its player's lists, results and counters)"
    )
    print(
        f"worst case a day (quotas {quota_players} players, {quota_games} games):"
        f" {day:,.0f} bytes; the default maxmemory (1gb) fills in {MAXMEMORY / day:,.0f} days; worst minute"
        f" of creation (240 players; two windows of the address's games limit, {address_games} a"
        f" minute): {minute:,.0f} bytes; moves and kept responses add to it (docs/security.md, Bounded memory)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--address", default="127.0.0.1", help="the loopback source address the client uses")
    parser.add_argument("--moves", type=float, default=0.0, help="then play the open games for this many seconds")
    args = parser.parse_args()
    port = _free_port()
    with tempfile.TemporaryDirectory() as data:
        server = _start(Path(data), port)
        try:
            store = redis.Redis(unix_socket_path=str(Path(data) / "redis.sock"))
            probe = _probe(f"http://127.0.0.1:{port}", args.address, store)
            samples: list[tuple[float, int]] = []
            started = time.monotonic()

            async def sample() -> None:
                while True:
                    samples.append((time.monotonic() - started, _used(store)))
                    await asyncio.sleep(5)

            async def run() -> Driver:
                sampler = asyncio.create_task(sample())

                async def then(driver: Driver) -> None:
                    sampler.cancel()
                    samples.append((time.monotonic() - started, _used(store)))
                    _report(driver, started, time.monotonic() - started, probe, samples)
                    if args.moves > 0:
                        await _moves(driver, store, args.moves, args.concurrency)

                base = f"http://127.0.0.1:{port}"
                return await _drive(base, args.address, args.seconds, args.concurrency, then=then)

            asyncio.run(run())
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    run_checked(main)
