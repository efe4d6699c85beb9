"""The service served for real: `pyramide serve` as a subprocess (``serving``), or the app by uvicorn in a thread
of the test's process (``serve_in_thread``), on free loopback ports."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import psutil
import redis
import uvicorn
from litestar import Litestar

from pyramide.service.http.connection_limits import HttpLimits
from pyramide.service.http.server import server_config
from tests.support.waiting import eventually

ROOT = Path(__file__).resolve().parents[2]


START_S = 90.0
"""How long a started `pyramide serve` may take to answer ready: its processes import the whole service first (under
two CPU hogs on 2 cores, `serve --workers 1` took over 30 s)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Served:
    def __init__(
        self, process: subprocess.Popen[str], url: str, data_dir: Path, log: Path, metrics_url: str = ""
    ) -> None:
        self.process, self.url, self.data_dir, self.log = process, url, data_dir, log
        self.metrics_url = metrics_url
        """Where Prometheus would scrape (``PYRAMIDE_METRICS_PORT``, a free port of its own): ``…/metrics``."""

    def redis_pid(self) -> int:
        return int((self.data_dir / "redis.pid").read_text())

    def family(self) -> list[psutil.Process]:
        """The server and every process it started (workers, solver workers, Redis, trackers)."""
        parent = psutil.Process(self.process.pid)
        return [parent, *parent.children(recursive=True)]

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]

    def aof_written(self) -> None:
        """Waits until the embedded Redis has written to its append-only file every write it has acknowledged. With
        `appendfsync everysec` Redis answers at once but postpones writing the file (up to 2 s) while its last fsync
        still runs, so a file read at once may lack an acknowledged write: on a busy machine it did (seed 88316513)."""
        with redis.Redis(unix_socket_path=str(self.data_dir / "redis.sock")) as client:
            eventually(lambda: client.info("persistence")["aof_buffer_length"] == 0, 10, what="the AOF written")


def _start(
    data_dir: Path, tmp: Path, *options: str, env: dict[str, str] | None = None, wrapper: tuple[str, ...] = ()
) -> Served:
    port, metrics_port = _free_port(), _free_port()
    log = tmp / f"serve-{port}.log"
    environment = {
        **os.environ,
        "PYRAMIDE_SOLVER_TIME_LIMIT_S": "1",
        "PYRAMIDE_DRAIN_S": "0",
        "PYRAMIDE_METRICS_PORT": str(metrics_port),
        **(env or {}),
    }
    command = [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", str(data_dir), *options]
    with log.open("w") as out:
        process = subprocess.Popen(
            [*wrapper, *command],
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    metrics_url = f"http://127.0.0.1:{environment['PYRAMIDE_METRICS_PORT']}/metrics"
    served = Served(process, f"http://127.0.0.1:{port}", data_dir, log, metrics_url)
    _wait_ready(served)
    return served


def _wait_ready(served: Served, seconds: float = START_S) -> None:
    def ready() -> bool:
        if served.process.poll() is not None:
            raise RuntimeError(f"serve exited with {served.process.returncode}: {served.log.read_text()[-2000:]}")
        with suppress(httpx.TransportError):
            return httpx.get(f"{served.url}/health/ready", timeout=1).status_code == 200
        return False

    try:
        eventually(ready, seconds, what="serve ready")
    except AssertionError:
        raise RuntimeError("serve did not become ready") from None


@contextmanager
def serving(
    data_dir: Path, tmp: Path, *options: str, env: dict[str, str] | None = None, wrapper: tuple[str, ...] = ()
) -> Iterator[Served]:
    """`pyramide serve` with ``options``, started through ``wrapper`` (``("taskset", "-c", "0")``: it execs the
    server, whose pid stays the one started), until it is ready; at the end it and everything it started killed. It
    stops on SIGTERM without a drain unless ``env`` sets ``PYRAMIDE_DRAIN_S``."""
    served = _start(data_dir, tmp, *options, env=env, wrapper=wrapper)
    try:
        yield served
    finally:
        family = served.family() if served.process.poll() is None else []
        for process in family:
            with suppress(psutil.NoSuchProcess):
                process.kill()
        served.process.wait(timeout=10)


def _pyramide(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The ``pyramide`` command run to its end (60 s at most), its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "pyramide", *args],
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


@contextmanager
def serve_in_thread(app: Litestar, header_timeout_s: float = 10.0, **limits: Any) -> Iterator[str]:
    """The app served by uvicorn on a free loopback port, in a thread of this process: real HTTP and real
    concurrency, in-process. ``limits``: other :class:`HttpLimits` than the defaults."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        server_config(app, "127.0.0.1", port, HttpLimits(header_timeout_s, **limits), log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()

    def started() -> bool:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        return bool(server.started)

    eventually(started, 60, what="uvicorn started")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
