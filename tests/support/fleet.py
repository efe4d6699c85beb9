"""A fleet as operators run one: one Redis, replicas of `pyramide serve` on it, and HAProxy (Debian's package) in
front, checking each replica's ``/health/ready``; every process real, on loopback ports, and stopped at the end.
A replica is stopped as an orchestrator stops it (SIGTERM, then waiting for its exit) and started again on its
port; HAProxy's own view of each replica (its statistics page) tells when it is taken in again."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx
import redis

from pyramide.service.infra.embedded_redis import SERVER_BINARY
from tests.support.serving import START_S, _free_port
from tests.support.waiting import eventually

HEALTH_INTERVAL_MS = 200
"""How often HAProxy asks each replica's ``/health/ready``: one 503 takes it out (``fall 1``), two 200s in a row take
it in again (``rise 2``). A replica's drain (``PYRAMIDE_DRAIN_S``) must outlast one interval and a check's answer.
A check may take up to ``timeout check`` (2 s): with the default (the interval), checks of replicas slowed by a busy
machine timed out, and all three were taken out at once."""

STOP_S = 30.0
"""How long a replica may take from SIGTERM to its exit: its drain, its grace, its background work's stop."""


def haproxy_binary() -> str:
    """HAProxy's executable; its absence fails the test (``scripts/debian-tools.sh`` installs it), never skips it."""
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise AssertionError("HAProxy is missing: scripts/test installs it as root (Debian: apt-get install haproxy)")
    return found


def haproxy_config(port: int, stats_port: int, replicas: dict[str, int]) -> str:
    """The configuration docs/operations.md ("Rolling restart") describes, for ``replicas`` (name: port)."""
    servers = "".join(f"    server {name} 127.0.0.1:{p} check\n" for name, p in replicas.items())
    return f"""global
    maxconn 2000
    log stderr format raw local0 info

defaults
    mode http
    log global
    option httplog
    option forwardfor
    option redispatch 1
    retries 3
    retry-on conn-failure
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 5s
    timeout queue 5s
    timeout check 2s

frontend api
    bind 127.0.0.1:{port}
    default_backend replicas

backend replicas
    balance leastconn
    option httpchk GET /health/ready
    http-check expect status 200
    default-server inter {HEALTH_INTERVAL_MS}ms fall 1 rise 2
{servers}
listen stats
    bind 127.0.0.1:{stats_port}
    stats enable
    stats uri /stats
"""


@dataclass
class Replica:
    """One `pyramide serve` of the fleet, on its own port (kept across restarts)."""

    name: str
    port: int
    log: Path
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    restarts: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [sys.executable, "-m", "pyramide", "serve", "--port", str(self.port)]
        with self.log.open("ab") as output:
            self.process = subprocess.Popen(command, env=self.env, stdout=subprocess.DEVNULL, stderr=output)

    def ready(self) -> bool:
        """Whether it answers ``/health/ready`` with 200 itself (an exit is an error, with its log's end)."""
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.name} exited with {self.process.returncode}: {self.tail()}")
        with suppress(httpx.TransportError):
            return httpx.get(f"{self.url}/health/ready", timeout=1).status_code == 200
        return False

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-3000:]

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@dataclass
class Fleet:
    """The running fleet: the balancer's URL (what clients use), the replicas, and HAProxy's view of them."""

    url: str
    stats_url: str
    replicas: list[Replica]
    haproxy_log: Path

    def status(self, name: str) -> str:
        """HAProxy's word on replica ``name``: ``UP``, ``DOWN``, or a transition (``UP 1/2``)."""
        rows = csv.DictReader(httpx.get(self.stats_url, timeout=2).text.removeprefix("# ").splitlines())
        for row in rows:
            if row["pxname"] == "replicas" and row["svname"] == name:
                return row["status"]
        raise AssertionError(f"HAProxy does not list {name}")

    def resent(self) -> int:
        """Requests HAProxy sent again, to another replica, after a connection to one failed (its log's retries
        field, ``+`` when redispatched): where a balancer without retries would have answered an error."""
        count = 0
        for line in self.haproxy_log.read_text(errors="replace").splitlines():
            fields = line.split(" ")
            if len(fields) > 12 and fields[3].startswith("replicas/"):
                count += fields[10].rpartition("/")[2].lstrip("+") != "0"
        return count

    def restart(self, replica: Replica) -> tuple[float, float]:
        """Stops ``replica`` as an orchestrator does (SIGTERM, its exit awaited: 0 expected), starts it again on its
        port and waits until HAProxy takes it in again. The seconds from SIGTERM to its exit, and to HAProxy's UP."""
        assert replica.process is not None
        signalled = time.monotonic()
        replica.process.send_signal(signal.SIGTERM)
        code = replica.process.wait(timeout=STOP_S)
        stopped = time.monotonic() - signalled
        assert code == 0, f"{replica.name} exited with {code} on SIGTERM: {replica.tail()}"
        replica.restarts += 1
        replica.start()
        eventually(replica.ready, START_S, f"{replica.name} ready again")
        eventually(lambda: self.status(replica.name) == "UP", 10, f"HAProxy taking {replica.name} in again")
        return stopped, time.monotonic() - signalled


