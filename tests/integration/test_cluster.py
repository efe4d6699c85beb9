"""The service against a real three-node Redis Cluster (the same redis-server binary): every key of a game shares a
slot, so the scripts and multi-key reads work there too."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient

from pyramide.engine import DealCode
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.games.controller import move_body
from pyramide.service.infra.embedded_redis import SERVER_BINARY
from pyramide.service.infra.settings import Settings
from tests.unit.engine.layouts import EASY_CLEARING, easy_game

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


@pytest.fixture(scope="module")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
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
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            info = subprocess.run([str(CLI), "-p", str(ports[0]), "cluster", "info"], capture_output=True, text=True)
            if "cluster_state:ok" in info.stdout:
                break
            time.sleep(0.2)
        yield f"redis://127.0.0.1:{ports[0]}"
    finally:
        for node in nodes:
            node.terminate()
            node.wait(timeout=10)


def _wait(port: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done = subprocess.run([str(CLI), "-p", str(port), "ping"], capture_output=True, text=True)
        if done.stdout.strip() == "PONG":
            return
        time.sleep(0.05)
    raise RuntimeError(f"cluster node {port} did not start")


def test_a_game_through_a_redis_cluster(cluster_url: str) -> None:
    app = create_app(Settings(redis_url=cluster_url, redis_cluster=True, solver_time_limit_s=1))
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
