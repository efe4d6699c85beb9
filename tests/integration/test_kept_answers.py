"""Idempotency-Key on every POST (issue 59, D1): the routes whose domain kept no answer of its own made a second app,
a second webhook with another secret and a second session token for a retry with the same key. Real Redis, the app in
process, every request through HTTP."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from prometheus_client import REGISTRY

from pyramide.service.accounts import Principal
from pyramide.service.http import durability
from pyramide.service.http.kept_answers import AnswerSeal, caller_of
from pyramide.service.infra.settings import Settings
from tests.support.operators import OPERATOR
from tests.support.webhooks import as_user, bearer, new_app, service

KEY = "d2c1b0a9-8f7e-4d6c-9b5a-0123456789ab"
APP = {"name": "Kártya Klub", "scopes": ["players"]}


def _keyed(headers: dict[str, str], key: str = KEY) -> dict[str, str]:
    return {**headers, "Idempotency-Key": key}


def test_a_retried_create_app_makes_one_app_and_replays_its_key(settings: Settings) -> None:
    with service(settings) as client:
        first = client.post("/v1/admin/apps", json=APP, headers=_keyed(OPERATOR))
        again = client.post("/v1/admin/apps", json=APP, headers=_keyed(OPERATOR))
        assert first.status_code == again.status_code == 201, again.text
        assert again.json() == first.json()
        assert again.headers["Idempotent-Replayed"] == "true"
        assert "Idempotent-Replayed" not in first.headers
        assert again.headers["X-Request-ID"] != first.headers["X-Request-ID"]
        listed = client.get("/v1/admin/apps", headers=OPERATOR).json()["entries"]
        assert [entry["id"] for entry in listed] == [first.json()["id"]]


def test_a_key_used_again_for_another_request_is_refused(settings: Settings) -> None:
    with service(settings) as client:
        assert client.post("/v1/admin/apps", json=APP, headers=_keyed(OPERATOR)).status_code == 201
        other = client.post("/v1/admin/apps", json={**APP, "name": "Más"}, headers=_keyed(OPERATOR))
        assert other.status_code == 409, other.text
        assert other.json()["code"] == "idempotency_key_reused"
        assert len(client.get("/v1/admin/apps", headers=OPERATOR).json()["entries"]) == 1


def test_a_retried_create_webhook_makes_one_endpoint_with_one_secret(settings: Settings) -> None:
    with service(settings) as client:
        key = new_app(client)
        body = {"url": "http://127.0.0.1:9/hook", "events": ["game.won"]}
        first = client.post("/v1/apps/me/webhooks", json=body, headers=_keyed(bearer(key)))
        again = client.post("/v1/apps/me/webhooks", json=body, headers=_keyed(bearer(key)))
        assert first.status_code == again.status_code == 201, again.text
        assert again.json()["secret"] == first.json()["secret"]
        assert again.headers["Idempotent-Replayed"] == "true"
        assert len(client.get("/v1/apps/me/webhooks", headers=bearer(key)).json()["entries"]) == 1


def test_a_retried_create_session_gives_the_same_token(settings: Settings) -> None:
    with service(settings) as client:
        key = new_app(client)
        assert client.get("/v1/players/me", headers=as_user(key, "anna")).status_code == 200
        path = "/v1/apps/me/players/anna/sessions"
        first = client.post(path, json={}, headers=_keyed(bearer(key)))
        again = client.post(path, json={}, headers=_keyed(bearer(key)))
        assert first.status_code == again.status_code == 201, again.text
        assert again.json()["token"] == first.json()["token"]
        assert again.headers["Idempotent-Replayed"] == "true"
        assert "RateLimit" in first.headers and "RateLimit" not in again.headers, "a replay spends nothing"


def test_one_key_syntax_everywhere(settings: Settings) -> None:
    """A key with a space was 201 on createApp (the header ignored) and 400 on createPlayer; a secret's answer needs
    a key of at least 32 characters, as createPlayer's does."""
    with service(settings) as client:
        for path, body, headers in (("/v1/admin/apps", APP, OPERATOR), ("/v1/players", {}, {})):
            spaced = client.post(path, json=body, headers=_keyed(headers, "two words"))
            assert spaced.status_code == 400, (path, spaced.text)
            assert spaced.json()["code"] == "invalid_idempotency_key"
            short = client.post(path, json=body, headers=_keyed(headers, "short-key"))
            assert short.status_code == 400, (path, short.text)
            assert short.json()["code"] == "weak_idempotency_key"
        assert client.get("/v1/admin/apps", headers=OPERATOR).json()["entries"] == []


