"""Live streams within their own share of a process's connections (issue 56), played for real over loopback from
many source addresses: a flood of streams ends the oldest ones (with ``retry:`` and their last id) and leaves the
API its connections; a mass disconnect gives every lease back at once, with no traceback."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

import httpx
import redis

from pyramide.service.app import create_app
from pyramide.service.http.stream_budget import RETRY_MS
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.settings import Settings
from tests.support.serving import serve_in_thread
from tests.support.streams import LAYOUT, MOVES, RawStream, _game, _player, _serve
from tests.support.waiting import eventually

MAX_CONNECTIONS = 32
BUDGET = MAX_CONNECTIONS // 2
"""The streams' share when ``PYRAMIDE_MAX_STREAMS`` is unset."""
FLOOD = [f"127.0.0.{n}" for n in range(10, 20)]
"""The flood's source addresses: 4 streams each, far within the address's cap (20), 40 in all."""
BOARD = f"/v1/leaderboards/{LAYOUT}/events"


class _Mover:
    """A player whose one connection, opened before the flood, stays open: each move goes over it."""

    def __init__(self, api: str, source: str) -> None:
        self.player = _player(api)
        self.game = _game(api, self.player)["id"]
        host, port = api.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=10, source_address=(source, 0))
        self.connection.connect()
        self.address = self.connection.sock.getsockname()
        self.moves = iter(MOVES)

    def move(self) -> int:
        """The next move's status, asserted to come over the connection opened first."""
        body = json.dumps(next(self.moves))
        headers = {**self.player, "Content-Type": "application/json"}
        self.connection.request("POST", f"/v1/games/{self.game}/moves", body=body, headers=headers)
        response = self.connection.getresponse()
        response.read()
        sock = self.connection.sock
        assert sock is not None and sock.getsockname() == self.address, "the move's connection was closed"
        return response.status


def _new_client(api: str, source: str) -> int:
    """A new client's first request (a connection of its own, from ``source``): its status."""
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=10) as client:
        return client.get(f"{api}/v1/leaderboards/{LAYOUT}").status_code


def test_a_stream_flood_ends_the_oldest_streams_and_leaves_the_api_its_connections(settings: Settings) -> None:
    """The issue's flood scaled down: a process keeps 32 connections, 16 of them for streams (the default share);
    40 board streams come, 4 from each of 10 addresses (within every cap). Each stream past 16 ends the oldest open
    one, which gets ``retry:`` and the last id it was sent, then its connection closes; the 16 newest stay open.
    Meanwhile and after, a player moves over a connection open since before the flood, and 20 new clients are
    answered: not one 503. (Before, the streams took every connection and none ended: the new streams and clients
    got 503, and the player's connection was closed.)"""
    app = create_app(settings.but(http={"max_connections": MAX_CONNECTIONS}))
    with serve_in_thread(app, max_connections=MAX_CONNECTIONS) as api:
        mover = _Mover(api, "127.0.0.30")
        moved = [mover.move()]
        streams: list[RawStream] = []
        try:
            for n in range(40):
                streams.append(RawStream(api, BOARD, FLOOD[n % len(FLOOD)]))
                assert streams[-1].status == 200, streams[-1].raw[-300:]
                assert streams[-1].first()["event"] == "board"  # open, and counted in the budget
                if n % 8 == 7:
                    moved.append(mover.move())
            answered = []
            for n in range(20):
                answered.append(_new_client(api, f"127.0.0.{40 + n}"))
                if n % 2:
                    moved.append(mover.move())
            assert answered == [200] * 20
            assert moved == [200] * 16, "every move answered, over the connection opened first"
            oldest, newest = streams[:-BUDGET], streams[-BUDGET:]
            for stream in oldest:
                *events, end = stream.to_the_end()
                assert end == {"retry": str(RETRY_MS), "id": events[-1]["id"]}, stream.raw[-300:]
            assert all(stream.still_open() for stream in newest)
        finally:
            for stream in streams:
                stream.close()
            mover.connection.close()


def _opened(api: str, source: str) -> RawStream | None:
    """A board stream from ``source`` if it opens (None for a refusal, whose connection is closed)."""
    stream = RawStream(api, BOARD, source)
    if stream.status == 200:
        return stream
    stream.close()
    return None


def _opened_within(api: str, source: str, seconds: float) -> RawStream:
    """A board stream from ``source``, opened within ``seconds`` (refusals, 429 at the cap, tried again)."""
    opened = eventually(lambda: _opened(api, source), seconds, what=f"a stream from {source} again")
    assert opened is not None
    return opened


def test_a_mass_disconnect_gives_every_lease_back_at_once_without_a_traceback(
    tmp_path: Path, redis_server: EmbeddedRedis, redis_client: redis.Redis
) -> None:
    """The issue's mass disconnect scaled down: a real `pyramide serve` whose Redis pool lends 20 connections (100
    by default, through ``max_connections`` in ``REDIS_URL``); 60 board streams from 3 addresses (20 each, the
    address's cap), closed at once. Each address opens its 20 streams again at once, and the server's log holds no
    traceback. (Before, each give-back took a pool connection: most failed with ``MaxConnectionsError``, an
    ``Exception in ASGI application`` traceback each, and their leases kept the addresses at their cap, 429
    ``too_many_streams``, until they ran out 45 s later.)"""
    sources = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
    redis_url = f"{redis_server.url}?max_connections=20"
    with _serve(tmp_path / "a", redis_url) as (api, _):
        log = tmp_path / f"serve-{api.rsplit(':', 1)[1]}.log"
        streams = []
        for source in sources * 20:  # one after the other, as clients come: the pool is not short for them
            streams.append(RawStream(api, BOARD, source))
            assert streams[-1].status == 200, streams[-1].raw[-300:]
            streams[-1].first()
        for stream in streams:
            stream.close()
        again: list[RawStream] = []
        try:
            for source in sources:
                for _ in range(20):
                    again.append(_opened_within(api, source, 3))
        finally:
            for stream in again:
                stream.close()
        text = log.read_text(errors="replace")
        assert "Traceback" not in text and "Exception in ASGI application" not in text, text[-3000:]
