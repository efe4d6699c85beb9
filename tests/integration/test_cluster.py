"""The service against a real three-node Redis Cluster (the same redis-server binary): every key of a game shares a
slot, so the scripts and multi-key reads work there too; live streams hear the changes saved on any node."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest
import redis
from litestar.testing import TestClient
from redis.crc import key_slot

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra import keyspace
from pyramide.service.infra.embedded_redis import SERVER_BINARY
from pyramide.service.infra.settings import Settings
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.serving import serve_in_thread
from tests.support.streams import LAYOUT, MOVES, Sse, _game, _play, _player, _until
from tests.support.waiting import eventually

CLI = SERVER_BINARY.parent / "redis-cli"


def _free_ports(count: int) -> list[int]:
    """Ports below 55536 whose cluster-bus port (the port + 10000) is free too."""
    ports: list[int] = []
    for port in range(21000 + os.getpid() % 20000, 55000):
        if len(ports) == count:
            break
        if all(_free(p) for p in (port, port + 10000)):
            ports.append(port)
    return ports


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture
def cluster_url(cluster_ports: list[int]) -> str:
    """The cluster, emptied: each test starts from no keys, whichever ran before it (the order is random)."""
    for port in cluster_ports:
        with redis.Redis(port=port) as node:
            node.flushall()
    return f"redis://127.0.0.1:{cluster_ports[0]}"


@pytest.fixture(scope="module")
def cluster_ports(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[int]]:
    """A three-node Redis cluster, started once for the module: its nodes' ports."""
    root = tmp_path_factory.mktemp("cluster")
    ports = _free_ports(3)
    nodes = []
    for port in ports:
        data = Path(root / str(port))
        data.mkdir()
        nodes.append(
            subprocess.Popen(
                [str(SERVER_BINARY), "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                 "--cluster-config-file", "nodes.conf", "--dir", str(data), "--save", "", "--appendonly", "no",
                 "--logfile", str(data / "redis.log")],
                stdout=subprocess.DEVNULL,
            )
        )  # fmt: skip
    try:
        for port in ports:
            _wait(port)
        addresses = [f"127.0.0.1:{p}" for p in ports]
        subprocess.run(
            [str(CLI), "--cluster", "create", *addresses, "--cluster-replicas", "0", "--cluster-yes"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip

        def ok() -> bool:
            info = subprocess.run([str(CLI), "-p", str(ports[0]), "cluster", "info"], capture_output=True, text=True)
            return "cluster_state:ok" in info.stdout

        with contextlib.suppress(AssertionError):
            eventually(ok, 30)
        yield ports
    finally:
        for node in nodes:
            node.terminate()
            node.wait(timeout=10)


def _wait(port: int) -> None:

    def pong() -> bool:
        done = subprocess.run([str(CLI), "-p", str(port), "ping"], capture_output=True, text=True)
        return done.stdout.strip() == "PONG"

    try:
        eventually(pong, 10)
    except AssertionError:
        raise RuntimeError(f"cluster node {port} did not start") from None


def test_a_game_through_a_redis_cluster(cluster_url: str) -> None:
    app = create_app(Settings(redis={"url": cluster_url, "cluster": True}, solver={"time_limit_s": 1}))
    client: TestClient[Any]
    with TestClient(app) as client:
        token = client.post(
            "/v1/players", json={}, headers={"Idempotency-Key": "cluster-player-0001-long-enough-key"}
        ).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        assert client.get("/health/ready").status_code == 200
        games = [client.post("/v1/games", json={"code": f"PY1-N-CLUSTE{c}"}, headers=auth).json() for c in "ABCDE"]
        for game in games:
            url = f"/v1/games/{game['id']}"
            assert client.post(f"{url}/moves", json={"type": "draw"}, headers=auth).json()["moves"] == 1
            retried = [
                client.post(f"{url}/taps", json={"target": "stock"}, headers={**auth, "Idempotency-Key": "tap-1"})
                for _ in range(2)
            ]
            assert retried[0].content == retried[1].content and retried[0].json()["moves"] == 2
            stale = client.post(f"{url}/moves", json={"type": "draw"}, headers={**auth, "If-Match": '"0"'})
            assert stale.status_code == 412
            assert client.get(f"{url}/record", headers=auth).json()["record"] == "D D"
        analysis = client.get("/v1/deals/PY1-N-AAAAAAS/analysis").json()
        assert analysis["winnable"] is True
        _win_is_counted_across_slots(client, auth)


def _win_is_counted_across_slots(client: TestClient[Any], auth: dict[str, str]) -> None:
    """The game's, the player's and the deal's keys live in different slots: a win still counts once in each."""
    code = str(DealCode.for_layout(easy_game().layout))
    game = client.post("/v1/games", json={"code": code}, headers=auth).json()
    for move in parse_record(EASY_CLEARING):
        last = client.post(f"/v1/games/{game['id']}/moves", json=move_body(move), headers=auth)
    assert last.json()["status"] == "won"
    again = client.post(f"/v1/games/{game['id']}/moves", json={"type": "undo"}, headers=auth)
    assert again.status_code == 409
    stats = client.get("/v1/players/me/stats", headers=auth).json()
    assert (stats["played"], stats["won"], stats["in_progress"]) == (6, 1, 5)
    assert client.get("/v1/players/me/wins", headers=auth).json()["entries"][0]["game_id"] == game["id"]
    assert [e["moves"] for e in client.get(f"/v1/leaderboards/{code}").json()["entries"]] == [16]
    listed = client.get("/v1/players/me/games", headers=auth).json()["entries"]
    assert [e["status"] for e in listed] == [
        "won",
        "in_progress",
        "in_progress",
        "in_progress",
        "in_progress",
        "in_progress",
    ]
    assert listed[0]["id"] == game["id"], "the lists live in the player's slot, written with each change"
    exported = client.get("/v1/players/me/export", headers=auth).json()
    assert len(exported["games"]) == 6 and list(exported["leaderboard_entries"]) == [code]
    assert client.delete("/v1/players/me", headers=auth).status_code == 204
    assert client.get(f"/v1/leaderboards/{code}").json()["entries"] == [], "the board's slot is cleared too"
    assert client.get("/v1/players/me", headers=auth).status_code == 401
    assert client.delete("/v1/players/me", headers=auth).status_code == 204


def _slot_owners(cluster_url: str) -> dict[int, int]:
    """Each slot's node, by its port (as ``CLUSTER SLOTS`` tells)."""
    with redis.Redis.from_url(cluster_url) as node:
        ranges = node.execute_command("CLUSTER SLOTS")
    return {slot: int(owner[1]) for start, end, owner, *_ in ranges for slot in range(start, end + 1)}


def _port_of(owners: dict[int, int], key: str) -> int:
    """The port of the node that holds ``key``'s slot."""
    return owners[key_slot(key.encode())]


def test_live_streams_through_a_redis_cluster(cluster_url: str) -> None:
    """A game's stream and a board's stream, over real HTTP, on a cluster whose URL names a node that holds
    neither the game's nor the board's slot: the process's one notices connection subscribes there, while each
    change is saved and published on the node of its key's slot; every change still arrives, and the streams'
    leases in the caps are taken and given back."""
    owners = _slot_owners(cluster_url)
    board_channel = keyspace.boards_of_deal(str(LAYOUT)).ranked
    named = next(port for port in sorted(set(owners.values())) if port != _port_of(owners, board_channel))
    settings = Settings(
        redis={"url": f"redis://127.0.0.1:{named}", "cluster": True},
        solver={"time_limit_s": 1},
        streams={"heartbeat_s": 0.5},
    )
    with serve_in_thread(create_app(settings)) as api:
        for _ in range(20):  # a player (whose games share their slot) on another node than the named one
            player = _player(api)
            player_id = UUID(httpx.get(f"{api}/v1/players/me", headers=player).json()["id"])
            game = _game(api, player)
            game_channel = keyspace.game_state(player_id, UUID(game["id"]))
            if _port_of(owners, game_channel) != named:
                break
        assert _port_of(owners, game_channel) != named
        _follow_through_another_node(api, player, game, named, [game_channel, board_channel])
    leases = keyspace.address_streams("127.0.0.1")
    with redis.Redis(port=_port_of(owners, leases)) as node:
        eventually(lambda: node.zcard(leases) == 0, 5, what="the streams' leases given back")


def _follow_through_another_node(
    api: str, player: dict[str, str], game: dict[str, Any], named: int, channels: list[str]
) -> None:
    """The game and the board followed through the subscription on the node at port ``named``, on ``channels``:
    every change arrives, though saved and published on other nodes."""
    followed = Sse(f"{api}/v1/games/{game['id']}/events", player)
    board = Sse(f"{api}/v1/leaderboards/{LAYOUT}/events")
    try:
        assert followed.status == 200 and followed.next()["id"] == game["version"]
        before = board.next()
        with redis.Redis(port=named) as node:
            assert sorted(c.decode() for c in node.pubsub_channels()) == sorted(channels)
        moved = _play(api, player, game["id"], MOVES[:1])
        assert followed.next()["id"] == moved["version"]
        won = _play(api, player, game["id"], MOVES[1:])
        seen = followed.next()
        while seen["id"] < won["version"]:
            seen = followed.next()
        assert seen["data"]["status"] == "won"
        entered = len(before["data"]["entries"]) + 1  # the deal's par, saved meanwhile, may come as an event first
        after = _until(board, lambda shown: len(shown["entries"]) == entered)
        assert after["id"] > before["id"]
    finally:
        followed.close()
        board.close()
