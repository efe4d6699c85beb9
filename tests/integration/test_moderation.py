"""Moderation through HTTP (issue 42): a ban takes a player off every board at once and refuses it in every worker
at once, the move route included; lifting it puts back exactly what it took; one entry can be annulled; an app key
moderates only its own players; a player token is no admin key; every action is in the audit log and in the
player's export; a win racing a ban stays off the boards; and an erasure still erases all of a banned player."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
import redis
from litestar.testing import TestClient

from pyramide.engine import DealCode, Game
from pyramide.service.app import create_app
from pyramide.service.games.commands_controller import move_body
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings, as_environment, no_limits
from pyramide.solver import solve
from tests.support.deals import EASY_CODE, WINNING
from tests.support.par import _until_decided
from tests.support.players import new_player
from tests.support.serving import Served, serving
from tests.support.waiting import eventually

OPERATOR_KEY = "moderation-test-operator-key-0123456789abcdef"
OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}
CONNECTIONS = 6
RACES = 8
"""Wins held back at their save while the player is banned (each leaves the entry on the board without the fix)."""
"""Connections held open to a two-worker server: each is served by one worker, and the test checks both have some."""


@pytest.fixture
def admin(settings: Settings) -> Iterator[TestClient[Any]]:
    """The app, with an operator key, on the test's Redis."""
    app = create_app(settings.but(secrets={"operator_key": OPERATOR_KEY}))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _environment() -> dict[str, str]:
    limits = as_environment(no_limits())
    # the bots play at machine speed: their wins rank (no floor, no screening), for the bans
    floor_off = {"PYRAMIDE_MIN_MOVE_MS": "0", "PYRAMIDE_MIN_LINE_MOVE_MS": "0", "PYRAMIDE_SCREEN_WORLDS": "0"}
    return {**limits, **floor_off, "PYRAMIDE_OPERATOR_KEY": OPERATOR_KEY, "PYRAMIDE_SETTLEMENT_GRACE_S": "0"}


def _data_redis(served: Served) -> redis.Redis:
    return redis.Redis(unix_socket_path=str(served.data_dir / "redis.sock"))


def _player(http: httpx.Client, name: str) -> tuple[str, dict[str, str]]:
    created = http.post("/v1/players", json={"name": name})
    assert created.status_code == 201, created.text
    return created.json()["id"], {"Authorization": f"Bearer {created.json()['token']}"}


def _play(http: httpx.Client, auth: dict[str, str], body: dict[str, Any], moves: list[dict[str, Any]]) -> str:
    created = http.post("/v1/games", json=body, headers=auth)
    assert created.status_code == 201, created.text
    game = str(created.json()["id"])
    for move in moves:
        played = http.post(f"/v1/games/{game}/moves", json=move, headers=auth)
        assert played.status_code == 200, played.text
    return game


def _challenge(http: httpx.Client, store: redis.Redis) -> tuple[str, list[dict[str, Any]]]:
    """Today's challenge and its solved line, from the deal the server keeps (what no client may read)."""
    challenge = http.get("/v1/challenges/current").json()["id"]
    # a background choice: slow on a loaded machine
    kept = eventually(lambda: store.get(f"pyr:{{c:{challenge}}}:deal"), 60, what="the challenge's deal chosen")
    assert kept is not None
    analysis = solve(Game(DealCode.parse(json.loads(kept)["code"])))
    assert analysis.winnable is True
    return challenge, [move_body(m) for m in analysis.line]


def _boards(http: httpx.Client, challenge: str) -> dict[str, list[dict[str, Any]]]:
    return {
        EASY_CODE: http.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"],
        challenge: http.get(f"/v1/challenges/{challenge}/leaderboard").json()["entries"],
    }


def _workers(served: Served) -> set[int]:
    """The processes holding the connections the test opened to the server: the workers serving them."""
    port = int(served.url.rpartition(":")[2])
    return {pid for pid, c in _family_connections(served) if c.laddr.port == port and c.raddr}


