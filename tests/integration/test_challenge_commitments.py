"""Issue 46, item 4: each daily challenge is chosen at least 7 days ahead and its commitment (SHA-256 over
``<code>:<nonce>``) is published from then on, never changed; after the close its code and nonce open it."""

from __future__ import annotations

import hashlib
import signal
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from litestar.testing import TestClient

from pyramide.cli import main as pyramide
from pyramide.service.app import create_app
from pyramide.service.challenges.calendar import ChallengeId
from pyramide.service.challenges.deals import Chosen
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import FakeClock, utc_now
from pyramide.service.infra.settings import Settings
from tests.support.clock import clock_env, past_the_close
from tests.support.serving import serve_in_thread, serving
from tests.support.waiting import eventually, run_job

HEX64 = 64
DAYS = 9
"""Today and the 8 days after it: the last is chosen at least 7 full days before it opens."""


def _today() -> date:
    return datetime.now(UTC).date()


def _filled(http: httpx.Client, seconds: float = 120) -> list[dict[str, Any]]:
    """The calendar once the background task has chosen every preset's challenge of the next days (bounded wait)."""

    def filled() -> list[dict[str, Any]]:
        entries: list[dict[str, Any]] = http.get("/v1/challenges").json()["challenges"]
        assert len(entries) == DAYS * 2, f"only {len(entries)} challenges chosen ahead"
        return entries

    return eventually(filled, seconds)


def _kept(redis_client: redis.Redis, challenge: str) -> Chosen:
    named = ChallengeId.parse(challenge)
    assert named is not None
    data = redis_client.get(keyspace.challenge_deal(challenge))
    assert isinstance(data, bytes)
    return Chosen.from_json(named, data)


def test_a_commitment_is_published_a_week_ahead_sealed_while_open_and_verifies_after_the_close(
    settings: Settings, redis_client: redis.Redis, clock: FakeClock, capsys: pytest.CaptureFixture[str]
) -> None:
    app = create_app(settings.but(challenges={"days_ahead": 7}), clock=clock)
    with serve_in_thread(app) as url, httpx.Client(base_url=url, timeout=30) as http:
        started = time.monotonic()
        run_job(app, "challenge choice ahead", timeout_s=120)  # on the test's clock: the job runs when it is run
        calendar = _filled(http)
        print(f"chose {len(calendar)} challenges ahead in {time.monotonic() - started:.1f} s")
        today = utc_now(clock).date()
        expected = {f"{today + timedelta(days=d)}-{p}" for d in range(DAYS) for p in ("N", "2S")}
        assert {e["id"] for e in calendar} == expected
        for entry in calendar:
            assert len(entry["commitment"]) == HEX64 and entry["code"] is None and entry["nonce"] is None, entry
        last = next(e for e in calendar if e["id"] == f"{today + timedelta(days=8)}-N")
        ahead = datetime.fromisoformat(last["opens_at"]) - datetime.fromisoformat(last["committed_at"])
        assert ahead >= timedelta(days=7), ahead
        coming = http.get(f"/v1/challenges/{last['id']}").json()
        assert coming["commitment"] == last["commitment"] and coming["code"] is None and coming["nonce"] is None
        player = {"Authorization": f"Bearer {http.post('/v1/players', json={}).json()['token']}"}
        early = http.post("/v1/games", json={"challenge": last["id"]}, headers=player)
        assert early.status_code == 404 and early.json()["code"] == "challenge_not_found", "not playable before its day"

        tomorrow = f"{today + timedelta(days=1)}-N"
        committed = next(e["commitment"] for e in calendar if e["id"] == tomorrow)
        secret = _kept(redis_client, tomorrow)
        assert secret.nonce is not None
        past_the_close(clock)  # tomorrow, 00:01: its challenge is open
        game = http.post("/v1/games", json={"challenge": tomorrow}, headers=player)
        assert game.status_code == 201, game.text
        seen = [game.text]
        path = f"/v1/games/{game.json()['id']}"
        for _ in range(3):
            seen.append(http.post(path + "/moves", json={"type": "draw"}, headers=player).text)
        seen.append(http.post(path + "/moves", json={"type": "undo"}, headers=player).text)
        for route in (
            path,
            path + "/record",
            "/v1/players/me/games",
            "/v1/challenges/current",
            f"/v1/challenges/{tomorrow}",
            f"/v1/challenges/{tomorrow}/leaderboard",
            "/v1/challenges",
            f"/v1/challenges?from={today}&to={today + timedelta(days=30)}",
        ):
            response = http.get(route, headers=player)
            assert response.status_code == 200, (route, response.text)
            seen.append(response.text)
        everything = "\n".join(seen)
        assert secret.nonce not in everything and str(secret.code) not in everything
        assert committed in everything, "the commitment is public all along"

        clock.advance(24 * 3600)  # past tomorrow's close
        closed = http.get(f"/v1/challenges/{tomorrow}").json()
        assert closed["open"] is False and closed["commitment"] == committed
        assert hashlib.sha256(f"{closed['code']}:{closed['nonce']}".encode("ascii")).hexdigest() == committed
        assert http.get(path, headers=player).json()["code"] == closed["code"], "the deal played is the one committed"
        shown = next(
            e
            for e in http.get(f"/v1/challenges?from={today}&to={today + timedelta(days=2)}").json()["challenges"]
            if e["id"] == tomorrow
        )
        assert (shown["code"], shown["nonce"]) == (closed["code"], closed["nonce"])
        capsys.readouterr()
        assert pyramide(["verify-challenge", tomorrow, "--url", url]) == 0
        assert "verified" in capsys.readouterr().out
        # today's challenge was chosen after its day began (the service started today): it does not verify
        assert pyramide(["verify-challenge", f"{today}-N", "--url", url]) == 1
        assert "not before the day began" in capsys.readouterr().err
        # a coming challenge is not open to verification either
        assert pyramide(["verify-challenge", last["id"], "--url", url]) == 1
        assert "has not closed yet" in capsys.readouterr().err


