"""The metrics' port of `pyramide serve --workers 2` (served by the parent) counts every worker's requests: real workers
on real sockets, each connection's worker read from the kernel (psutil), one of them killed with SIGKILL and replaced
by uvicorn."""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx
import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.support.serving import Served, serving
from tests.support.waiting import eventually

LIVE = {"method": "GET", "path": "/health/live", "status_code": "200", "app_name": "pyramide"}
CREATE_PLAYER = {"method": "POST", "path": "/v1/players", "status_code": "200", "app_name": "pyramide"}


def _workers(served: Served) -> list[psutil.Process]:
    """The HTTP workers: the children uvicorn spawned (not Redis, not multiprocessing's resource tracker)."""
    workers = []
    for child in psutil.Process(served.process.pid).children():
        with suppress(psutil.NoSuchProcess):  # a zombie too: a killed worker not reaped yet
            if "spawn_main" in " ".join(child.cmdline()):
                workers.append(child)
    return workers


def _owner(workers: list[psutil.Process], client: socket.socket) -> int | None:
    """The pid of the worker that accepted ``client``'s connection, if one has yet."""
    port = client.getsockname()[1]
    for worker in workers:
        if any(c.raddr and c.raddr.port == port for c in worker.net_connections(kind="tcp")):
            return worker.pid
    return None


def _sample(served: Served, name: str, labels: dict[str, str]) -> float:
    """One scrape of the metrics' port: the value of one series."""
    text = httpx.get(served.metrics_url, timeout=5).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == labels:
                return sample.value
    return 0.0


def _settled(served: Served, name: str, labels: dict[str, str], expected: float) -> float:
    """The series once it reads ``expected`` (for at most a second): a request is counted just after its answer is
    sent, so a scrape right after the answer may come first."""
    with contextlib.suppress(AssertionError):
        eventually(lambda: _sample(served, name, labels) == expected, 1)
    return _sample(served, name, labels)


@contextmanager
def _connections(served: Served, count: int) -> Iterator[list[http.client.HTTPConnection]]:
    connections = [http.client.HTTPConnection(*_address(served), timeout=5) for _ in range(count)]
    try:
        yield connections
    finally:
        for connection in connections:
            connection.close()


def _live(connection: http.client.HTTPConnection) -> None:
    connection.request("GET", "/health/live")
    response = connection.getresponse()
    response.read()
    assert response.status == 200


def _live_again(connection: http.client.HTTPConnection) -> None:
    """One more request on ``connection``; if the server closed it meanwhile (idle past uvicorn's 5 s keep-alive, as
    on a loaded machine between the bursts and this), on a new connection (its owner is read from the new socket)."""
    try:
        _live(connection)
    except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
        connection.close()
        _live(connection)


def _spread(served: Served, workers: list[psutil.Process]) -> tuple[list[http.client.HTTPConnection], dict[int, int]]:
    """Connections opened in concurrent bursts (one at a time, the worker awake takes them all) until each worker
    holds some, each with one request answered; at most 20 bursts of 6."""
    connections: list[http.client.HTTPConnection] = []
    owners: dict[int, int] = {}
    with ThreadPoolExecutor(6) as pool:
        for _ in range(20):
            burst = [http.client.HTTPConnection(*_address(served), timeout=5) for _ in range(6)]
            list(pool.map(_live, burst))
            connections += burst
            for connection in burst:
                owner = _owner(workers, connection.sock)
                assert owner is not None
                owners[owner] = owners.get(owner, 0) + 1
            if len(owners) == len(workers):
                break
    return connections, owners


def _address(served: Served) -> tuple[str, int]:
    host, port = served.url.removeprefix("http://").split(":")
    return host, int(port)


@pytest.mark.slow
def test_a_scrape_sums_every_worker_and_keeps_a_killed_workers_counts(tmp_path: Path) -> None:
    with serving(tmp_path / "data", tmp_path, "--workers", "2") as served:
        workers = _workers(served)
        assert len(workers) == 2
        connections, answered = _spread(served, workers)
        assert set(answered) == {w.pid for w in workers}, f"both workers answered: {answered}"
        for connection in connections:  # and each connection once more, on the worker that holds it
            _live_again(connection)
            answered[_owner(workers, connection.sock) or 0] += 1
        sent = 2 * len(connections)
        assert [_sample(served, "litestar_requests_total", LIVE) for _ in range(4)] == [sent] * 4
        assert _sample(served, "pyramide_redis_up", {}) == 1.0, "the supervisor's state is still shown"

        # A request left in progress (half its body sent) on a worker that is then killed.
        stuck = socket.create_connection(_address(served))
        stuck.sendall(b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
        stuck.sendall(b"Content-Length: 100\r\n\r\n{")
        with contextlib.suppress(AssertionError):
            eventually(lambda: _sample(served, "litestar_requests_in_progress", CREATE_PLAYER) == 1, 10)
        assert _sample(served, "litestar_requests_in_progress", CREATE_PLAYER) == 1
        victim = _owner(workers, stuck)
        assert victim is not None and answered[victim] > 0
        os.kill(victim, signal.SIGKILL)

        def replaced() -> bool:
            pids = {w.pid for w in _workers(served)}
            return victim not in pids and len(pids) >= 2

        eventually(replaced, 15, what="uvicorn replacing the killed worker")
        stuck.close()
        for connection in connections:
            connection.close()

        assert [_sample(served, "litestar_requests_total", LIVE) for _ in range(4)] == [sent] * 4, "kept, once"
        assert _sample(served, "litestar_requests_in_progress", CREATE_PLAYER) == 0, "its request ended with it"
        with _connections(served, 12) as fresh:
            for connection in fresh:
                _live(connection)
        assert [_sample(served, "litestar_requests_total", LIVE) for _ in range(4)] == [sent + 12] * 4

        directory = Path(_workers(served)[0].environ()["PROMETHEUS_MULTIPROC_DIR"])
        assert directory.is_dir() and directory.stat().st_mode & 0o077 == 0, "private"
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=20) == 0
        assert not directory.exists(), "removed at the end"


@pytest.mark.slow
def test_a_directory_the_operator_names_is_emptied_of_a_killed_runs_counts(tmp_path: Path) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    env = {"PROMETHEUS_MULTIPROC_DIR": str(directory)}
    with serving(tmp_path / "data", tmp_path, "--workers", "2", env=env) as served, _connections(served, 6) as six:
        for connection in six:
            _live(connection)
        assert _settled(served, "litestar_requests_total", LIVE, 6) == 6
        served.process.kill()  # no cleanup: the files stay
        served.process.wait(timeout=10)
    assert list(directory.glob("counter_*.db"))
    with serving(tmp_path / "again", tmp_path, "--workers", "2", env=env) as served, _connections(served, 2) as two:
        for connection in two:
            _live(connection)
        assert _settled(served, "litestar_requests_total", LIVE, 2) == 2
