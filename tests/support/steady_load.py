"""Steady load on a service as integrators make it, each client from a loopback address of its own: players playing
moves on their games (``Idempotency-Key`` and ``If-Match`` on each, every acknowledged version kept), and live
streams of those games that resume with ``Last-Event-ID`` whenever they end. Every answer that is not a 2xx, and
every connection error, is kept as a failure (with what and when); a client whose request failed sends it again with
the same key, as an integrator's retry does, so that the game goes on and nothing is applied twice."""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.support.streams import LAYOUT

THINK_S = 0.05
"""A player's pause between a move's answer and the next move: a steady pace, not a flood (the replicas start and
stop on the same cores meanwhile)."""


@dataclass
class Tally:
    """What every client of one load saw (each thread appends; a list's append is atomic)."""

    started: float = field(default_factory=time.monotonic)
    requests: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def answered(self, response: httpx.Response) -> bool:
        """Counts ``response``; one that is not a 2xx is a failure."""
        self.requests.append(response.status_code)
        if 200 <= response.status_code < 300:
            return True
        request = response.request
        self.fail(f"{request.method} {request.url.path}: {response.status_code} {response.text[:200]}")
        return False

    def fail(self, what: str) -> None:
        self.failures.append(f"{time.monotonic() - self.started:.2f} s: {what}")


def client(api: str, source: str) -> httpx.Client:
    """A keep-alive HTTP client whose connections come from the loopback address ``source``."""
    transport = httpx.HTTPTransport(local_address=source)
    return httpx.Client(base_url=api, transport=transport, timeout=httpx.Timeout(10, read=30))


class Player(threading.Thread):
    """A player on its own game: draws and turns the stock over, one move at a time, until told to stop. Its
    ``version`` and ``moves`` are the game's as the last acknowledged move answered them."""

    def __init__(self, api: str, source: str, tally: Tally) -> None:
        super().__init__(daemon=True)
        self.http, self.tally = client(api, source), tally
        self.stop = threading.Event()
        created = self.http.post("/v1/players", json={})
        assert tally.answered(created), f"{source}'s player (each client address its own limits): {created.text}"
        self.credentials = {"Authorization": f"Bearer {created.json()['token']}"}
        self.http.headers.update(self.credentials)
        game = self.http.post("/v1/games", json={"layout": LAYOUT.to_json()})
        assert tally.answered(game)
        self.game: dict[str, Any] = {}
        self.version = self.moves = self.acknowledged = 0
        self._took(game.json())

    def run(self) -> None:
        while not self.stop.wait(THINK_S):
            legal = self.game["legal_moves"]
            move = {"type": "draw"} if "D" in legal else {"type": "recycle"}
            self._send(move, str(uuid.uuid4()))

    def _send(self, move: dict[str, str], key: str) -> None:
        """The move, again with the same key while it fails (a failure is counted each time)."""
        headers = {"Idempotency-Key": key, "If-Match": f'"{self.version}"'}
        while True:
            try:
                response = self.http.post(f"/v1/games/{self.game['id']}/moves", json=move, headers=headers)
            except httpx.HTTPError as error:
                self.tally.requests.append(0)
                self.tally.fail(f"move {key}: {type(error).__name__} {error}")
                if self.stop.is_set():
                    return
                continue
            if self.tally.answered(response):
                self._took(response.json())
                self.acknowledged += 1
                return
            if self.stop.is_set():
                return

    def _took(self, game: dict[str, Any]) -> None:
        self.game, self.version, self.moves = game, int(game["version"]), int(game["moves"])

    def finish(self) -> None:
        self.stop.set()
        self.join(timeout=30)
        self.http.close()


class LiveStream(threading.Thread):
    """A game's live stream, read as a browser's ``EventSource`` reads it: when the server ends it (``retry:``) or
    the connection drops, it reconnects at once with ``Last-Event-ID``. ``last`` is the last id received."""

    def __init__(self, api: str, source: str, player: Player, tally: Tally) -> None:
        super().__init__(daemon=True)
        self.http, self.tally = client(api, source), tally
        self.path = f"/v1/games/{player.game['id']}/events"
        self.headers = player.credentials
        self.last: int | None = None
        self.opened = 0
        self.ends_with_retry = 0
        self.ends_without = 0
        self.stop = threading.Event()

    @property
    def resumptions(self) -> int:
        return max(0, self.opened - 1)

    def run(self) -> None:
        while not self.stop.is_set():
            headers = self.headers if self.last is None else {**self.headers, "Last-Event-ID": str(self.last)}
            try:
                with self.http.stream("GET", self.path, headers=headers) as response:
                    self.opened += 1
                    if response.status_code != 200:
                        response.read()
                    if self.tally.answered(response):
                        self._read(response)
            except httpx.HTTPError as error:
                if not self.stop.is_set():
                    self.tally.requests.append(0)
                    self.tally.fail(f"stream {self.path} after id {self.last}: {type(error).__name__} {error}")

    def _read(self, response: httpx.Response) -> None:
        retried = False
        for line in response.iter_lines():
            if line.startswith("id: "):
                self.last = int(line.removeprefix("id: "))
            retried = retried or line.startswith("retry: ")
        if retried:
            self.ends_with_retry += 1
        else:
            self.ends_without += 1

    def finish(self) -> None:
        self.stop.set()
        self.http.close()
        self.join(timeout=10)