def test_a_refused_request_keeps_nothing_and_its_retry_runs(settings: Settings) -> None:
    with service(settings) as client:
        bad = client.post("/v1/admin/apps", json={"name": ""}, headers=_keyed(OPERATOR))
        assert bad.status_code == 422, bad.text
        fixed = client.post("/v1/admin/apps", json={"name": ""}, headers=_keyed(OPERATOR))
        assert fixed.status_code == 422 and "Idempotent-Replayed" not in fixed.headers
        good = client.post("/v1/admin/apps", json=APP, headers=_keyed(OPERATOR, KEY + "-2"))
        assert good.status_code == 201, good.text


def test_a_retry_while_the_first_request_runs_is_told_to_wait(settings: Settings, redis_client: redis.Redis) -> None:
    """The first request holds the key while it runs: a retry that arrives meanwhile gets 409 with Retry-After, not a
    second app."""
    with service(settings) as client:
        first = AnswerSeal(caller_of({"user": Principal.operator()}), KEY)  # type: ignore[arg-type]
        redis_client.set(first.slot, b"pending", px=60_000)  # what the running first request holds
        retry = client.post("/v1/admin/apps", json=APP, headers=_keyed(OPERATOR))
        assert retry.status_code == 409, retry.text
        assert retry.json()["code"] == "idempotency_key_in_use"
        assert retry.headers["Retry-After"] == "1"
        assert client.get("/v1/admin/apps", headers=OPERATOR).json()["entries"] == []


def test_a_refusal_in_a_middleware_is_counted_under_its_own_status(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """The metrics counted a refusal raised in a middleware (a 401 of authentication, a 409 of a key in use) as a
    500, since Litestar's exception handler answers only after the layers inside it have returned; they now count
    the status the client got."""
    with service(settings) as client:
        app_name = {"app_name": "pyramide"}
        unauthorized = _count("GET", "/v1/players/me", 401, app_name)
        assert client.get("/v1/players/me").status_code == 401
        assert _count("GET", "/v1/players/me", 401, app_name) == unauthorized + 1
        first = AnswerSeal(caller_of({"user": Principal.operator()}), KEY)  # type: ignore[arg-type]
        redis_client.set(first.slot, b"pending", px=60_000)
        in_use = _count("POST", "/v1/admin/apps", 409, app_name)
        assert client.post("/v1/admin/apps", json=APP, headers=_keyed(OPERATOR)).status_code == 409
        assert _count("POST", "/v1/admin/apps", 409, app_name) == in_use + 1
        assert _count("POST", "/v1/admin/apps", 500, app_name) == 0


def _count(method: str, path: str, status: int, labels: dict[str, str]) -> float:
    sample = REGISTRY.get_sample_value(
        "litestar_requests_total", {"method": method, "path": path, "status_code": str(status), **labels}
    )
    return sample or 0.0


def test_a_retry_after_an_unconfirmed_write_replays_the_change_made(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The durability check replaces a 2xx with 503 ``storage_unconfirmed`` when Redis cannot say the change reached
    its file, but the change was made: the retry made a second app (the key was freed on the 503). Redis's PING
    answer is the one thing stood in for here (a full disk cannot be made on demand): the first one says MISCONF."""
    answers = iter([False])

    async def persisted(self: Any) -> bool:
        return next(answers, True)

    monkeypatch.setattr(durability.ConfirmWrites, "_persisted", persisted)
    with service(settings, durability={"confirm_writes": "always"}) as client:
        first = client.post("/v1/admin/apps", json=APP, headers=_keyed(OPERATOR))
        assert first.status_code == 503 and first.json()["code"] == "storage_unconfirmed"
        again = client.post("/v1/admin/apps", json=APP, headers=_keyed(OPERATOR))
        assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
        assert len(client.get("/v1/admin/apps", headers=OPERATOR).json()["entries"]) == 1
