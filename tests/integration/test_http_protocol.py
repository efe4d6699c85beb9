"""HTTP itself against hostile and broken clients, on `pyramide serve` over real sockets on 127.0.0.1: whatever the
HTTP parser refuses, headers too long, bodies too slow, and more trickling connections than the process has file
descriptors are each answered as problem+json with an X-Request-ID and the connection closed, and never keep a
prompt client waiting."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from pyramide.service.http.server import LINGER_S
from tests.support.serving import Served, serving

LIMITS = {"PYRAMIDE_BODY_TIMEOUT_S": "0.5", "PYRAMIDE_HEADER_TIMEOUT_S": "2", "PYRAMIDE_MAX_HEADER_BYTES": "16384"}
HOST = b"Host: t\r\n"
POST = b"POST /v1/players HTTP/1.1\r\n" + HOST
MALFORMED: dict[str, bytes] = {
    "unknown method": b"FOO / HTTP/1.1\r\n" + HOST + b"\r\n",
    "lower-case method": b"get /health/live HTTP/1.1\r\n" + HOST + b"\r\n",
    "TLS on the HTTP port": b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03" + b"\x00" * 32,
    "0x7F in a header value": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-A: a\x7fb\r\n\r\n",
    "CR in a header value": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-A: a\rb\r\n\r\n",
    "LF in a header value": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-A: a\nb\r\n\r\n",
    "NUL in a header value": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-A: a\x00b\r\n\r\n",
    "0x7F in a header name": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-\x7fA: a\r\n\r\n",
    "CR in a header name": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-\rA: a\r\n\r\n",
    "LF in a header name": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-\nA: a\r\n\r\n",
    "NUL in a header name": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-\x00A: a\r\n\r\n",
    "0x7F in the path": b"GET /health/li\x7fve HTTP/1.1\r\n" + HOST + b"\r\n",
    "NUL in the path": b"GET /health/li\x00ve HTTP/1.1\r\n" + HOST + b"\r\n",
    "Content-Length and Transfer-Encoding": POST + b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "negative Content-Length": POST + b"Content-Length: -1\r\n\r\n",
    "doubled Content-Length": POST + b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    "Content-Length list": POST + b"Content-Length: 2, 2\r\n\r\n{}",
    "Content-Length not a number": POST + b"Content-Length: 2x\r\n\r\n{}",
    "space in a header name": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X A: a\r\n\r\n",
    "space before the colon": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-A : a\r\n\r\n",
    "empty header name": b"GET /health/live HTTP/1.1\r\n" + HOST + b": a\r\n\r\n",
    "folded header line": b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-A: a\r\n b\r\n\r\n",
    "unknown HTTP version": b"GET /health/live HTTP/9.9\r\n" + HOST + b"\r\n",
    "bare LF line ends": b"GET /health/live HTTP/1.1\nHost: t\n\n",
    "chunked not last": POST + b"Transfer-Encoding: chunked, gzip\r\n\r\n",
    "chunk size not hex": POST + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n",
    "CONNECT to a host": b"CONNECT example.com:443 HTTP/1.1\r\n" + HOST + b"\r\n",
}


class Answer:
    """A raw HTTP answer: status, headers (lower-case names), body, and whether the server closed after it."""

    def __init__(self, raw: bytes, closed: bool) -> None:
        head, _, self.body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1]) if lines[0].startswith("HTTP/1.1 ") else 0
        self.headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        self.closed = closed
        self.raw = raw

    def problem(self) -> dict[str, Any]:
        assert self.headers.get("content-type") == "application/problem+json", self.raw[:300]
        assert self.headers.get("x-request-id"), self.raw[:300]
        problem: dict[str, Any] = json.loads(self.body)
        assert problem["status"] == self.status and problem["type"].endswith(problem["code"])
        return problem


def _read(connection: socket.socket, seconds: float) -> Answer:
    """Everything the server sends until it closes (or ``seconds`` pass)."""
    connection.settimeout(seconds)
    raw, closed = b"", False
    with suppress(TimeoutError, ConnectionResetError):
        while part := connection.recv(65536):
            raw += part
        closed = True
    return Answer(raw, closed)


def _exchange(url: str, request: bytes, seconds: float = 5) -> Answer:
    with socket.create_connection(_address(url), timeout=seconds) as connection:
        connection.sendall(request)
        return _read(connection, seconds)


def _address(url: str) -> tuple[str, int]:
    host, port = url.removeprefix("http://").split(":")
    return host, int(port)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("protocol")
    with serving(tmp / "data", tmp, env=LIMITS) as server:
        yield server


def test_every_malformed_request_is_a_problem_with_a_request_id(served: Served) -> None:
    wrong = {}
    for kind, request in MALFORMED.items():
        answer = _exchange(served.url, request)
        try:
            assert answer.status == 400 and answer.problem()["code"] == "bad_request" and answer.closed
            assert answer.headers["content-language"] == "hu"
        except (AssertionError, ValueError, KeyError):
            wrong[kind] = answer.raw[:160]
    assert not wrong, f"{len(wrong)} of {len(MALFORMED)} malformed requests: {wrong}"
    assert httpx.get(f"{served.url}/health/live").status_code == 200


def test_an_unsupported_upgrade_is_answered_plainly_and_closed(served: Served) -> None:
    """h2c or a WebSocket: the request is answered as a plain one, with its request id, and the connection closed
    (nothing after an upgrade request can be read), rather than left hanging with a request after it unanswered."""
    for upgrade in (b"h2c", b"websocket"):
        request = b"GET /health/live HTTP/1.1\r\n" + HOST + b"Connection: Upgrade\r\nUpgrade: " + upgrade + b"\r\n\r\n"
        answer = _exchange(served.url, request + b"GET /health/live HTTP/1.1\r\n" + HOST + b"\r\n", 3)
        assert answer.status == 200 and answer.headers.get("x-request-id") and answer.closed, answer.raw


def test_request_headers_past_the_limit_are_431_without_buffering_them(served: Served) -> None:
    assert httpx.get(f"{served.url}/health/live", headers={"X-Big": "a" * 12000}).status_code == 200
    server = psutil.Process(served.process.pid)
    before = server.memory_info().rss
    header = b"GET /health/live HTTP/1.1\r\nHost: t\r\nX-Big: " + b"a" * (8 << 20) + b"\r\n\r\n"
    with socket.create_connection(_address(served.url), timeout=10) as connection:
        sender = threading.Thread(target=_send_quietly, args=(connection, header), daemon=True)
        sender.start()
        answer = _read(connection, 10)
        sender.join(timeout=10)
    grown = server.memory_info().rss - before
    assert answer.status == 431 and answer.closed, answer.raw[:300]
    assert answer.problem()["code"] == "headers_too_large"
    assert grown < 4 << 20, f"the server grew by {grown >> 20} MiB reading an 8 MiB header"


def _send_quietly(connection: socket.socket, data: bytes) -> None:
    with suppress(OSError):
        connection.sendall(data)


def test_a_body_trickled_past_its_deadline_is_408_and_closed(served: Served) -> None:
    """The answer is not lost to a reset while the client is still sending: the server stops writing, closes its
    side (the client reads the end of the answer), and reads and drops what still comes for a while."""
    head = POST + b"Accept-Language: en\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n"
    with socket.create_connection(_address(served.url), timeout=5) as connection:
        connection.sendall(head + b"{")
        started = time.monotonic()
        connection.settimeout(0.1)
        answer = b""
        for _ in range(30):  # a byte every 0.1 s: 3 s of body at most, far past the 0.5 s deadline
            with suppress(TimeoutError):
                answer = connection.recv(65536)
            if answer:
                break
            with suppress(OSError):
                connection.sendall(b" ")
        elapsed = time.monotonic() - started
        for _ in range(4):  # still sending after the answer: read and dropped for a second (RFC 9112 9.6)
            time.sleep(0.05)
            try:
                connection.sendall(b" ")
            except OSError as error:  # a reset: the server closed at once (unless this process stalled that long)
                assert time.monotonic() - started - elapsed > 0.5, f"reset right after the answer: {error!r}"
                break
        rest = _read(connection, 2)
    refused = Answer(answer + rest.raw, rest.closed)
    assert refused.status == 408 and refused.closed, refused.raw[:300]
    assert refused.problem()["code"] == "body_timeout"
    assert refused.headers["content-language"] == "en", "its headers were read: answered in their language"
    assert elapsed < 1.5, f"answered {elapsed:.2f} s after the body began (deadline 0.5 s)"


def test_a_whole_body_sent_to_a_busy_app_is_taken_in_after_its_408(served: Served) -> None:
    """A client that sends its whole request before it reads (as most do), to an app too busy to read it (its Redis
    stopped here), more than the socket buffers hold once uvicorn stops reading: after the 408 the server reads on
    and drops the rest, so the client's send completes and it reads the answer. Without that, the send blocked,
    then failed on the close (a reset), and a client that reads only after sending never saw the 408."""
    token = httpx.post(f"{served.url}/v1/players", json={}).json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    game = httpx.post(f"{served.url}/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
    head = (
        f"POST /v1/games/{game}/abandon HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {token}\r\n"
        "Accept-Language: en\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()
    chunk = b"%x\r\n" % 65536 + b" " * 65536 + b"\r\n"
    redis = served.redis_pid()
    os.kill(redis, signal.SIGSTOP)  # the app waits on it, reading no body
    try:
        with socket.create_connection(_address(served.url), timeout=10) as connection:
            started = time.monotonic()
            connection.sendall(head + chunk * 256 + b"0\r\n\r\n")  # 16 MiB
            sent_s = time.monotonic() - started
            answer = _read(connection, 5)
    finally:
        os.kill(redis, signal.SIGCONT)
    assert sent_s >= 0.4, f"sent in {sent_s:.2f} s: the socket buffers took it all, and this proves nothing"
    assert answer.status == 408 and answer.closed, answer.raw[:300]
    assert answer.problem()["code"] == "body_timeout"
    # The abandon reads no body: it takes effect once Redis answers, though its answer is dropped for the 408.
    assert httpx.get(f"{served.url}/v1/games/{game}", headers=auth).status_code == 200


@pytest.mark.slow
def test_every_worker_guards_the_protocol(tmp_path: Path) -> None:
    """The workers of ``serve --workers`` build the protocol by name, with the limits in their environment."""
    with serving(tmp_path / "data", tmp_path, "--workers", "2", env=LIMITS) as server:
        malformed = _exchange(server.url, MALFORMED["space in a header name"])
        assert malformed.status == 400 and malformed.problem()["code"] == "bad_request"
        big = _exchange(server.url, b"GET /health/live HTTP/1.1\r\n" + HOST + b"X-Big: " + b"a" * 20000 + b"\r\n\r\n")
        assert big.status == 431 and big.problem()["code"] == "headers_too_large"
        slow = _exchange(server.url, POST + b"Content-Length: 9\r\n\r\n{", 3)
        assert slow.status == 408 and slow.problem()["code"] == "body_timeout" and slow.closed


@contextmanager
def _file_limit(files: int) -> Iterator[None]:
    """Processes started in the block may open ``files`` descriptors (this one gets its own limit back)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_trickling_bodies_past_the_file_limit_keep_no_client_waiting(tmp_path: Path) -> None:
    """600 connections trickling request bodies into a server allowed 256 descriptors: a new client is still
    answered within a second, and the connections the server let go were told why."""
    with _file_limit(256):
        server = serving(tmp_path / "data", tmp_path, env={**LIMITS, "PYRAMIDE_BODY_TIMEOUT_S": "60"})
        served = server.__enter__()
    try:
        head = POST + b"Content-Length: 1000\r\n\r\n{"
        trickling: list[socket.socket] = []
        deadline = time.monotonic() + 20
        while len(trickling) < 600 and time.monotonic() < deadline:
            with suppress(OSError):
                connection = socket.create_connection(_address(served.url), timeout=2)
                connection.sendall(head)
                trickling.append(connection)
            if len(trickling) % 8 == 0:
                time.sleep(0.01)  # connecting no faster than a loaded server accepts: no SYN is dropped
        for connection in trickling:
            with suppress(OSError):
                connection.sendall(b" ")
        started = time.monotonic()
        try:
            answered: object = httpx.get(f"{served.url}/health/live", timeout=5).status_code
        except httpx.TransportError as error:
            answered = error
        waited = time.monotonic() - started
        shed = [_read(c, 0.01) for c in trickling[:50]]
        for connection in trickling:
            connection.close()
        assert len(trickling) == 600, f"only {len(trickling)} connections were accepted in 20 s"
        assert answered == 200 and waited < 1, f"a new client waited {waited:.2f} s for {answered!r}"
        assert shed[0].status == 503 and shed[0].problem()["code"] == "service_unavailable" and shed[0].closed
    finally:
        server.__exit__(None, None, None)


