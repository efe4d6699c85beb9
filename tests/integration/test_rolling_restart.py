"""A rolling restart as operators run one (issue 56): three `pyramide serve` replicas on one Redis behind HAProxy,
players moving and live streams open through it, and each replica in turn stopped with SIGTERM and started again.
Nobody may notice: no failed request, no acknowledged move lost, every stream resumed up to its game's last state."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import httpx
import pytest

from tests.support.fleet import Fleet, fleet
from tests.support.steady_load import LiveStream, Player, Tally
from tests.support.waiting import eventually

CLIENTS = 4
"""Players, each with a live stream of its game, each from a loopback address of its own (127.0.0.2 …)."""

ENV = {
    "PYRAMIDE_DRAIN_S": "1.5",
    "PYRAMIDE_STREAM_HEARTBEAT_S": "0.5",
    "PYRAMIDE_TRUSTED_PROXY_HEADER": "X-Forwarded-For",
    "PYRAMIDE_TRUSTED_PROXIES": "127.0.0.1",
    "PYRAMIDE_LIMIT_PLAYERS": "1",
    "PYRAMIDE_LIMIT_MOVES": "0",
    "PYRAMIDE_CHALLENGE_DAYS_AHEAD": "0",
    "PYRAMIDE_SOLVER_WORKERS": "1",
    "PYRAMIDE_SOLVER_TIME_LIMIT_S": "0.5",
    "PYRAMIDE_REQUEST_LOG_LEVEL": "DEBUG",
}
"""The replicas' settings: a drain longer than HAProxy's health interval (200 ms), the balancer's address trusted
for the client's (``option forwardfor``), one new player per minute per client address (each client makes one:
all pass only if every replica tells the clients apart behind the balancer), no limit on a player's moves, no line
logged per request (HAProxy's log has them; the replicas' would cost CPU the restarts need)."""


@pytest.mark.slow
def test_a_rolling_restart_behind_haproxy_fails_no_request_and_loses_no_move(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    """Under steady load through HAProxy, each replica in turn gets SIGTERM, exits 0 and is started again on its
    port: every request is answered 2xx (no 5xx, no connection error), each game read back at the end is at the
    version and move count its player saw acknowledged last, and each live stream, resumed with ``Last-Event-ID``
    whenever it ended (the server saying ``retry:``), ends up at its game's last version."""
    began = time.monotonic()
    with fleet(tmp_path, 3, ENV) as running:
        started = time.monotonic() - began
        tally = Tally()
        players = [Player(running.url, f"127.0.0.{n + 2}", tally) for n in range(CLIENTS)]
        streams = [LiveStream(running.url, f"127.0.0.{n + 2}", p, tally) for n, p in enumerate(players)]
        for thread in (*players, *streams):
            thread.start()
        try:
            eventually(lambda: all(s.last is not None for s in streams), 10, "every stream's first state")
            restarts = [running.restart(replica) for replica in running.replicas]
        finally:
            for player in players:
                player.finish()
        lost = sum(_lost(running, player, tally) for player in players)
        try:
            with suppress(AssertionError):
                eventually(lambda: all(s.last == p.version for s, p in zip(streams, players, strict=True)), 10)
        finally:
            for stream in streams:
                stream.finish()
        behind = sum(s.last != p.version for s, p in zip(streams, players, strict=True))
        times = ", ".join(f"{r.name} {s:.1f} s to exit, {up:.1f} s to UP" for r, (s, up) in zip(
            running.replicas, restarts, strict=True))  # fmt: skip
        figures = (
            f"rolling restart of 3 replicas behind HAProxy: {len(tally.requests)} requests, {len(tally.failures)} "
            f"failed (goal 0); {sum(p.acknowledged for p in players)} moves acknowledged, {lost} lost; "
            f"{sum(s.resumptions for s in streams)} stream resumptions ({sum(s.ends_with_retry for s in streams)} "
            f"ends with retry:, {sum(s.ends_without for s in streams)} without), {behind} streams behind their game; "
            f"{running.resent()} requests HAProxy resent after a refused connection; from SIGTERM: {times}; "
            f"fleet started in {started:.0f} s, {time.monotonic() - began:.0f} s in all"
        )
        print(figures)
        record_property("figure", figures)
        assert not tally.failures, "\n".join(tally.failures[:20])
        assert lost == 0, "every acknowledged move is in its game"
        assert behind == 0, "every stream resumed up to its game's last version"
        assert sum(s.ends_without for s in streams) == 0, "every stream the server ended told its client to retry"
        assert running.resent() == 0, "HAProxy took each replica out (its readiness 503) before its port closed"


def _lost(running: Fleet, player: Player, tally: Tally) -> int:
    """The acknowledged moves missing from the player's game read back through the balancer (its version and move
    count below those its last acknowledged move answered); a read that fails is counted as a failure."""
    read = httpx.get(f"{running.url}/v1/games/{player.game['id']}", headers=player.credentials)
    if not tally.answered(read):
        return 0
    version, moves = int(read.json()["version"]), int(read.json()["moves"])
    return max(player.version - version, player.moves - moves, 0)
