"""A dependency that is down, as the logs tell it (issue 56): once when the outage starts and once when it ends,
never once per attempt: the webhook delivery job, five times a second, wrote 59 warnings in 20 s."""

from __future__ import annotations

import logging

import pytest

from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.settings import Settings
from tests.support.deals import EASY_CODE, WINNING
from tests.support.serving import _free_port
from tests.support.waiting import run_due, run_job
from tests.support.webhooks import as_user, new_app, register, service

ATTEMPTS = 20


def test_a_redis_outage_is_logged_once_when_it_starts_and_once_when_it_ends(
    settings: Settings, clock: FakeClock, redis_server: EmbeddedRedis, caplog: pytest.LogCaptureFixture
) -> None:
    """A webhook waits for its receiver (its port closed) when Redis goes down; the delivery job tries 20 times
    while it is down: one line says Redis is unreachable, one that it is back, none per attempt (on main: 20
    warnings, one a pass)."""
    with service(settings, clock=clock) as client:
        key = new_app(client)
        register(client, key, f"http://127.0.0.1:{_free_port()}/hook")
        user = as_user(key, "u")
        game = client.post("/v1/games", json={"code": EASY_CODE}, headers=user).json()["id"]
        for move in WINNING:
            assert client.post(f"/v1/games/{game}/moves", json=move, headers=user).status_code == 200
        run_due(client)  # its first attempt, refused: the event waits in its outbox
        caplog.set_level(logging.INFO, logger="pyramide")
        redis_server.stop()
        try:
            for _ in range(ATTEMPTS):
                run_job(client, "webhook delivery")
        finally:
            redis_server.start()
        run_job(client, "webhook delivery")
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    about = [line for line in lines if "webhook delivery" in line]
    assert len(about) == 2, about
    assert about[0].startswith("background job webhook delivery unreachable: ConnectionError"), about
    assert about[1].startswith("background job webhook delivery back after "), about
    assert about[1].endswith(f", {ATTEMPTS} attempts failed"), about


def test_requests_refused_while_redis_is_down_write_one_warning_not_one_each(
    settings: Settings, clock: FakeClock, redis_server: EmbeddedRedis, caplog: pytest.LogCaptureFixture
) -> None:
    """Clients keep asking while Redis is down: each is answered 503 with its own request line, but the cause is one
    warning for the run of refusals (on main: one `redis unavailable` warning per request, 20 here)."""
    with service(settings, clock=clock) as client:
        token = client.post("/v1/players", json={}).json()["token"]
        caplog.set_level(logging.INFO, logger="pyramide")
        redis_server.stop()
        try:
            answers = [
                client.get("/v1/players/me", headers={"Authorization": f"Bearer {token}"}) for _ in range(ATTEMPTS)
            ]
        finally:
            redis_server.start()
    assert [a.status_code for a in answers] == [503] * ATTEMPTS
    assert {a.json()["code"] for a in answers} == {"service_unavailable"}
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and "redis" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("redis unreachable: ConnectionError"), warnings