def _family_connections(served: Served) -> list[tuple[int, Any]]:
    found: list[tuple[int, Any]] = []
    for process in served.family():
        try:
            found += [(process.pid, c) for c in process.net_connections(kind="tcp") if c.status == "ESTABLISHED"]
        except psutil.NoSuchProcess:
            continue
    return found


def clients_on_both_workers(served: Served, each: int) -> dict[int, list[httpx.Client]]:
    """At least ``each`` open connections served by each of the two workers, opened a few at a time and
    concurrently (the kernel may hand a burst of sequential connections to one worker), the others closed."""
    by_worker: dict[int, list[httpx.Client]] = {}
    for _ in range(50):
        batch = [httpx.Client(base_url=served.url, timeout=30) for _ in range(4)]
        with ThreadPoolExecutor(len(batch)) as pool:
            workers = list(pool.map(lambda c: _worker_of(served, c), batch))
        for worker, client in zip(workers, batch, strict=True):
            if len(by_worker.setdefault(worker, [])) < each:
                by_worker[worker].append(client)
            else:
                client.close()
        if len(by_worker) == 2 and all(len(c) == each for c in by_worker.values()):
            return by_worker
    for clients in by_worker.values():
        for client in clients:
            client.close()
    raise AssertionError(f"connections reached {len(by_worker)} worker(s) only")


