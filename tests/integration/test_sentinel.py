"""The service on a Redis run by Redis Sentinel, as operators run it: a real master, a real replica and a real
Sentinel (the same redis-server binary, on loopback ports). The master is killed for real (SIGKILL); the Sentinel
promotes the replica; the service, on ``redis+sentinel://``, goes on with what the replica had."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import httpx
import redis
from litestar.testing import TestClient
from redis.exceptions import ConnectionError as RedisConnectionError

from pyramide.service.app import create_app
from pyramide.service.infra.embedded_redis import SERVER_BINARY
from pyramide.service.infra.redis import connect
from pyramide.service.infra.settings import RedisSettings, Settings
from tests.support.serving import _free_port
from tests.support.streams import MOVES, Sse, _game, _player, _serve, _until
from tests.support.waiting import eventually

SERVICE = "games"
DOWN_AFTER_MS = 500
"""How long the master may not answer before the Sentinel takes it for down (and, quorum 1, fails over)."""


@dataclass
class Topology:
    master: subprocess.Popen[bytes]
    master_port: int
    replica_port: int
    sentinel_port: int

    @property
    def url(self) -> str:
        return f"redis+sentinel://127.0.0.1:{self.sentinel_port}/{SERVICE}/0"

    def sentinel(self) -> redis.Redis:
        return redis.Redis(port=self.sentinel_port, socket_timeout=2)


def _redis_server(stack: ExitStack, data: Path, *args: str) -> subprocess.Popen[bytes]:
    """A redis-server started with ``args``, killed when ``stack`` closes."""
    data.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        [str(SERVER_BINARY), *args, "--dir", str(data), "--logfile", str(data / "redis.log")],
        stdout=subprocess.DEVNULL,
    )

    def end() -> None:
        process.kill()
        process.wait(timeout=10)

    stack.callback(end)
    return process


def _answers(port: int) -> bool:
    with suppress(redis.RedisError), redis.Redis(port=port, socket_timeout=1) as node:
        return bool(node.ping())
    return False


def _master_and_replica(stack: ExitStack, root: Path) -> tuple[subprocess.Popen[bytes], int, int]:
    """A master and a replica of it, in sync (the replica has every write the master had)."""
    master_port, replica_port = _free_port(), _free_port()
    common = ("--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
    master = _redis_server(stack, root / "master", "--port", str(master_port), *common)
    eventually(lambda: _answers(master_port), 10, "the master answering")
    _redis_server(
        stack, root / "replica", "--port", str(replica_port), *common, "--replicaof", "127.0.0.1", str(master_port)
    )

    def in_sync() -> bool:
        with redis.Redis(port=replica_port, socket_timeout=1) as replica:
            return bool(replica.info("replication").get("master_link_status") == "up")

    eventually(lambda: _answers(replica_port) and in_sync(), 20, "the replica in sync")
    return master, master_port, replica_port


@contextmanager
def _topology(root: Path) -> Iterator[Topology]:
    """A master, a replica and one Sentinel watching them (quorum 1, a short down time and failover timeout)."""
    with ExitStack() as stack:
        master, master_port, replica_port = _master_and_replica(stack, root)
        sentinel_port = _free_port()
        conf = root / "sentinel" / "sentinel.conf"
        conf.parent.mkdir()
        conf.write_text(
            f"port {sentinel_port}\nbind 127.0.0.1\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {master_port} 1\n"
            f"sentinel down-after-milliseconds {SERVICE} {DOWN_AFTER_MS}\n"
            f"sentinel failover-timeout {SERVICE} 2000\n"
        )
        _redis_server(stack, conf.parent, str(conf), "--sentinel")
        topology = Topology(master, master_port, replica_port, sentinel_port)

        def sees_the_replica() -> bool:
            with topology.sentinel() as sentinel:
                replicas = sentinel.sentinel_slaves(SERVICE)
            return any(r["port"] == replica_port and not r["is_sdown"] for r in replicas)

        eventually(lambda: _answers(sentinel_port) and sees_the_replica(), 20, "the Sentinel seeing the replica")
        yield topology


def test_the_service_goes_on_when_the_sentinel_promotes_the_replica(tmp_path: Path) -> None:
    """Moves acknowledged and replicated before the master is killed are all there after the failover; moves and
    reads during it answer 503 (never a 500, never applied twice), then the service takes moves again on the new
    master, without a restart, and a live stream resumed with the last id it saw before the kill tells the move made
    after it."""
    with _topology(tmp_path) as topology, _serve(tmp_path / "data", topology.url) as (api, _):
        player = _player(api)
        game = _game(api, player)["id"]
        for move in MOVES[:3]:
            assert httpx.post(f"{api}/v1/games/{game}/moves", json=move, headers=player).status_code == 200
        stream = Sse(f"{api}/v1/games/{game}/events", player)
        try:
            assert stream.status == 200
            seen = stream.next()["id"]
            with redis.Redis(port=topology.master_port) as master:
                assert master.wait(1, 5000) == 1, "the replica has acknowledged every write so far"
            topology.master.kill()
            killed_at = time.monotonic()
            topology.master.wait(timeout=10)
            statuses: list[int] = []

            def moved() -> httpx.Response | None:
                response = httpx.post(
                    f"{api}/v1/games/{game}/moves",
                    json=MOVES[3],
                    headers={**player, "Idempotency-Key": "after-the-failover-0001"},
                    timeout=10,
                )
                statuses.append(response.status_code)
                if response.status_code not in (200, 503):
                    raise RuntimeError(f"{response.status_code} during the failover: {response.text}")
                return response if response.status_code == 200 else None

            answered = eventually(moved, 60, "a move accepted on the new master")
            assert answered is not None
            print(  # the figure docs/operations.md quotes (pytest -s)
                f"failover: a move accepted {time.monotonic() - killed_at:.1f} s after SIGKILL of the master; "
                f"before it {statuses.count(503)} answers 503, none other"
            )
            with topology.sentinel() as sentinel:
                address = sentinel.sentinel_get_master_addr_by_name(SERVICE)
            assert int(address[1]) == topology.replica_port, "the Sentinel promoted the replica"
            assert answered.json()["moves"] == 4
            record = httpx.get(f"{api}/v1/games/{game}/record", headers=player)
            assert record.status_code == 200
            assert len(record.json()["record"].split()) == 4, "the three moves before the kill, and the new one"
            assert httpx.get(f"{api}/health/ready").status_code == 200
        finally:
            stream.close()
        resumed = Sse(f"{api}/v1/games/{game}/events", {**player, "Last-Event-ID": str(seen)})
        try:
            told = _until(resumed, lambda board: board["moves"] == 4)
            assert told["id"] == answered.json()["version"]
        finally:
            resumed.close()


def test_a_script_refused_by_a_demoted_master_fails_as_a_lost_connection(tmp_path: Path) -> None:
    """A node that answers ``READONLY`` (a master demoted by a failover, here a replica) is taken for a lost
    connection: the call fails with a ConnectionError (a 503, as redis-py's own Sentinel connections do, where it
    was a 500 before), and the connection is dropped, so that the next call connects afresh (through Sentinel, to
    the new master)."""
    with ExitStack() as stack:
        _, _, replica_port = _master_and_replica(stack, tmp_path)
        client = connect(RedisSettings(url=f"redis://127.0.0.1:{replica_port}/0", timeout_s=2))
        with redis.Redis(port=replica_port) as replica:
            sha = replica.script_load("redis.call('SET', KEYS[1], ARGV[1]) return 1")
            connections = int(replica.info("stats")["total_connections_received"])

            async def twice() -> list[object]:
                outcomes: list[object] = []
                for _ in range(2):
                    try:
                        outcomes.append(await client.evalsha(sha, 1, "k", "v"))
                    except Exception as error:  # what each call raised is the point
                        outcomes.append(error)
                await client.aclose()
                return outcomes

            outcomes = asyncio.run(twice())
            assert all(isinstance(outcome, RedisConnectionError) for outcome in outcomes), outcomes
            made = int(replica.info("stats")["total_connections_received"]) - connections
            assert made == 2, "each call connected afresh"


def test_a_master_short_of_replicas_answers_503_never_500(tmp_path: Path, settings: Settings) -> None:
    """A master with ``min-replicas-to-write 1`` and no replica in step refuses writes (``NOREPLICAS``): the
    service answers 503 with ``Retry-After``, as when Redis is down (a 500 before), and nothing was written."""
    with ExitStack() as stack:
        port = _free_port()
        common = ("--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
        _redis_server(stack, tmp_path / "master", "--port", str(port), *common, "--min-replicas-to-write", "1")
        eventually(lambda: _answers(port), 10, "the master answering")
        with TestClient(create_app(settings.but(redis={"url": f"redis://127.0.0.1:{port}/0"}))) as client:
            refused = client.post("/v1/players", json={})
            assert refused.status_code == 503, refused.text
            assert refused.json()["code"] == "service_unavailable" and "Retry-After" in refused.headers
        with redis.Redis(port=port) as master:
            assert master.dbsize() == 0
