"""Live streams (Server-Sent Events) read by a test: a stream client (a thread each, or a bare socket from a loopback
source address of its own, many at once), games played over HTTP, and `pyramide serve` processes on one Redis."""

from __future__ import annotations

import json
import os
import queue
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.settings import Settings
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.serving import START_S, _free_port, serve_in_thread
from tests.support.waiting import eventually

LAYOUT = DealCode.for_layout(easy_game().layout)


MOVES = [move_body(m) for m in parse_record(EASY_CLEARING)]


class Sse:
    """One client's open event stream, read in a thread: its status, then each event (``ping`` for a comment)."""

    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.items: queue.Queue[dict[str, Any]] = queue.Queue()
        self.opened = threading.Event()
        self.status = 0
        self.headers: httpx.Headers = httpx.Headers()
        self.body = ""
        self.retry: int | None = None
        self.ended = threading.Event()
        self._client = httpx.Client(timeout=httpx.Timeout(10, read=None))
        threading.Thread(target=self._read, args=(url, headers or {}), daemon=True).start()
        assert self.opened.wait(10), "the stream did not answer"

    def _read(self, url: str, headers: dict[str, str]) -> None:
        try:
            with self._client.stream("GET", url, headers=headers) as response:
                self.status, self.headers = response.status_code, response.headers
                if response.status_code != 200:
                    self.body = response.read().decode()
                    self.opened.set()
                    return
                self.opened.set()
                event: dict[str, Any] = {}
                for line in response.iter_lines():
                    if line == ": ping":
                        self.items.put({"ping": True})
                    elif line.startswith("retry: "):
                        self.retry = int(line.removeprefix("retry: "))
                    elif line.startswith(("id: ", "event: ", "data: ")):
                        name, _, value = line.partition(": ")
                        event[name] = value
                    elif line == "" and event:
                        if "event" in event:  # not the id alone that ends a stream the server closes early
                            self.items.put(
                                {"id": int(event["id"]), "event": event["event"], "data": json.loads(event["data"])}
                            )
                        event = {}
        except httpx.HTTPError:
            pass
        finally:
            self.opened.set()
            self.ended.set()

    def next(self, timeout: float = 10) -> dict[str, Any]:
        """The next event (pings skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            item = self.items.get(timeout=max(0.01, deadline - time.monotonic()))
            if "ping" not in item:
                return item

    def close(self) -> None:
        self._client.close()


class RawStream:
    """One event stream over a bare socket from the loopback address ``source`` (so that many addresses, and many
    streams, cost no thread): its status, then its body's blocks (``id``/``event``/``data``, or ``retry``/``id``),
    read when asked for."""

    def __init__(self, api: str, path: str, source: str) -> None:
        host, port = api.removeprefix("http://").split(":")
        self.socket = socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0))
        self.socket.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        self.raw = b""
        self.ended = False
        head = self._until(lambda: b"\r\n\r\n" in self.raw, 10)
        self.status = int(head.split(b" ", 2)[1]) if head else 0
        self.head = head.partition(b"\r\n\r\n")[0].decode().lower()

    def _until(self, done: Callable[[], bool], timeout_s: float) -> bytes:
        """Reads until ``done()`` or the end of the connection, within ``timeout_s``; all read so far."""
        deadline = time.monotonic() + timeout_s
        while not done() and not self.ended and time.monotonic() < deadline:
            self.socket.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.socket.recv(65536)
            except TimeoutError:
                break
            except OSError:  # reset
                chunk = b""
            self.raw += chunk
            self.ended = not chunk
        return self.raw

    def blocks(self) -> list[dict[str, str]]:
        """The body's complete blocks so far, each as its fields (``: ping`` comments left out)."""
        body = _dechunked(self.raw.partition(b"\r\n\r\n")[2]).decode()
        found = []
        for block in body.split("\n\n")[:-1]:
            fields = dict(line.split(": ", 1) for line in block.split("\n") if line and not line.startswith(":"))
            if fields:
                found.append(fields)
        return found

    def first(self, timeout_s: float = 10) -> dict[str, str]:
        """The stream's first event."""
        self._until(lambda: bool(self.blocks()), timeout_s)
        blocks = self.blocks()
        assert blocks, f"no event came: {self.raw[-300:]!r}"
        return blocks[0]

    def to_the_end(self, timeout_s: float = 10) -> list[dict[str, str]]:
        """Every block, once the server has closed the connection (asserted, within ``timeout_s``)."""
        self._until(lambda: False, timeout_s)
        assert self.ended, f"the server kept the stream open: {self.raw[-300:]!r}"
        return self.blocks()

    def still_open(self) -> bool:
        """Whether the server still holds the connection open (what it sent meanwhile is read and kept)."""
        self._until(lambda: not select.select([self.socket], [], [], 0)[0], 1)
        return not self.ended

    def close(self) -> None:
        self.socket.close()


