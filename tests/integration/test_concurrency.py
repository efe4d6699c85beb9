"""Simultaneous requests on one game, retries with an Idempotency-Key, and Redis going away and coming back."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
import redis
from litestar.testing import TestClient

from pyramide.engine import UNDO, DealCode, Game, card_code, dump_game
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra import keyspace
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.settings import Settings
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.metrics import metric_values
from tests.support.par_results import _until_kept
from tests.support.players import new_player
from tests.support.redis_commands import client_commands, without_address_flushes
from tests.support.serving import serve_in_thread as _serve

Client = TestClient[Any]
DRAW = {"type": "draw"}


async def _fifty_draws(
    base_url: str, hold_writes: redis.Redis | None = None, creator: str | None = None
) -> tuple[list[httpx.Response], dict[str, Any], dict[str, Any]]:
    """50 draws sent at once over real HTTP, each on its own connection. With ``hold_writes``, Redis holds every
    write back (reads go on) until every draw has read the game, so that none is saved before all have read: races
    for sure, however slowly the server takes the draws in. With ``creator``, the game is created through that
    server, so the one drawing keeps no copy of it (each draw reads the game: one MGET)."""
    async with httpx.AsyncClient(base_url=base_url, limits=httpx.Limits(max_connections=60), timeout=30) as client:
        token = (await client.post(f"{creator or base_url}/v1/players", json={})).json()["token"]
        player = {"Authorization": f"Bearer {token}"}
        body = {"code": "PY1-N-CONCURR"}
        game = (await client.post(f"{creator or base_url}/v1/games", json=body, headers=player)).json()
        url = f"/v1/games/{game['id']}/moves"
        # 50 connections opened first, so that the draws leave together rather than one per connection set up
        await asyncio.gather(*(client.get(f"/v1/games/{game['id']}", headers=player) for _ in range(50)))
        if hold_writes is None:
            responses = await asyncio.gather(*(client.post(url, json=DRAW, headers=player) for _ in range(50)))
        else:
            reads = _mget_calls(hold_writes)
            hold_writes.client_pause(20_000, all=False)  # WRITE mode: scripts wait, reads do not
            try:
                draws = asyncio.gather(*(client.post(url, json=DRAW, headers=player) for _ in range(50)))
                deadline = time.monotonic() + 15
                while _mget_calls(hold_writes) < reads + 50 and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                read = _mget_calls(hold_writes) - reads
            finally:
                hold_writes.client_unpause()  # the tests after this one write at once
            responses = await draws
            assert read >= 50, f"{read} of 50 draws read the game within 15 s"
        final = (await client.get(f"/v1/games/{game['id']}", headers=player)).json()
        record = (await client.get(f"/v1/games/{game['id']}/record", headers=player)).json()
    return list(responses), final, record


def _mget_calls(client: redis.Redis) -> int:
    return int(client.info("commandstats").get("cmdstat_mget", {}).get("calls", 0))


def test_fifty_simultaneous_moves_equal_a_serial_replay(live_url: str) -> None:
    responses, final, record = asyncio.run(_fifty_draws(live_url))
    statuses = [r.status_code for r in responses]
    applied = statuses.count(200)
    assert set(statuses) <= {200, 409}
    assert applied >= 10, "lost races are retried on the fresh state"
    versions = sorted(r.json()["version"] for r in responses if r.status_code == 200)
    assert versions == list(range(1, applied + 1)), "exactly one write per version"
    assert final["version"] == applied and final["moves"] == applied
    replay = Game(DealCode.parse(record["code"]))
    for move in parse_record(record["record"]):
        replay.play(move)
    assert len(record["moves"]) == applied
    assert final["waste"]["count"] == len(replay.waste) and final["stock"]["count"] == len(replay.stock)
    assert final["recycles"]["used"] == replay.recycles_used
    refused = [r.json()["code"] for r in responses if r.status_code == 409]
    assert set(refused) <= {"version_conflict", "stock_empty"}


def test_without_retries_a_lost_race_is_version_conflict(settings: Settings, redis_client: redis.Redis) -> None:
    """Writes are held back until every draw has read the game, so all but the first to be saved lose their race: a
    lost race is a 409 ``version_conflict`` (never retried, never a second write on one version)."""
    # its Redis calls wait out the held writes (its own 2 s timeout would make the first save a 503 on a slow run)
    app = create_app(settings.but(play={"conflict_retries": 0}, redis={"timeout_s": 30}))
    with _serve(app) as url, _serve(create_app(settings)) as creator:
        responses, final, _ = asyncio.run(_fifty_draws(url, hold_writes=redis_client, creator=creator))
    codes = [r.json()["code"] for r in responses if r.status_code == 409]
    applied = sorted(r.json()["version"] for r in responses if r.status_code == 200)
    assert codes and set(codes) == {"version_conflict"}, "lost races are refused, not retried"
    assert len(codes) + len(applied) == 50
    assert applied == [1] and final["version"] == final["moves"] == 1, "a lost race was retried"


def test_a_retried_move_is_applied_once_and_answered_identically(client: Client, player: dict[str, str]) -> None:
    game = client.post("/v1/games", json={"code": "PY1-N-RETRYME"}, headers=player).json()
    url = f"/v1/games/{game['id']}/moves"
    headers = {**player, "Idempotency-Key": "draw-1"}
    first = client.post(url, json=DRAW, headers=headers)
    client.post(url, json=DRAW, headers=player)  # the game moves on meanwhile
    again = client.post(url, json=DRAW, headers=headers)
    assert again.status_code == first.status_code == 200
    assert again.content == first.content and again.headers["etag"] == first.headers["etag"]
    assert client.get(f"/v1/games/{game['id']}", headers=player).json()["moves"] == 2


def test_a_retry_older_than_the_kept_answers_is_refused_not_applied_again(
    client: Client, player: dict[str, str]
) -> None:
    """Issue 59, D2: a game keeps the answers of its latest 4 keyed requests; after six keyed draws a retry of the
    first was applied again (a second draw, no Idempotent-Replayed). It is refused, and the game is as it was."""
    game = client.post("/v1/games", json={"code": "PY1-N-RETRYME"}, headers=player).json()
    url = f"/v1/games/{game['id']}/moves"
    for n in range(6):
        played = client.post(url, json=DRAW, headers={**player, "Idempotency-Key": f"draw-{n}"})
        assert played.status_code == 200, played.text
    late = client.post(url, json=DRAW, headers={**player, "Idempotency-Key": "draw-0"})
    assert late.status_code == 409, late.text
    assert late.json()["code"] == "idempotency_key_expired"
    recent = client.post(url, json=DRAW, headers={**player, "Idempotency-Key": "draw-5"})
    assert recent.status_code == 200 and recent.headers["Idempotent-Replayed"] == "true"
    assert client.get(f"/v1/games/{game['id']}", headers=player).json()["moves"] == 6
    fresh = client.post(url, json=DRAW, headers={**player, "Idempotency-Key": "draw-6"})
    assert fresh.status_code == 200, fresh.text  # a new key still plays


def test_a_retried_create_makes_one_game(client: Client, player: dict[str, str]) -> None:
    headers = {**player, "Idempotency-Key": "new-game-1"}
    first = client.post("/v1/games", json={"code": "PY1-N-ONCEONE"}, headers=headers)
    again = client.post("/v1/games", json={"code": "PY1-N-ONCEONE"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.content == again.content and first.headers["location"] == again.headers["location"]
    other = new_player(client)
    theirs = client.post(
        "/v1/games", json={"code": "PY1-N-ONCEONE"}, headers={**other, "Idempotency-Key": "new-game-1"}
    )
    assert theirs.json()["id"] != first.json()["id"], "keys are per player"


def test_a_retried_player_creation_returns_the_same_token(client: Client) -> None:
    headers = {"Idempotency-Key": "a-long-enough-client-key-0001-of-32+"}
    first = client.post("/v1/players", json={"locale": "en"}, headers=headers)
    again = client.post("/v1/players", json={"locale": "en"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    token = first.json()["token"]
    assert client.get("/v1/players/me", headers={"Authorization": f"Bearer {token}"}).json()["locale"] == "en"
    changed = client.post("/v1/players", json={"locale": "hu"}, headers=headers)
    assert changed.status_code == 409 and changed.json()["code"] == "idempotency_key_reused"


def test_redis_down_is_503_and_the_service_recovers(
    client: Client, player: dict[str, str], redis_server: EmbeddedRedis
) -> None:
    game = client.post("/v1/games", json={"code": "PY1-N-OUTAGES"}, headers=player).json()
    client.post(f"/v1/games/{game['id']}/moves", json=DRAW, headers=player)
    errors = 'litestar_requests_error_total{app_name="pyramide",method="POST",path="/v1/games/{game_id}/moves",'
    errors += 'status_code="503"}'
    redis_server.stop()
    try:
        before = metric_values().get(errors, 0)
        down = client.post(f"/v1/games/{game['id']}/moves", json=DRAW, headers=player)
        assert down.status_code == 503 and down.json()["code"] == "service_unavailable"
        assert metric_values()[errors] == before + 1, "the outage shows in the metrics as errors"
        assert down.headers["retry-after"] == "1"
        assert client.get("/health/ready").status_code == 503
        assert client.get("/health/live").status_code == 200
    finally:
        redis_server.start()
    assert client.get("/health/ready").status_code == 200
    after = client.get(f"/v1/games/{game['id']}", headers=player).json()
    assert after["moves"] == 1 and after["version"] == 1, "nothing lost, nothing applied twice"
    assert client.post(f"/v1/games/{game['id']}/moves", json=DRAW, headers=player).json()["moves"] == 2


def test_a_redis_that_stops_answering_is_503_within_the_time_limit(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """A Redis that hangs (here: paused) is answered like one that is down, once the time limit is up, on a new
    connection (its handshake) as on one in use, and the service carries on when it answers again."""
    # Database 1: a new connection's handshake then selects it, which a paused Redis holds up like any command.
    limited = settings.but(redis={"url": f"{settings.redis.url}?db=1", "timeout_s": 0.2})
    with TestClient(create_app(limited), raise_server_exceptions=False) as setup:
        player = new_player(setup)
        game = setup.post("/v1/games", json={"code": "PY1-N-HANGING"}, headers=player).json()
    url = f"/v1/games/{game['id']}/moves"
    with TestClient(create_app(limited), raise_server_exceptions=False) as fresh:  # no connection made yet
        for connections in ("new", "in use"):
            redis_client.client_pause(2000, all=True)
            paused = time.monotonic()
            hung = fresh.post(url, json=DRAW, headers=player)
            waited = time.monotonic() - paused
            assert hung.status_code == 503 and hung.json()["code"] == "service_unavailable", connections
            assert hung.headers["retry-after"] == "1"
            assert waited < 1.0, f"{connections}: answered after {waited:.1f} s, not when the 0.2 s limit ran out"
            redis_client.ping()  # returns when the pause is over
            after = fresh.get(f"/v1/games/{game['id']}", headers=player)
            assert after.status_code == 200 and after.json()["moves"] == 0, "the refused move was not applied"
        assert fresh.post(url, json=DRAW, headers=player).json()["moves"] == 1


def test_a_server_that_lost_its_scripts_still_saves_moves(
    client: Client, player: dict[str, str], redis_client: redis.Redis
) -> None:
    """A failover or a restart without persistence forgets the loaded Lua scripts; the store loads them again."""
    game = client.post("/v1/games", json={"code": "PY1-N-SCRIPTS"}, headers=player).json()
    redis_client.script_flush()
    moved = client.post(f"/v1/games/{game['id']}/moves", json=DRAW, headers=player)
    assert moved.status_code == 200 and moved.json()["moves"] == 1
    redis_client.script_flush()
    assert client.post("/v1/games", json={"code": "PY1-N-SCRIPTS"}, headers=player).status_code == 201


def test_stored_games_are_small_and_expire_only_while_unfinished(
    client: Client, player: dict[str, str], redis_client: redis.Redis
) -> None:
    game = client.post("/v1/games", json={"code": "PY1-N-MEMORYS"}, headers=player).json()
    url = f"/v1/games/{game['id']}/moves"
    snapshot = game
    for _ in range(110):
        body = DRAW if "D" in snapshot["legal_moves"] else {"type": "recycle"}
        snapshot = client.post(url, json=body, headers=player).json()
    assert snapshot["undo_available"] == 100
    owner = client.get("/v1/players/me", headers=player).json()["id"]
    key = keyspace.game_state(owner, game["id"])
    usage = redis_client.memory_usage(key)
    assert usage is not None and usage <= 1024
    assert 0 < redis_client.ttl(key) <= 30 * 24 * 3600
    won = client.post("/v1/games", json={"layout": easy_game().code.to_json()}, headers=player).json()
    for move in parse_record(EASY_CLEARING):
        client.post(f"/v1/games/{won['id']}/moves", json=move_body(move), headers=player)
    assert redis_client.ttl(keyspace.game_state(owner, won["id"])) == -1, "a won game is kept"
    assert len(dump_game(easy_game())) < 1024


def test_two_processes_taking_turns_on_one_game_each_see_the_other_s_moves(settings: Settings) -> None:
    """Each process keeps the games it saved last decoded; a move saved meanwhile by another process must be
    read from Redis, never replaced by that kept copy."""
    with TestClient(create_app(settings)) as first, TestClient(create_app(settings)) as second:
        player = new_player(first)
        game = first.post("/v1/games", json={"code": "PY1-N-TURNSAB"}, headers=player).json()
        replay = Game(DealCode.parse(game["code"]))
        url = f"/v1/games/{game['id']}/moves"
        for turn, client in enumerate((first, first, second, first, second, second, first, first, second, first)):
            legal = replay.legal_moves()
            move = legal[turn % len(legal)] if turn % 3 else UNDO if replay.undo_available else legal[0]
            replay.play(move)
            snapshot = client.post(url, json=move_body(move), headers=player).json()
            assert snapshot["version"] == turn + 1
            assert snapshot["legal_moves"] == [m.notation() for m in replay.legal_moves()]
            assert [s["card"] for s in snapshot["pyramid"]] == [
                s["card"] for s in second.get(f"/v1/games/{game['id']}", headers=player).json()["pyramid"]
            ]
            assert snapshot["waste"]["cards"] == [card_code(c) for c in replay.waste]
            other = second if client is first else first
            covered = other.post(f"/v1/games/{game['id']}/taps", json={"card": "7S"}, headers=player).json()
            assert covered["feedback"]["code"] == "card_covered"  # answered without a save: from the state read
            assert covered["version"] == turn + 1


def test_a_process_acting_on_its_older_copy_plays_on_the_game_as_redis_holds_it(settings: Settings) -> None:
    """A process acts first on the copy of a game it saved last; when another process has moved since, the save
    finds another state in Redis and nothing is written from the old copy: the move is played on the state in
    Redis (a move legal only there is applied, not refused), a retry the other process applied is answered with
    its kept response, and If-Match is held to the version in Redis, not to the copy's. An old copy is no lost
    race: no retries for those are allowed here."""
    no_retries = settings.but(play={"conflict_retries": 0})
    with TestClient(create_app(no_retries)) as first, TestClient(create_app(no_retries)) as second:
        player = new_player(first)
        game = first.post("/v1/games", json={"layout": easy_game().code.to_json()}, headers=player).json()
        url = f"/v1/games/{game['id']}/moves"

        def move(client: Client, body: dict[str, Any], headers: dict[str, str] | None = None) -> httpx.Response:
            return client.post(url, json=body, headers={**player, **(headers or {})})

        assert move(first, {"type": "king", "card": "KS"}).json()["version"] == 1
        assert move(second, {"type": "pair", "cards": ["AD", "QD"]}).json()["version"] == 2
        only_now = move(first, {"type": "pair", "cards": ["4D", "9D"]})  # freed by the pair first has not seen
        assert only_now.status_code == 200 and only_now.json()["version"] == 3
        assert not {"KS", "AD", "QD", "4D", "9D"} & {slot["card"] for slot in only_now.json()["pyramid"]}
        retry = {"Idempotency-Key": "across-processes"}
        applied = move(second, {"type": "pair", "cards": ["2D", "JD"]}, retry)
        again = move(first, {"type": "pair", "cards": ["2D", "JD"]}, retry)
        assert again.status_code == applied.status_code == 200 and again.content == applied.content
        assert applied.json()["version"] == 4
        assert move(first, DRAW, {"If-Match": '"4"'}).json()["version"] == 5
        stale = move(second, DRAW, {"If-Match": '"4"'})  # the version of second's copy, not of the game any more
        assert stale.status_code == 412 and "5" in stale.json()["detail"]
        assert move(second, DRAW).json()["version"] == 6
        assert move(first, DRAW, {"If-Match": '"6"'}).json()["version"] == 7  # first's copy is still at version 5
        record = first.get(f"/v1/games/{game['id']}/record", headers=player).json()
        assert record["moves"] == ["KS", "AD+QD", "4D+9D", "2D+JD", "D", "D", "D"]


def test_the_next_move_on_a_game_this_process_saved_reads_nothing_before_its_save(
    settings: Settings, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy a process keeps of the games it saved is confirmed by the save itself: its next move is one Redis
    command, the save, where a process without the copy reads the game first."""
    without_address_flushes(monkeypatch)

    def commands_of_one_draw(client: Client, url: str, player: dict[str, str]) -> list[str]:
        with client_commands(str(settings.redis.url)) as commands:
            assert client.post(url, json=DRAW, headers=player).status_code == 200
        return commands

    with TestClient(create_app(settings)) as first, TestClient(create_app(settings)) as second:
        player = new_player(first)
        second.get("/v1/players/me", headers=player)  # both know the player's token by now
        game = first.post("/v1/games", json={"code": "PY1-N-ONETRIP"}, headers=player).json()
        url = f"/v1/games/{game['id']}/moves"
        first.post(url, json=DRAW, headers=player)
        _until_kept(redis_client, "PY1-N-ONETRIP")  # the deal's par, worked out in the background: not the move's
        with_copy = commands_of_one_draw(first, url, player)
        without_copy = commands_of_one_draw(second, url, player)
    assert with_copy == ["EVALSHA"], "the save alone, which checks the rate limit too"
    assert without_copy == ["MGET", "EVALSHA"], "a read (with the rate limit's cell), then the save"
