"""The benchmarks' baseline routes answer 200: each benchmark compares the move route with a bare Redis GET and SET,
and until issue 58 the one in ``benchmarks/service_load.py`` answered 500 on every request (its handler asked for a
``Protocol`` Litestar cannot check at run time), so the published ratios were against an error path. Each test
builds the benchmark's own app from its factory, over the session's real Redis."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from litestar.testing import TestClient

from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.settings import Limits, Settings

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _benchmark(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A module of ``benchmarks/``, imported as the benchmarks import each other (the folder on ``sys.path``)."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module(name)


def _twice(client: TestClient[Any]) -> list[tuple[int, Any]]:
    answers = [client.post("/bench/baseline/k1") for _ in range(2)]
    return [(answer.status_code, answer.json()) for answer in answers]


def test_service_load_baseline_answers_200_and_reads_what_it_wrote(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The baseline of service_load.py, service_instructions.py and move_profile.py: the service's app plus the
    route, through the service's middleware and its Redis client."""
    service_load = _benchmark("service_load", monkeypatch)
    with TestClient(service_load.bench_app(settings)) as client:
        assert _twice(client) == [(200, {"had": 0}), (200, {"had": len(service_load.BASELINE_VALUE)})]


def test_service_scale_baseline_app_answers_200(redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bare app of service_scale.py (its uvicorn factory reads ``REDIS_URL``)."""
    service_scale = _benchmark("service_scale", monkeypatch)
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    with TestClient(service_scale.baseline_app()) as client:
        status, _ = _twice(client)[1]
        assert status == 200


def test_the_benchmarks_switch_every_limit_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """What service_scale.py and solver_capacity.py set for `pyramide serve` is read as no rate limit, quota or cap
    at all: their one load address plays far past a person's (the daily quota of games once ended its runs)."""
    for name, value in _benchmark("service_load", monkeypatch).no_limits_env().items():
        monkeypatch.setenv(name, value)
    settings = Settings.from_env()
    counts = [count for group in Limits.groups() for count in getattr(settings.limits, group).model_dump().values()]
    assert counts and set(counts) == {0}
    assert settings.caps.max_unfinished_games == settings.caps.max_game_operations == 0