def _dechunked(body: bytes) -> bytes:
    """An HTTP/1.1 chunked body's data, as far as it has come."""
    data = b""
    while body:
        size, found, rest = body.partition(b"\r\n")
        if not found or not re.fullmatch(rb"[0-9a-fA-F]+", size) or len(rest) < int(size, 16):
            break
        data += rest[: int(size, 16)]
        body = rest[int(size, 16) + 2 :]
    return data


def _settings(settings: Settings, **more: Any) -> Settings:
    return settings.but(streams={"heartbeat_s": 0.5}).but(**more)


@contextmanager
def _served(settings: Settings, **more: Any) -> Iterator[str]:
    with serve_in_thread(create_app(_settings(settings, **more))) as url:
        yield url


def _player(api: str) -> dict[str, str]:
    response = httpx.post(f"{api}/v1/players", json={})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['token']}"}


def _game(api: str, player: dict[str, str]) -> dict[str, Any]:
    response = httpx.post(f"{api}/v1/games", json={"layout": LAYOUT.to_json()}, headers=player)
    assert response.status_code == 201, response.text
    game: dict[str, Any] = response.json()
    return game


def _play(api: str, player: dict[str, str], game: str, moves: list[dict[str, Any]]) -> dict[str, Any]:
    snapshot: dict[str, Any] = {}
    for move in moves:
        response = httpx.post(f"{api}/v1/games/{game}/moves", json=move, headers=player)
        assert response.status_code == 200, response.text
        snapshot = response.json()
    return snapshot


def _until(stream: Sse, decided: Any, timeout_s: float = 10) -> dict[str, Any]:
    """The first event of ``stream`` whose board ``decided`` holds for, within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        event = stream.next(timeout=max(0.01, deadline - time.monotonic()))
        if decided(event["data"]):
            return event


@contextmanager
def _serve(data_dir: Path, redis_url: str | None = None, **env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real `pyramide serve`: with its own embedded Redis, or on ``redis_url``; stopped on SIGTERM without a drain."""
    port = _free_port()
    base = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {"PYRAMIDE_DRAIN_S": "0"}
    extra = {"REDIS_URL": redis_url} if redis_url else {}
    log = data_dir.parent / f"serve-{port}.log"
    args = [sys.executable, "-m", "pyramide", "serve", "--port", str(port)]
    args += [] if redis_url else ["--data-dir", str(data_dir)]
    with log.open("wb") as output:
        process = subprocess.Popen(args, env=base | extra | env, stdout=subprocess.DEVNULL, stderr=output)
    url = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            with suppress(httpx.TransportError):
                return httpx.get(f"{url}/health/ready", timeout=1).status_code == 200
            return False

        with suppress(AssertionError):
            eventually(ready, START_S)
        assert process.poll() is None, log.read_text(errors="replace")[-3000:]
        yield url, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=20)


CAPS = {
    "PYRAMIDE_STREAM_HEARTBEAT_S": "0.5",
    "PYRAMIDE_STREAMS_PER_ADDRESS": "3",
    "PYRAMIDE_STREAMS_PER_PLAYER": "2",
    "PYRAMIDE_SOLVER_TIME_LIMIT_S": "0.5",
}
