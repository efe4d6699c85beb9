"""`pyramide serve` as a user runs it: its own embedded Redis, fuzzed over real HTTP on 127.0.0.1, data kept across
a restart, and Redis stopped with it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.generation import GenerationMode

from tests.support.api_fuzz import OWN_PLAYER, can_be_invalid, configure, run_workflows
from tests.support.serving import START_S
from tests.support.waiting import eventually

ORIGIN = "https://front.example"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def _serve(data_dir: Path, stop: signal.Signals = signal.SIGINT) -> Iterator[str]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {
        "PYRAMIDE_SOLVER_TIME_LIMIT_S": "0.5",
        "PYRAMIDE_CORS_ORIGINS": ORIGIN,
        "PYRAMIDE_DRAIN_S": "0",  # stopped at once: a drain is tests/integration/test_drain.py's
    }
    log = data_dir.parent / f"serve-{port}.log"  # a file, not a pipe: a pipe nobody reads would fill and block it
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "pyramide", "serve", "--port", str(port), "--data-dir", str(data_dir)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=output,
        )
    url = f"http://127.0.0.1:{port}"
    try:

        def ready() -> bool:
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            try:
                return httpx.get(f"{url}/health/ready", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        with contextlib.suppress(AssertionError):
            eventually(ready, START_S)
        assert process.poll() is None, log.read_text(errors="replace")[-3000:]
        yield url
    finally:
        process.send_signal(stop)
        process.wait(timeout=20)


def _redis_running(data_dir: Path) -> bool:
    done = subprocess.run(["pgrep", "-f", str(data_dir / "redis.sock")], capture_output=True, text=True)
    return bool(done.stdout.strip())


def _headers(url: str, case: Any, auth: dict[str, str]) -> dict[str, str]:
    """The shared player's token, or for a case that replaces its token a player of its own."""
    if case.operation.definition.raw.get("operationId") not in OWN_PLAYER:
        return auth
    return {"Authorization": f"Bearer {httpx.post(f'{url}/v1/players', json={}).json()['token']}"}


@pytest.mark.slow
def test_serve_fuzzed_over_http_and_persistent(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with _serve(data_dir) as url:
        assert _redis_running(data_dir)
        token = httpx.post(f"{url}/v1/players", json={}).json()["token"]
        auth = {"Authorization": f"Bearer {token}"}
        game = httpx.post(f"{url}/v1/games", json={"code": "PY1-N-LIVEONE"}, headers=auth).json()
        httpx.post(f"{url}/v1/games/{game['id']}/moves", json={"type": "draw"}, headers=auth)
        schema = configure(schemathesis.openapi.from_url(f"{url}/schema/openapi.json"))
        failures = []
        for result in schema.get_all_operations():
            operation: Any = result.ok()
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                raw = operation.definition.raw
                if mode is GenerationMode.NEGATIVE and not can_be_invalid(raw, schema.raw_schema):
                    continue

                @settings(max_examples=10, deadline=None, database=None, derandomize=True,
                          suppress_health_check=list(HealthCheck))  # fmt: skip
                @given(operation.as_strategy(mode))
                def run(case: Any) -> None:
                    case.call_and_validate(base_url=url, headers=_headers(url, case, auth))

                try:
                    run()
                except Exception as error:
                    failures.append(f"{operation.label} {mode.value}: {error}")
        assert not failures, "\n\n".join(failures)
        run_workflows(schema, 10, lambda case: {"base_url": url, "headers": _headers(url, case, auth)}, steps=5)
    assert not _redis_running(data_dir), "the embedded Redis stops with the service"
    with _serve(data_dir) as url:
        kept = httpx.get(f"{url}/v1/games/{game['id']}", headers=auth)
        assert kept.status_code == 200 and kept.json()["moves"] == 1, "games survive a restart (append-only file)"


def test_a_page_on_another_origin_may_call_the_served_api(tmp_path: Path) -> None:
    """Preflight and request over real HTTP, as a browser sends them, to `pyramide serve` configured by its
    environment (PYRAMIDE_CORS_ORIGINS)."""
    with _serve(tmp_path / "data") as url:
        preflight = httpx.options(
            f"{url}/v1/players",
            headers={"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
                     "Access-Control-Request-Headers": "content-type, idempotency-key, x-request-id"},
        )  # fmt: skip
        assert preflight.status_code in (200, 204) and preflight.headers["access-control-allow-origin"] == ORIGIN
        created = httpx.post(f"{url}/v1/players", json={}, headers={"Origin": ORIGIN})
        assert created.headers["access-control-allow-origin"] == ORIGIN
        assert "location" in created.headers["access-control-expose-headers"].lower()
        other = httpx.post(f"{url}/v1/players", json={}, headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers


def test_serve_stopped_by_sigterm_stops_its_redis(tmp_path: Path) -> None:
    """What `docker stop`, systemd and supervisors send: the embedded Redis must not outlive the service."""
    data_dir = tmp_path / "data"
    with _serve(data_dir, stop=signal.SIGTERM):
        assert _redis_running(data_dir)
    assert not _redis_running(data_dir), "the embedded Redis stops with the service"