def test_the_calendar_pages_a_long_range_and_answers_every_range(client: TestClient[Any]) -> None:
    """Any range a client can write is an answer (schemathesis sends them all): 31 days a page with ``next_from``
    where the rest starts, a backwards range empty, a range at the end of the calendar (year 9999) no error."""
    today = _today()
    month = client.get(f"/v1/challenges?from={today}&to={today + timedelta(days=30)}")
    assert month.status_code == 200, month.text
    assert month.json()["last_day"] == str(today + timedelta(days=30)) and month.json()["next_from"] is None
    longer = client.get(f"/v1/challenges?from={today}&to={today + timedelta(days=40)}").json()
    assert (longer["last_day"], longer["next_from"]) == (str(today + timedelta(days=30)), str(today + timedelta(31)))
    rest = client.get(f"/v1/challenges?from={longer['next_from']}&to={today + timedelta(days=40)}").json()
    assert (rest["last_day"], rest["next_from"]) == (str(today + timedelta(days=40)), None)
    backwards = client.get(f"/v1/challenges?from={today}&to={today - timedelta(days=1)}")
    assert backwards.status_code == 200 and backwards.json()["challenges"] == [], backwards.text
    assert backwards.json()["next_from"] is None
    end = client.get("/v1/challenges?from=9999-12-20&to=9999-12-31")
    assert end.status_code == 200 and end.json()["last_day"] == "9999-12-31", end.text
    assert client.get("/v1/challenges?from=9999-12-31").status_code == 200
    for bad in ("from=2026-13-01", "to=yesterday", "since=2026-12-01"):
        refused = client.get(f"/v1/challenges?{bad}")
        assert refused.status_code == 400 and refused.json()["code"], (bad, refused.text)


def _persisted(socket: Path) -> None:
    """Everything the served Redis holds now is on disk: its append-only file rewritten (and synced) from it, so a
    kill does not depend on ``appendfsync everysec`` having come round."""
    with redis.Redis(unix_socket_path=str(socket)) as server:

        def started() -> bool:  # or scheduled; one already running began before now: asked again once it is done
            try:
                server.bgrewriteaof()
            except redis.ResponseError as error:
                if "already in progress" not in str(error):
                    raise
                return False
            return True

        eventually(started, 30, "a rewrite of the append-only file begun")

        def rewritten() -> bool:
            persistence = server.info("persistence")
            if persistence["aof_rewrite_in_progress"] or persistence["aof_rewrite_scheduled"]:
                return False
            assert persistence["aof_last_bgrewrite_status"] == "ok", persistence
            return True

        eventually(rewritten, 30, "the append-only file rewritten")


@pytest.mark.slow
def test_commitments_hold_across_a_killed_service_and_a_changed_secret(tmp_path: Path, clock: FakeClock) -> None:
    """A real ``pyramide serve`` (on the test's clock) chooses the coming week; it is killed with SIGKILL and started
    again on the same data with another deal secret (nothing cached in any process): every commitment published
    stays as it was."""
    env = {"PYRAMIDE_CHALLENGE_DAYS_AHEAD": "7", "PYRAMIDE_DEAL_SECRET": "the first secret", **clock_env(clock)}
    data = tmp_path / "data"
    with serving(data, tmp_path, env=env) as served, httpx.Client(base_url=served.url, timeout=30) as http:
        started = time.monotonic()
        before = {e["id"]: (e["commitment"], e["committed_at"]) for e in _filled(http)}
        took = time.monotonic() - started
        _persisted(served.data_dir / "redis.sock")
        served.process.send_signal(signal.SIGKILL)
        served.process.wait(timeout=10)
    changed = {**env, "PYRAMIDE_DEAL_SECRET": "another deal secret, not the first"}
    # the same days read again, named (the calendar's own range would move on with the clock's day)
    days = {"from": min(before)[:10], "to": max(before)[:10]}
    with serving(data, tmp_path, env=changed) as served, httpx.Client(base_url=served.url, timeout=30) as http:
        # as long as choosing them all took the first time, and more: a service that chose again would show it
        watch_until = time.monotonic() + took + 3
        while time.monotonic() < watch_until:
            listed = http.get("/v1/challenges", params=days).json()["challenges"]
            after = {e["id"]: (e["commitment"], e["committed_at"]) for e in listed}
            assert after == before
            time.sleep(0.2)
        for challenge, (commitment, _) in before.items():
            assert http.get(f"/v1/challenges/{challenge}").json()["commitment"] == commitment
