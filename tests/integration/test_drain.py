"""SIGTERM as a deploy sends it, played for real on `pyramide serve --workers 2` (issue 56): under steady load the
server drains (readiness 503 at once, every request answered, each connection closed after its answer, a live
stream ended with ``retry:`` and its last id), then stops within its budget, and every process it started has
ended by the time it exits."""

from __future__ import annotations

import signal
import threading
import time
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest

from pyramide.service.http.stream_budget import RETRY_MS
from pyramide.service.infra.settings import HttpSettings
from tests.support.serving import Served, _start
from tests.support.streams import LAYOUT, MOVES, RawStream
from tests.support.waiting import eventually

DRAIN_S = 3.0
"""The drain the load test gives the server (the default, 15 s, is for real load balancers)."""
READY_S = 2.0
"""Readiness turns 503 within this after SIGTERM: before a load balancer's next health check (every 2 s or more)."""
NOTICED_S = 1.0
"""How long the test's "load balancer" keeps sending after readiness turned 503 (a health check's interval)."""
CLIENTS = 3
RUNS = 3
"""SIGTERMs in a row for the no-process-left test: before the fix, 3 runs of 4 left multiprocessing's resource tracker
running (caught by a check right after the exit, :func:`_alive`), so 3 runs fail it 98 times in 100."""


@dataclass(frozen=True, slots=True)
class Sent:
    """One request of the load: when it was sent, and its status and ``Connection`` header, or its error."""

    at: float
    status: int | None
    connection: str | None
    error: str | None = None


def _load(url: str, stop: threading.Event, sent: list[Sent]) -> None:
    """A client of the load balancer: a player playing games move by move over kept-alive connections."""
    with httpx.Client(base_url=url, timeout=10) as client:
        auth = {"Authorization": f"Bearer {client.post('/v1/players', json={}).json()['token']}"}
        while not stop.is_set():
            game = client.post("/v1/games", json={"layout": LAYOUT.to_json()}, headers=auth).json()["id"]
            for move in MOVES:
                if stop.is_set():
                    return
                at = time.monotonic()
                try:
                    answer = client.post(f"/v1/games/{game}/moves", json=move, headers=auth)
                except httpx.HTTPError as error:
                    sent.append(Sent(at, None, None, repr(error)))
                    return
                sent.append(Sent(at, answer.status_code, answer.headers.get("connection")))


def _readiness(url: str) -> tuple[int, str | None]:
    answer = httpx.get(f"{url}/health/ready", timeout=5)
    return answer.status_code, answer.json().get("code") if answer.status_code != 200 else None


def _family(served: Served) -> dict[psutil.Process, str]:
    """The server and every process it started, each with its command line."""
    return {process: " ".join(process.cmdline())[:120] for process in served.family()}


def _alive(family: dict[psutil.Process, str]) -> list[str]:
    """Those of ``family`` still running (not zombies), read at once: one listing of the system's processes first,
    so that a process ending a few milliseconds after the server is caught (checked one by one, it was missed)."""
    running = set(psutil.pids())
    left = []
    for process, command in family.items():
        with suppress(psutil.NoSuchProcess):
            if process.pid in running and process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{process.pid} {command}")
    return left


def _kill(served: Served, family: dict[psutil.Process, str]) -> None:
    for process in family:
        with suppress(psutil.NoSuchProcess):
            process.kill()
    with suppress(Exception):
        served.process.wait(timeout=10)


@pytest.mark.slow
def test_sigterm_under_load_drains_answers_every_request_then_stops(tmp_path: Path) -> None:
    env = {"PYRAMIDE_DRAIN_S": str(DRAIN_S)}
    served = _start(tmp_path / "data", tmp_path, "--workers", "2", env=env)
    family = _family(served)
    stop, sent = threading.Event(), [list[Sent]() for _ in range(CLIENTS)]
    clients = [threading.Thread(target=_load, args=(served.url, stop, mine)) for mine in sent]
    stream = RawStream(served.url, f"/v1/leaderboards/{LAYOUT}/events", "127.0.0.1")
    try:
        assert stream.status == 200 and stream.first()["event"] == "board"
        for client in clients:
            client.start()
        eventually(lambda: all(len(mine) >= 5 for mine in sent), 30, what="the load under way")
        sigterm = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        assert eventually(lambda: _readiness(served.url) == (503, "draining"), READY_S), "readiness 503 at once"
        noticed = time.monotonic()
        assert httpx.get(f"{served.url}/health/live", timeout=5).status_code == 200, "alive while it drains"
        eventually(lambda: time.monotonic() >= noticed + NOTICED_S, NOTICED_S + 1, what="the balancer noticing")
        assert stream.still_open(), "the stream is served through the drain"
        stop.set()
        for client in clients:
            client.join(timeout=15)
        code = served.process.wait(timeout=DRAIN_S + HttpSettings().shutdown_grace_s + 10)
        stopped = time.monotonic() - sigterm
    finally:
        stop.set()
        _kill(served, family)
    every = [request for mine in sent for request in mine]
    assert code == 0, served.log.read_text()[-2000:]
    assert DRAIN_S <= stopped < DRAIN_S + HttpSettings().shutdown_grace_s, stopped
    assert [r for r in every if r.status != 200] == [], "every request answered, none reset"
    after = [r for r in every if r.at >= sigterm + 0.5]  # both workers have their SIGTERM (the parent polls 0.5 s)
    assert after and all(r.connection == "close" for r in after), "each connection closed after its answer"
    blocks = stream.to_the_end(5)
    events = [block for block in blocks if "event" in block]
    assert blocks[-1] == {"retry": str(RETRY_MS), "id": events[-1]["id"]}, blocks[-3:]
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{served.url}/health/live", timeout=5)
    assert _alive(family) == []


@pytest.mark.slow
def test_sigterm_to_two_workers_leaves_no_process_behind_run_after_run(tmp_path: Path) -> None:
    """What an orchestrator checks after a stop (and what a container's PID namespace would otherwise collect): not
    one of the processes `pyramide serve --workers 2` started (its workers, their solver workers, the embedded Redis,
    multiprocessing's resource tracker) is still running once it has exited, run after run."""
    for run in range(RUNS):
        served = _start(tmp_path / f"data{run}", tmp_path, "--workers", "2", env={"PYRAMIDE_DRAIN_S": "0.2"})
        family = _family(served)
        try:
            assert len(family) >= 5, family  # itself, Redis, the tracker, 2 workers
            served.process.send_signal(signal.SIGTERM)
            assert served.process.wait(timeout=30) == 0, served.log.read_text()[-2000:]
            assert _alive(family) == [], f"run {run + 1}"
        finally:
            _kill(served, family)