def test_connections_answered_and_lingering_are_shed_before_waiting_ones(tmp_path: Path) -> None:
    """Past the connection limit, the connections already refused (answered, their late bytes still read for a
    while) are closed first: a client whose request is still on its way is not refused for them. A round counts
    only if the new client was answered while the refused ones still lingered (else nothing had to be shed)."""
    env = {**LIMITS, "PYRAMIDE_BODY_TIMEOUT_S": "60", "PYRAMIDE_MAX_CONNECTIONS": "40"}
    with serving(tmp_path / "data", tmp_path, env=env) as served:
        for _ in range(3):
            shed = _shed_round(served.url)
            if shed is not None:
                answered, told = shed
                break
            time.sleep(LINGER_S)  # every connection of the round is gone before the next
        else:
            raise AssertionError(f"three rounds each took longer than the {LINGER_S} s a refused connection lingers")
    assert answered == 200
    assert told == [b""] * 30, "a connection still sending its body was refused while answered ones lingered"


def _shed_round(url: str) -> tuple[int, list[bytes]] | None:
    """30 connections sending their bodies, 10 answered 400 and lingering, then one more client: its status and
    what the 30 were told; None if the round was too slow to prove anything."""
    waiting = [socket.create_connection(_address(url), timeout=2) for _ in range(30)]
    for connection in waiting:
        connection.sendall(POST + b"Content-Length: 1000\r\n\r\n{")
    time.sleep(0.2)  # every body begun, its deadline 60 s away
    refused = [socket.create_connection(_address(url), timeout=2) for _ in range(10)]
    sent = time.monotonic()  # no refusal began to linger before
    for connection in refused:
        connection.sendall(MALFORMED["unknown method"])
    for connection in refused:
        assert connection.recv(65536).startswith(b"HTTP/1.1 400 ")  # answered, lingering: 40 open
    answered = httpx.get(f"{url}/health/live", timeout=5).status_code
    in_time = time.monotonic() - sent < LINGER_S - 0.1  # so the refused ones lingered when it came
    told = [_read(connection, 0.05).raw[:40] for connection in waiting]
    for connection in waiting + refused:
        connection.close()
    return (answered, told) if in_time else None
