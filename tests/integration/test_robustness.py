"""`pyramide serve` as an operator runs it, with real processes killed for real: the embedded Redis dies with its
parent, a data directory has one owner, a dead Redis is brought back, every mode shuts down cleanly, backups
restore, and the logs say what happened."""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import suppress
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import redis

from pyramide.service.infra.embedded_redis import SERVER_BINARY
from pyramide.service.infra.settings import HttpSettings
from tests.support.serving import _free_port, _pyramide, _start, serving
from tests.support.waiting import eventually


def _gone_within(pids: list[int], seconds: float) -> bool:
    def gone() -> bool:
        return not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE for p in pids)

    try:
        return eventually(gone, seconds)
    except AssertionError:
        return False


def _answers(socket_path: Path) -> bool:
    """Whether the Redis listening on ``socket_path`` answers a PING yet."""
    with suppress(redis.RedisError, OSError):
        return bool(redis.Redis(unix_socket_path=str(socket_path)).ping())
    return False


def _player_and_game(url: str) -> tuple[dict[str, str], str]:
    token = httpx.post(f"{url}/v1/players", json={}).json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    game = httpx.post(f"{url}/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=auth).json()["id"]
    assert httpx.post(f"{url}/v1/games/{game}/moves", json={"type": "draw"}, headers=auth).status_code == 200
    return auth, game


def test_the_embedded_redis_dies_with_a_killed_server(tmp_path: Path) -> None:
    with serving(tmp_path / "data", tmp_path) as served:
        redis_pid = served.redis_pid()
        served.process.send_signal(signal.SIGKILL)
        served.process.wait(timeout=5)
        assert _gone_within([redis_pid], 1.0), "the embedded Redis outlived its parent"


@pytest.mark.slow
def test_a_data_directory_has_one_owner(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with serving(data, tmp_path) as served:
        auth, game = _player_and_game(served.url)
        second = _pyramide("serve", "--port", str(_free_port()), "--data-dir", str(data))
        assert second.returncode == 3
        assert "in use by another `pyramide serve`" in second.stderr
        assert httpx.get(f"{served.url}/v1/games/{game}", headers=auth).status_code == 200, "the first serves on"


def test_a_redis_left_over_from_a_crash_is_stopped_before_a_new_one_starts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    leftover = subprocess.Popen(  # as a crash of an older version leaves it: running on its own, on the directory
        [str(SERVER_BINARY), "--port", "0", "--unixsocket", str(data / "redis.sock"), "--dir", str(data),
         "--appendonly", "yes", "--pidfile", str(data / "redis.pid"), "--save", ""],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        eventually((data / "redis.pid").exists, 10)
        eventually(lambda: _answers(data / "redis.sock"), 10)
        redis.Redis(unix_socket_path=str(data / "redis.sock")).set("kept-from-before", "1")
        with serving(data, tmp_path) as served:
            assert leftover.wait(timeout=5) == 0, "the leftover was stopped (SIGTERM: its writes on disk)"
            assert served.redis_pid() != leftover.pid
            assert redis.Redis(unix_socket_path=str(data / "redis.sock")).get("kept-from-before") == b"1"
            assert any("left running" in line["message"] for line in served.lines())
    finally:
        with suppress(ProcessLookupError):
            leftover.kill()


def test_a_dead_redis_is_brought_back_on_the_same_data(tmp_path: Path) -> None:
    with serving(tmp_path / "data", tmp_path) as served:
        auth, game = _player_and_game(served.url)
        before = httpx.get(f"{served.url}/v1/games/{game}", headers=auth).json()
        os.kill(served.redis_pid(), signal.SIGKILL)
        statuses = set()

        def back() -> bool:
            response = httpx.get(f"{served.url}/v1/games/{game}", headers=auth)
            statuses.add(response.status_code)
            return (
                response.status_code == 200
                and "pyramide_redis_restarts_total 1.0" in httpx.get(served.metrics_url).text
            )

        with suppress(AssertionError):
            eventually(back, 10)
        after = httpx.get(f"{served.url}/v1/games/{game}", headers=auth).json()
        assert {**after, "elapsed_ms": 0} == {**before, "elapsed_ms": 0}, "the game survived (append-only file)"
        assert statuses <= {200, 503}
        assert httpx.get(f"{served.url}/health/live").status_code == 200
        assert any("the embedded Redis exited" in line["message"] for line in served.lines())
        assert any("is back" in line["message"] for line in served.lines())


def test_liveness_turns_503_when_redis_cannot_be_brought_back_and_200_once_it_is(tmp_path: Path) -> None:
    """The supervisor never gives up: without an orchestrator, the service recovers by itself once the cause is
    gone (here the operator puts a good append-only file back)."""
    data = tmp_path / "data"
    with serving(data, tmp_path, env={"PYRAMIDE_REDIS_MAX_RESTARTS": "2"}) as served:
        auth, game = _player_and_game(served.url)
        served.aof_written()
        good = (data / "appendonly.aof").read_bytes()
        broken = data / "broken.aof"
        broken.write_text("*this is no append-only file\r\n")
        broken.replace(data / "appendonly.aof")  # Redis goes on writing to the file it opened
        os.kill(served.redis_pid(), signal.SIGKILL)
        with suppress(AssertionError):
            eventually(lambda: httpx.get(f"{served.url}/health/live").status_code != 200, 15)
        live = httpx.get(f"{served.url}/health/live")
        assert live.status_code == 503 and live.json()["code"] == "service_unavailable"
        assert httpx.get(f"{served.url}/health/ready").status_code == 503
        assert any(line["level"] == "CRITICAL" for line in served.lines())

        (data / "appendonly.aof").write_bytes(good)
        with suppress(AssertionError):
            eventually(lambda: httpx.get(f"{served.url}/health/live").status_code == 200, 20)
        assert httpx.get(f"{served.url}/health/live").status_code == 200, "Redis came back by itself"
        assert httpx.get(f"{served.url}/v1/games/{game}", headers=auth).json()["version"] == 1
        failed = [line for line in served.lines() if line["message"].startswith("restarting the embedded Redis failed")]
        assert [line["level"] for line in failed] == ["ERROR"], "one line for the outage, not one a try (issue 56)"
        back = [line["message"] for line in served.lines() if line["message"].startswith("the embedded Redis is back")]
        assert back and back[-1].endswith("failed tries)") and " after 1 failed" not in back[-1], back


@pytest.mark.parametrize("mode", ["embedded", "redis_url", "workers"])
@pytest.mark.slow
def test_sigterm_finishes_and_leaves_nothing_running(tmp_path: Path, mode: str, redis_server: Any) -> None:
    env = {"REDIS_URL": redis_server.url} if mode == "redis_url" else {}
    options = ("--workers", "2") if mode == "workers" else ()
    served = _start(tmp_path / "data", tmp_path, *options, env=env)
    family: list[psutil.Process] = []
    try:
        auth, game = _player_and_game(served.url)
        assert httpx.get(f"{served.url}/v1/games/{game}/hint", headers=auth, timeout=30).status_code == 200
        family = served.family()
        assert len(family) >= (3 if mode == "redis_url" else 4), [p.cmdline() for p in family]
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=HttpSettings().shutdown_grace_s + 10) == 0
        assert _gone_within([p.pid for p in family], 3.0), [p.cmdline() for p in family if p.is_running()]
    finally:
        for process in family or served.family():
            with suppress(psutil.NoSuchProcess):
                process.kill()


@pytest.mark.slow
def test_workers_share_one_embedded_redis(tmp_path: Path) -> None:
    with serving(tmp_path / "data", tmp_path, "--workers", "2") as served:
        family = served.family()
        redis_servers = [p for p in family if "redis-server" in " ".join(p.cmdline())]
        assert len(redis_servers) == 1
        auth, game = _player_and_game(served.url)
        with httpx.Client(base_url=served.url, limits=httpx.Limits(max_keepalive_connections=0)) as client:
            versions = [client.post(f"/v1/games/{game}/moves", json={"type": "draw"}, headers=auth).json()["version"]
                        for _ in range(10)]  # fmt: skip
        assert versions == list(range(2, 12)), "one game, whichever worker answers"


def test_appendfsync_is_configurable(tmp_path: Path) -> None:
    """Good values, written as operators write them, start the service and take effect; a bad one stops it."""
    env = {
        "PYRAMIDE_REDIS_APPENDFSYNC": "always",
        "PYRAMIDE_REDIS_MAXMEMORY": "64MB",
        "PYRAMIDE_CORS_ORIGINS": "https://app.example, http://localhost:5173/",
        "PYRAMIDE_TRUSTED_PROXY_HEADER": "X-Forwarded-For",
        "PYRAMIDE_TRUSTED_PROXIES": "10.0.0.0/8",
    }
    with serving(tmp_path / "data", tmp_path, env=env) as served:
        client = redis.Redis(unix_socket_path=str(served.data_dir / "redis.sock"))
        assert client.config_get("appendfsync") == {"appendfsync": "always"}
        assert client.config_get("maxmemory") == {"maxmemory": str(64 << 20)}
        origin = {"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"}
        preflight = httpx.options(f"{served.url}/v1/players", headers=origin)
        assert preflight.headers.get("access-control-allow-origin") == "http://localhost:5173"
    bad = _pyramide("serve", "--data-dir", str(tmp_path / "other"), env={"PYRAMIDE_REDIS_APPENDFSYNC": "sometimes"})
    assert bad.returncode == 2 and "PYRAMIDE_REDIS_APPENDFSYNC" in bad.stderr, bad.stderr


@pytest.mark.slow
def test_backup_while_serving_and_restore_into_a_new_directory(tmp_path: Path) -> None:
    snapshot = tmp_path / "backup.rdb"
    with serving(tmp_path / "data", tmp_path) as served:
        auth, game = _player_and_game(served.url)
        before = httpx.get(f"{served.url}/v1/games/{game}", headers=auth).json()
        made = _pyramide("backup", str(snapshot), "--data-dir", str(served.data_dir))
        assert made.returncode == 0, made.stderr
    restored = _pyramide("restore", str(snapshot), "--data-dir", str(tmp_path / "restored"))
    assert restored.returncode == 0, restored.stderr
    again = _pyramide("restore", str(snapshot), "--data-dir", str(tmp_path / "restored"))
    assert again.returncode == 1 and "already holds data" in again.stderr
    with serving(tmp_path / "restored", tmp_path) as served:
        after = httpx.get(f"{served.url}/v1/games/{game}", headers=auth).json()
    assert {**after, "elapsed_ms": 0} == {**before, "elapsed_ms": 0}


def test_every_request_gets_a_request_id_and_one_json_log_line(tmp_path: Path) -> None:
    with serving(tmp_path / "data", tmp_path) as served:
        given = httpx.get(f"{served.url}/health/live", headers={"X-Request-ID": "trace-42"})
        made = httpx.get(f"{served.url}/no/such/route")
        bad = httpx.get(f"{served.url}/health/live", headers={"X-Request-ID": "x" * 500})
        assert given.headers["x-request-id"] == "trace-42"
        assert made.status_code == 404 and len(made.headers["x-request-id"]) == 16
        assert bad.headers["x-request-id"] != "x" * 500
        last = bad.headers["x-request-id"]
        lines = eventually(lambda: [ln for ln in served.lines() if ln.get("request_id") == last] and served.lines(), 5)
    requests = [line for line in lines if line["logger"] == "pyramide.request"]
    assert [(r["request_id"], r["status"]) for r in requests[-3:]] == [
        ("trace-42", 200),
        (made.headers["x-request-id"], 404),
        (bad.headers["x-request-id"], 200),
    ]
    assert all("duration_ms" in r and "trace" not in r for r in requests)
    assert [(r["method"], r["route"]) for r in requests[-3:]] == [
        ("GET", "/health/live"),
        ("GET", None),  # no route matched: the path (it may hold ids) is never logged
        ("GET", "/health/live"),
    ]
    assert all(r["app"] is None and "trace_id" not in r for r in requests), "no app's key, tracing off"
