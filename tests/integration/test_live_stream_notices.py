"""Live streams whose change notices Redis's link breaks silently: a real `pyramide serve` talks to the real
(embedded) Redis through a TCP proxy on loopback, which stops forwarding the server's subscribed connection without
closing it, as a NAT or a firewall that forgets a long idle connection does. A change made through the server must
still reach an open stream within seconds (before, only TCP noticed, after minutes: the stream stayed silent). And
an erasure that takes a player's entry off a board is a board change its open streams see."""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from pyramide.service.infra.settings import Settings
from tests.support.par import _until_decided
from tests.support.streams import CAPS, LAYOUT, MOVES, Sse, _game, _play, _player, _serve, _served, _until
from tests.support.waiting import eventually

PING_S = 0.5
"""The server's PYRAMIDE_STREAM_NOTICES_PING_S here: a silent connection is taken for dead within twice that."""
BOUND_S = 5.0
"""How soon a change must reach the stream after the freeze (a second PING, a reconnection and a read fit well)."""


class _Link:
    """One client's connection through the proxy, and the Redis connection it goes to."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.sent = b""
        """The first bytes the client sent (enough to see a SUBSCRIBE)."""
        self.frozen = False
        self.lock = threading.Lock()
        """Held while bytes are forwarded: once :meth:`freeze` returns, not one more is."""

    def freeze(self) -> None:
        with self.lock:
            self.frozen = True

    def pump(self, stop: threading.Event) -> None:
        """Forwards both ways until either side closes; frozen, it forwards nothing and closes nothing."""
        peers = {self.client: self.upstream, self.upstream: self.client}
        try:
            while not stop.is_set():
                readable, _, _ = select.select(list(peers), [], [], 0.05)
                with self.lock:
                    if self.frozen:
                        time.sleep(0.05)
                        continue
                    for source in readable:
                        data = source.recv(65536)
                        if not data:
                            return
                        if source is self.client and len(self.sent) < 65536:
                            self.sent += data
                        peers[source].sendall(data)
        except OSError:
            pass
        finally:
            for end in peers:
                end.close()


class FreezingProxy:
    """A TCP proxy on loopback to a Redis unix socket, which can freeze the connections it carries."""

    def __init__(self, redis_socket: str) -> None:
        self.redis_socket = redis_socket
        self.links: list[_Link] = []
        self.stop = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.port: int = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:  # closed
                return
            upstream = socket.socket(socket.AF_UNIX)
            upstream.connect(self.redis_socket)
            link = _Link(client, upstream)
            self.links.append(link)
            threading.Thread(target=link.pump, args=(self.stop,), daemon=True).start()

    def freeze_subscribers(self) -> int:
        """Stops forwarding every connection that has subscribed so far (left open); how many."""
        subscribed = [link for link in self.links if b"SUBSCRIBE" in link.sent.upper()]
        for link in subscribed:
            link.freeze()
        return len(subscribed)

    def close(self) -> None:
        self.stop.set()
        self.listener.close()


@contextmanager
def _proxy(settings: Settings) -> Iterator[FreezingProxy]:
    assert settings.redis.url is not None and settings.redis.url.startswith("unix://")
    proxy = FreezingProxy(settings.redis.url.removeprefix("unix://").split("?")[0])
    try:
        yield proxy
    finally:
        proxy.close()


def test_a_stream_still_follows_changes_after_its_redis_link_dies_silently(settings: Settings, tmp_path: Path) -> None:
    """A game's stream open on a server whose pub/sub connection then stops answering (frozen by the proxy, never
    closed): a move made through the server reaches the stream within BOUND_S, and so does a later one (the server
    subscribed again on a new connection, it did not merely read the state once)."""
    with (
        _proxy(settings) as proxy,
        _serve(
            tmp_path / "unused",
            f"redis://127.0.0.1:{proxy.port}/0",
            **CAPS,
            PYRAMIDE_STREAM_NOTICES_PING_S=str(PING_S),
        ) as (api, _),
    ):
        player = _player(api)
        game = _game(api, player)
        stream = Sse(f"{api}/v1/games/{game['id']}/events", player)
        try:
            assert stream.next()["id"] == game["version"]
            # the SUBSCRIBE is written before the first event but may still sit in the proxy's socket: wait for it
            assert eventually(proxy.freeze_subscribers, what="the server's SUBSCRIBE through the proxy") == 1
            started = time.monotonic()
            moved = _play(api, player, game["id"], MOVES[:1])
            event = stream.next(timeout=BOUND_S)
            assert event["id"] == moved["version"], event
            print(f"a move reached the stream {time.monotonic() - started:.2f} s after the freeze")
            later = _play(api, player, game["id"], MOVES[1:2])
            assert stream.next(timeout=2 * PING_S + 1)["id"] == later["version"]
        finally:
            stream.close()


def test_a_board_stream_sees_an_erased_players_entry_go(settings: Settings) -> None:
    """A player wins the deal and its entry shows on the board's open stream; the player erases itself: the
    stream's next event (the board's next change) no longer shows the entry, as the board's GET does not."""
    with _served(settings) as api:
        code = str(LAYOUT)
        stream = Sse(f"{api}/v1/leaderboards/{code}/events")
        try:
            assert stream.next()["data"]["entries"] == []
            with httpx.Client(base_url=api, timeout=10) as client:  # the first event started the deal's par: it
                _until_decided(client, code)  # is saved first (an event of its own), so the win's event shows it
            player = _player(api)
            assert _play(api, player, _game(api, player)["id"], MOVES)["status"] == "won"
            entered = _until(stream, lambda board: len(board["entries"]) == 1)
            erased = httpx.delete(f"{api}/v1/players/me", headers=player)
            assert erased.status_code == 204, erased.text
            after = stream.next(timeout=5)
            assert after["id"] > entered["id"] and after["data"]["entries"] == [], after
            assert after["data"] == httpx.get(f"{api}/v1/leaderboards/{code}").json()
        finally:
            stream.close()