def _problem(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == code, response.text


@pytest.mark.slow
def test_a_ban_takes_a_player_off_every_board_and_refuses_it_in_every_worker_until_lifted(tmp_path: Path) -> None:
    """Two workers; connections on both have just served the cheat (so each remembers its token). The ban answers,
    and at once every route of the cheat is 403 ``player_banned`` on every connection, the move route and game
    creation included, and its entries are gone from the per-code board and the challenge's board (the honest
    player moves up); its export still answers and shows the ban. Lifting the ban: the same moves answer 200 on
    every connection at once, and both boards show exactly the entries they showed before."""
    with serving(tmp_path / "data", tmp_path, "--workers", "2", env=_environment()) as served:
        clients = [c for pair in clients_on_both_workers(served, CONNECTIONS // 2).values() for c in pair]
        try:
            http = clients[0]
            store = _data_redis(served)
            challenge, line = _challenge(http, store)
            cheat, cheat_auth = _player(http, "Cheat")
            _, honest_auth = _player(http, "Honest")
            _play(http, honest_auth, {"code": EASY_CODE}, [{"type": "draw"}, {"type": "undo"}, *WINNING])
            _play(http, cheat_auth, {"code": EASY_CODE}, WINNING)
            _play(http, cheat_auth, {"challenge": challenge}, line)
            # the deal's par, worked out in the background, shows in every entry of its board: once it is decided
            # it no longer changes what the board says between this read and the one after the ban is lifted
            _until_decided(http, EASY_CODE)
            before = _boards(http, challenge)
            assert [e["name"] for e in before[EASY_CODE]] == ["Cheat", "Honest"]
            assert [e["name"] for e in before[challenge]] == ["Cheat"]
            games = [_play(c, cheat_auth, {"code": EASY_CODE}, WINNING[:1]) for c in clients]
            assert len(_workers(served)) == 2, "the connections are served by both workers"

            banned = http.post(f"/v1/admin/players/{cheat}/ban", json={"reason": "bot"}, headers=OPERATOR)
            assert banned.status_code == 200, banned.text
            assert sorted(banned.json()["boards"]) == sorted([EASY_CODE, f"challenge:{challenge}"])
            for c, game in zip(clients, games, strict=True):
                _problem(c.post(f"/v1/games/{game}/moves", json=WINNING[1], headers=cheat_auth), 403, "player_banned")
                _problem(c.post("/v1/games", json={"code": EASY_CODE}, headers=cheat_auth), 403, "player_banned")
                _problem(c.get(f"/v1/games/{game}", headers=cheat_auth), 403, "player_banned")
                _problem(c.get("/v1/players/me/stats", headers=cheat_auth), 403, "player_banned")
                english = c.get("/v1/players/me", headers={**cheat_auth, "Accept-Language": "en"})
                _problem(english, 403, "player_banned")
                assert "banned" in english.json()["detail"] and english.headers["content-language"] == "en"
            during = _boards(http, challenge)
            assert [e["name"] for e in during[EASY_CODE]] == ["Honest"] and during[EASY_CODE][0]["rank"] == 1
            assert during[challenge] == []
            export = http.get("/v1/players/me/export", headers=cheat_auth)
            assert export.status_code == 200, export.text
            assert [(m["action"], m["reason"]) for m in export.json()["moderation"]] == [("ban", "bot")]
            unranked = {
                board: {k: v for k, v in entries[0].items() if k not in ("rank", "par", "over_par")}
                for board, entries in before.items()
            }
            kept = export.json()["entries_kept_by_ban"]
            assert sorted(kept) == sorted([EASY_CODE, f"challenge:{challenge}"]), "the export shows what the ban keeps"
            for board, shown in unranked.items():
                held = kept[board if board == EASY_CODE else f"challenge:{board}"]
                assert {k: held[k] for k in shown} == shown

            lifted = clients[-1].post(f"/v1/admin/players/{cheat}/unban", json={"reason": "appeal"}, headers=OPERATOR)
            assert lifted.status_code == 200, lifted.text
            assert sorted(lifted.json()["boards"]) == sorted([EASY_CODE, f"challenge:{challenge}"])
            for c, game in zip(clients, games, strict=True):
                assert c.post(f"/v1/games/{game}/moves", json=WINNING[1], headers=cheat_auth).status_code == 200
                assert c.get("/v1/players/me/stats", headers=cheat_auth).status_code == 200
            assert _boards(http, challenge) == before, "exactly the entries the ban took are back"
        finally:
            for c in clients:
                c.close()


def _worker_of(served: Served, http: httpx.Client) -> int:
    """The worker process serving ``http``'s connection."""
    client_port = http.get("/health/live").extensions["network_stream"].get_extra_info("client_addr")[1]
    port = int(served.url.rpartition(":")[2])
    found = [pid for pid, c in _family_connections(served) if c.laddr.port == port and c.raddr.port == client_port]
    return found[0]


def _stop_at(store: redis.Redis, worker: int, mark: str, watching: threading.Event, stopped: threading.Event) -> None:
    """Stop (SIGSTOP) ``worker`` the moment Redis receives a script call naming ``mark``."""
    with store.monitor() as monitor:  # type: ignore[no-untyped-call]
        watching.set()
        for event in monitor.listen():
            command = event["command"]
            if _MONITOR_STOP in command:
                return
            if command.startswith("EVALSHA") and mark in command and not stopped.is_set():
                os.kill(worker, signal.SIGSTOP)
                stopped.set()


@contextmanager
def _stopped_at(
    served: Served,
    store: redis.Redis,
    client: httpx.Client,
    mark: str,
    send: Callable[[], httpx.Response],
    *,
    within_s: float = 10,
) -> Iterator[Future[httpx.Response]]:
    """``send`` a request on ``client``'s connection, whose worker is stopped (SIGSTOP) the moment Redis receives
    its script call naming ``mark``; the block runs while it is stopped, and the worker goes on (SIGCONT) after it.
    Yields the request's answer to come."""
    worker, watching, stopped = _worker_of(served, client), threading.Event(), threading.Event()
    watch = threading.Thread(target=_stop_at, args=(store, worker, mark, watching, stopped), daemon=True)
    watch.start()
    assert watching.wait(5)
    # MONITOR answers OK before it streams: let it begin
    eventually(lambda: any(c.get("cmd") == "monitor" for c in store.client_list()), 5, what="MONITOR begun")
    with ThreadPoolExecutor(1) as pool:
        sent = pool.submit(send)
        try:
            assert stopped.wait(within_s), f"no script naming {mark} reached Redis"
            yield sent
        finally:
            os.kill(worker, signal.SIGCONT)
            store.echo(_MONITOR_STOP)
            watch.join(5)


_MONITOR_STOP = "moderation-test-monitor-stop"


def _win_held_while_banned(served: Served, store: redis.Redis, mover: httpx.Client, banner: httpx.Client) -> str:
    """A player one move from a win; its winning move on ``mover``'s worker, which is stopped right after Redis
    saved the win; the ban answered on ``banner``'s worker meanwhile; then the stopped worker goes on."""
    player, auth = _player(banner, "Racer")
    game = _play(mover, auth, {"code": EASY_CODE}, WINNING[:-1])
    send = partial(mover.post, f"/v1/games/{game}/moves", json=WINNING[-1], headers=auth)
    with _stopped_at(served, store, mover, f"g:{game}:state", send, within_s=5) as won:
        banned = banner.post(f"/v1/admin/players/{player}/ban", json={"reason": "race"}, headers=OPERATOR)
        assert banned.status_code == 200, banned.text
    assert won.result().status_code == 200 and won.result().json()["status"] == "won", "saved before the ban"
    return player


def test_a_win_racing_a_ban_stays_off_the_board_and_comes_back_with_the_unban(tmp_path: Path) -> None:
    """The race played for real on two workers: the winning move's worker is stopped (SIGSTOP) just after Redis
    stored the win and before its entry reached the board, and the ban is answered by the other worker in between.
    Once the stopped worker has gone on and answered the win, the banned player is not on the board (without the
    settlement's look at the ban, nearly every trial leaves it there); lifting the bans puts every one of these
    wins on the board."""
    with serving(tmp_path / "data", tmp_path, "--workers", "2", env=_environment()) as served:
        by_worker = clients_on_both_workers(served, 1)
        clients = [c for pair in by_worker.values() for c in pair]
        try:
            mover, banner = clients
            store = _data_redis(served)
            racers = [_win_held_while_banned(served, store, mover, banner) for _ in range(RACES)]
            board = banner.get(f"/v1/leaderboards/{EASY_CODE}?limit=100").json()["entries"]
            assert board == [], f"{len(board)} of {RACES} banned players are on the board"
            for player in racers:
                assert banner.post(f"/v1/admin/players/{player}/unban", headers=OPERATOR).status_code == 200
            board = banner.get(f"/v1/leaderboards/{EASY_CODE}?limit=100").json()["entries"]
            assert sorted(e["player"] for e in board) == sorted(racers)
        finally:
            for c in clients:
                c.close()


def test_an_entry_is_annulled_on_its_board_alone(admin: TestClient[Any]) -> None:
    cheat, honest = new_player(admin, name="Cheat"), new_player(admin, name="Honest")
    cheat_id = admin.get("/v1/players/me", headers=cheat).json()["id"]
    for auth in (cheat, honest):
        game = admin.post("/v1/games", json={"code": EASY_CODE}, headers=auth).json()["id"]
        for move in WINNING:
            assert admin.post(f"/v1/games/{game}/moves", json=move, headers=auth).status_code == 200
    url = f"/v1/admin/leaderboards/{EASY_CODE}/entries/{cheat_id}"
    assert admin.delete(f"{url}?reason=impossible%20time", headers=OPERATOR).status_code == 204
    board = admin.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]
    assert [(e["name"], e["rank"]) for e in board] == [("Honest", 1)]
    _problem(admin.delete(url, headers=OPERATOR), 404, "not_found")
    _problem(
        admin.delete(f"/v1/admin/leaderboards/PY1-N-AAAAAAS/entries/{cheat_id}", headers=OPERATOR), 404, "not_found"
    )
    _problem(
        admin.delete(f"/v1/admin/leaderboards/challenge:2026-12-01-N/entries/{cheat_id}", headers=OPERATOR),
        404,
        "not_found",
    )
    _problem(
        admin.delete(f"/v1/admin/leaderboards/not-a-code/entries/{cheat_id}", headers=OPERATOR),
        422,
        "invalid_deal_code",
    )
    assert admin.get("/v1/players/me/stats", headers=cheat).json()["won"] == 1, "the statistics keep the win"
    moderation = admin.get("/v1/players/me/export", headers=cheat).json()["moderation"]
    assert [(m["action"], m["reason"], m["detail"]) for m in moderation] == [
        ("annul", "impossible time", {"board": EASY_CODE})
    ]


def test_a_banned_player_may_export_and_erase_and_the_erasure_takes_what_the_ban_kept(
    admin: TestClient[Any], redis_client: redis.Redis
) -> None:
    auth = new_player(admin, name="Gone")
    player = admin.get("/v1/players/me", headers=auth).json()["id"]
    game = admin.post("/v1/games", json={"code": EASY_CODE}, headers=auth).json()["id"]
    for move in WINNING:
        admin.post(f"/v1/games/{game}/moves", json=move, headers=auth)
    assert admin.post(f"/v1/admin/players/{player}/ban", json={"reason": "x"}, headers=OPERATOR).status_code == 200
    assert redis_client.hlen(f"pyr:{{p:{player}}}:ban:kept") == 1, "the entry is kept with the ban"
    _problem(admin.post("/v1/players/me/token", headers=auth), 403, "player_banned")
    assert admin.get("/v1/players/me/export", headers=auth).status_code == 200
    assert admin.delete("/v1/players/me", headers=auth).status_code == 204
    left = [_text(k) for k in redis_client.scan_iter(match=f"*{player}*") if not _text(k).endswith(":erased")]
    assert left == [], left
    _problem(admin.post(f"/v1/admin/players/{player}/unban", headers=OPERATOR), 404, "not_found")
    assert admin.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"] == []


def test_admin_routes_refuse_player_tokens_and_unknown_players(admin: TestClient[Any]) -> None:
    auth = new_player(admin)
    player = admin.get("/v1/players/me", headers=auth).json()["id"]
    _problem(admin.post(f"/v1/admin/players/{player}/ban", json={}, headers=auth), 401, "unauthorized")
    _problem(admin.post(f"/v1/admin/players/{player}/ban", json={}), 401, "unauthorized")
    unknown = "00000000-0000-4000-8000-000000000000"
    _problem(admin.post(f"/v1/admin/players/{unknown}/ban", json={}, headers=OPERATOR), 404, "not_found")
    _problem(admin.post("/v1/admin/players/nope/ban", json={}, headers=OPERATOR), 404, "not_found")
    _problem(
        admin.post(f"/v1/admin/players/{player}/ban", json={"reason": 7}, headers=OPERATOR), 422, "validation_failed"
    )
    assert admin.get("/v1/players/me", headers=auth).status_code == 200, "nothing was done"


def _app_key(admin: TestClient[Any], name: str, scopes: list[str]) -> dict[str, str]:
    created = admin.post("/v1/admin/apps", json={"name": name, "scopes": scopes}, headers=OPERATOR)
    assert created.status_code == 201, created.text
    return {"Authorization": f"Bearer {created.json()['key']}"}


def test_an_app_key_may_not_moderate_a_player_that_is_not_its_own(admin: TestClient[Any]) -> None:
    """An app with the ``moderation`` scope, and one without it, on an anonymous player's ban, unban and entry:
    403 ``forbidden`` (localised), and nothing changes: the player plays on and keeps its entry."""
    auth = new_player(admin, name="Anon")
    player = admin.get("/v1/players/me", headers=auth).json()["id"]
    game = admin.post("/v1/games", json={"code": EASY_CODE}, headers=auth).json()["id"]
    for move in WINNING:
        admin.post(f"/v1/games/{game}/moves", json=move, headers=auth)
    for key in (_app_key(admin, "Moderált", ["moderation"]), _app_key(admin, "Játékosok", ["players"])):
        _problem(admin.post(f"/v1/admin/players/{player}/ban", json={"reason": "x"}, headers=key), 403, "forbidden")
        _problem(admin.post(f"/v1/admin/players/{player}/unban", headers=key), 403, "forbidden")
        annul = admin.delete(f"/v1/admin/leaderboards/{EASY_CODE}/entries/{player}", headers=key)
        _problem(annul, 403, "forbidden")
        english = admin.post(f"/v1/admin/players/{player}/ban", headers={**key, "Accept-Language": "en"})
        assert english.headers["content-language"] == "en" and english.json()["title"] != annul.json()["title"]
    assert admin.post("/v1/games", json={"code": EASY_CODE}, headers=auth).status_code == 201
    assert [e["player"] for e in admin.get(f"/v1/leaderboards/{EASY_CODE}").json()["entries"]] == [player]
    assert admin.get("/v1/players/me/export", headers=auth).json()["moderation"] == []


def test_the_audit_log_records_each_action_with_who_when_and_why(admin: TestClient[Any], clock: FakeClock) -> None:
    auth = new_player(admin, name="Audited")
    player = admin.get("/v1/players/me", headers=auth).json()["id"]
    game = admin.post("/v1/games", json={"code": EASY_CODE}, headers=auth).json()["id"]
    for move in WINNING:
        admin.post(f"/v1/games/{game}/moves", json=move, headers=auth)
    clock.advance(5)
    admin.post(f"/v1/admin/players/{player}/ban", json={"reason": "too fast"}, headers=OPERATOR)
    admin.post(f"/v1/admin/players/{player}/unban", json={"reason": "appeal upheld"}, headers=OPERATOR)
    annulled = admin.delete(f"/v1/admin/leaderboards/{EASY_CODE}/entries/{player}?reason=replayed", headers=OPERATOR)
    assert annulled.status_code == 204, annulled.text
    entries = admin.get("/v1/admin/audit", headers=OPERATOR).json()["entries"]
    ours = [(e["action"], e["actor"], e["target"], e["reason"], e["detail"]) for e in entries]
    assert ours[:3] == [
        ("annul", "operator", f"player:{player}", "replayed", {"board": EASY_CODE}),
        ("unban", "operator", f"player:{player}", "appeal upheld", {"boards": EASY_CODE, "banned_by": "operator"}),
        ("ban", "operator", f"player:{player}", "too fast", {"boards": EASY_CODE, "banned_by": "operator"}),
    ]
    moments = [datetime.fromisoformat(e["at"].replace("Z", "+00:00")).timestamp() for e in entries[:3]]
    assert moments == [clock.time()] * 3, "stamped with the service's clock"
    export = admin.get("/v1/players/me/export", headers=auth).json()["moderation"]
    assert [(e["action"], e["reason"]) for e in export] == [
        ("annul", "replayed"),
        ("unban", "appeal upheld"),
        ("ban", "too fast"),
    ]


@pytest.mark.slow
def test_an_erasure_racing_a_held_win_leaves_no_review_of_the_erased_player(tmp_path: Path) -> None:
    """The race played for real on two workers: a too-fast challenge win's worker is stopped (SIGSTOP) the moment
    Redis notes its review among the player's, before the review itself is stored; the player's erasure is
    answered by the other worker in between. Once the stopped worker goes on, no review of the erased player is
    left (one would wait for a moderator whose accept, after the tombstone expired, put the erased player's win on
    the board and its keys back)."""
    env = {**_environment(), "PYRAMIDE_MIN_MOVE_MS": "150"}  # machine speed: every win here is held
    with serving(tmp_path / "data", tmp_path, "--workers", "2", env=env) as served:
        clients = [c for pair in clients_on_both_workers(served, 1).values() for c in pair]
        try:
            mover, eraser = clients
            store = _data_redis(served)
            challenge, line = _challenge(mover, store)
            for _ in range(3):
                player, auth = _player(eraser, "Racer")
                game = _play(mover, auth, {"challenge": challenge}, line[:-1])
                send = partial(mover.post, f"/v1/games/{game}/moves", json=line[-1], headers=auth)
                with _stopped_at(served, store, mover, f"{{p:{player}}}:reviews", send) as won:
                    assert eraser.delete("/v1/players/me", headers=auth).status_code == 204
                assert won.result().status_code in (200, 401)  # answered before or after the erasure
                reviews = eraser.get("/v1/admin/reviews?limit=100", headers=OPERATOR).json()["entries"]
                assert [r for r in reviews if r["player"] == player] == [], "a review of the erased player is left"
                left = [k for k in store.scan_iter(match=f"pyr:{{p:{player}}}:*") if not k.endswith(b":erased")]
                assert left == [], left
        finally:
            for c in clients:
                c.close()
