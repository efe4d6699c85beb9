"""The metrics' own port (issue 56): `pyramide serve --workers 2` shows the domain's metrics moving after real actions
(a webhook delivered to a loopback receiver, live streams, a 429, solver searches, Redis scripts) on a port apart
from the API's, whose ``/metrics`` is not public; the opt-in that keeps ``/metrics`` on the API's port for the
operator alone."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

import pyramide
from pyramide.service.app import create_app
from pyramide.service.infra.settings import MetricsSettings, Settings
from tests.support.deals import EASY_CODE
from tests.support.operators import OPERATOR, OPERATOR_KEY
from tests.support.serving import Served, serving
from tests.support.streams import LAYOUT, RawStream
from tests.support.waiting import eventually
from tests.support.webhooks import abandon, as_user, new_app, receiving, register

BOARD = f"/v1/leaderboards/{LAYOUT}/events"
STREAMERS = ["127.0.0.41", "127.0.0.42", "127.0.0.43"]


def _samples(served: Served) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """One scrape of the metrics' port: every sample by its name and labels."""
    text = httpx.get(served.metrics_url, timeout=5).text
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def _value(served: Served, name: str, **labels: str) -> float:
    return _samples(served).get((name, frozenset(labels.items())), 0.0)


def _total(served: Served, name: str) -> float:
    """A series summed over its labels."""
    return sum(value for (found, _), value in _samples(served).items() if found == name)


@pytest.mark.slow
def test_the_metrics_port_shows_the_domains_metrics_of_every_worker_and_the_api_port_none(tmp_path: Path) -> None:
    env = {
        "PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY,
        "PYRAMIDE_WEBHOOK_ALLOW_LOOPBACK": "true",
        "PYRAMIDE_LIMIT_ANALYSES": "1",
        "PYRAMIDE_MAX_STREAMS": "1",
    }
    with receiving() as receiver, serving(tmp_path / "data", tmp_path, "--workers", "2", env=env) as served:
        http = httpx.Client(base_url=served.url, timeout=10)
        assert http.get("/metrics").status_code == 404, "not on the API's port"
        assert http.get("/metrics", headers=OPERATOR).status_code == 404, "not even for the operator, by default"
        info = {"version": pyramide.__version__, "python": platform.python_version()}
        assert _value(served, "pyramide_build_info", **info) == 1

        key = new_app(http)
        register(http, key, receiver.url, ["game.abandoned"])
        abandon(http, as_user(key, "metrics-player"))  # a game on a fresh deal: its par is worked out too
        receiver.wait(1)
        eventually(lambda: _value(served, "pyramide_webhook_attempts_total", outcome="delivered") == 1, 10)
        assert _value(served, "pyramide_webhook_attempt_duration_seconds_count") == 1
        assert _value(served, "pyramide_webhook_delivery_latency_seconds_count") == 1
        assert ("pyramide_webhook_outboxes_pending", frozenset()) in _samples(served)
        assert _total(served, "pyramide_redis_round_trip_seconds_count") > 0, "each worker's probe, from its start"

        analysis = f"/v1/deals/{EASY_CODE}/analysis"
        searched = _value(served, "pyramide_solver_search_seconds_count", kind="analysis")  # challenges' deals too
        assert http.get(analysis).status_code == 200
        refused = http.get(analysis)
        assert refused.status_code == 429 and refused.json()["code"] == "rate_limited"
        assert _value(served, "pyramide_refusals_total", limit="analyses") == 1
        assert _value(served, "pyramide_solver_search_seconds_count", kind="analysis") >= searched + 1
        eventually(lambda: _value(served, "pyramide_solver_search_seconds_count", kind="par") >= 1, 20)
        assert _value(served, "pyramide_solver_searches_waiting") == 0

        # One stream a process at most: of three, over two workers, one at least ends to make room.
        streams = [RawStream(served.url, BOARD, source) for source in STREAMERS]
        try:
            for stream in streams:
                assert stream.status == 200 and stream.first()["event"] == "board"
            eventually(lambda: _value(served, "pyramide_streams_ended_by_budget_total") >= 1, 10)
            still = [stream for stream in streams if stream.still_open()]
            eventually(lambda: _value(served, "pyramide_streams_open") == len(still), 10)
            assert 1 <= len(still) <= 2
            ended = _value(served, "pyramide_streams_ended_by_budget_total")
            assert ended == len(streams) - len(still)
        finally:
            for stream in streams:
                stream.close()
        eventually(lambda: _value(served, "pyramide_streams_open") == 0, 10)


def _scrape(client: TestClient[Any], headers: dict[str, str] | None = None) -> httpx.Response:
    return client.get("/metrics", headers=headers or {})


def test_metrics_on_the_api_port_are_the_operators_alone_when_opted_in(settings: Settings) -> None:
    opted = settings.but(metrics={"on_api_port": True}, secrets={"operator_key": OPERATOR_KEY})
    with TestClient(create_app(opted)) as client:
        assert _scrape(client).status_code == 401
        assert _scrape(client, {"Authorization": "Bearer not-the-key"}).status_code == 401
        answer = _scrape(client, OPERATOR)
        assert answer.status_code == 200 and "pyramide_build_info{" in answer.text
    with TestClient(create_app(settings.but(metrics={"on_api_port": True}))) as client:
        assert _scrape(client, OPERATOR).status_code == 404, "no operator key: no one's"


def test_the_metrics_port_is_switched_off_by_off_or_0() -> None:
    assert MetricsSettings().port == 9100
    assert MetricsSettings(port="off").port is None and MetricsSettings(port="0").port is None