def _end(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait(timeout=10)


def _redis(stack: ExitStack, root: Path) -> str:
    """One Redis (the binary the embedded one uses) on a loopback port, killed at the end; its URL."""
    port = _free_port()
    root.mkdir(parents=True, exist_ok=True)
    command = [str(SERVER_BINARY), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    process = subprocess.Popen([*command, "--dir", str(root)], stdout=subprocess.DEVNULL)
    stack.callback(_end, process)

    def answers() -> bool:
        with suppress(redis.RedisError), redis.Redis(port=port, socket_timeout=1) as client:
            return bool(client.ping())
        return False

    eventually(answers, 10, "Redis answering")
    return f"redis://127.0.0.1:{port}/0"


def _haproxy(stack: ExitStack, root: Path, replicas: list[Replica]) -> Fleet:
    """HAProxy in the foreground with the generated configuration, until every replica is UP in its eyes."""
    port, stats_port = _free_port(), _free_port()
    config = root / "haproxy.cfg"
    config.write_text(haproxy_config(port, stats_port, {r.name: r.port for r in replicas}))
    log = root / "haproxy.log"
    with log.open("wb") as output:
        process = subprocess.Popen([haproxy_binary(), "-db", "-f", str(config)], stdout=output, stderr=output)
    stack.callback(_end, process)
    fleet = Fleet(f"http://127.0.0.1:{port}", f"http://127.0.0.1:{stats_port}/stats;csv", replicas, log)

    def all_up() -> bool:
        assert process.poll() is None, log.read_text(errors="replace")[-3000:]
        with suppress(httpx.TransportError):
            return all(fleet.status(r.name) == "UP" for r in replicas)
        return False

    eventually(all_up, 20, "HAProxy seeing every replica up")
    return fleet


@contextmanager
def fleet(root: Path, size: int, env: dict[str, str]) -> Iterator[Fleet]:
    """``size`` replicas of `pyramide serve` with ``env`` on one Redis behind HAProxy, all ready; at the end every
    process killed (a test's failure leaves nothing running)."""
    with ExitStack() as stack:
        redis_url = _redis(stack, root / "redis")
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PYRAMIDE_", "REDIS_"))}
        replicas = []
        for number in range(1, size + 1):
            port = _free_port()
            replica = Replica(f"r{number}", port, root / f"r{number}.log", {**base, "REDIS_URL": redis_url, **env})
            stack.callback(replica.kill)
            replica.start()
            replicas.append(replica)
        for replica in replicas:
            eventually(replica.ready, START_S, f"{replica.name} ready")
        yield _haproxy(stack, root, replicas)
