"""Live streams (Server-Sent Events) over real HTTP on loopback, against the real (embedded) Redis: a game's stream
follows moves made by another client, resumes with Last-Event-ID, boards' streams see a win enter, a sealed
challenge's board leaks nothing; a client that never reads still counts in the caps until the write deadline
closes it; two real `pyramide serve` processes on one Redis see each other's changes and share
the caps, a killed one's streams stop counting, and SIGTERM ends a server with a stream open at once."""

from __future__ import annotations

import json
import select
import signal
import socket
import threading
import time
from pathlib import Path

import httpx
import redis

from pyramide.engine.deal_codes import random_deal_code
from pyramide.service.app import create_app
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from tests.support.clock import past_the_close
from tests.support.par import _until_decided
from tests.support.serving import serve_in_thread
from tests.support.streams import (
    CAPS,
    LAYOUT,
    MOVES,
    Sse,
    _game,
    _play,
    _player,
    _serve,
    _served,
    _settings,
    _until,
)
from tests.support.waiting import eventually, redis_clock_past


def test_a_game_stream_gets_each_new_version_after_moves_made_by_another_client(settings: Settings) -> None:
    """A second device follows the game: the snapshot now, then, for moves another client makes, snapshots whose
    id is their version, growing, the last one the GET's."""
    with _served(settings) as api:
        player = _player(api)
        game = _game(api, player)
        stream = Sse(f"{api}/v1/games/{game['id']}/events", player)
        try:
            assert stream.status == 200 and stream.headers["content-type"].startswith("text/event-stream")
            first = stream.next()
            assert first["event"] == "snapshot" and first["id"] == first["data"]["version"] == game["version"]
            played = _play(api, player, game["id"], MOVES[:3])
            seen = [first]
            while seen[-1]["id"] < played["version"]:
                seen.append(stream.next())
            ids = [e["id"] for e in seen]
            assert ids == sorted(set(ids)) and all(e["id"] == e["data"]["version"] for e in seen)
            now = httpx.get(f"{api}/v1/games/{game['id']}", headers=player).json()
            assert seen[-1]["id"] == now["version"] and seen[-1]["data"]["pyramid"] == now["pyramid"]
            stranger = Sse(f"{api}/v1/games/{game['id']}/events", _player(api))
            assert stranger.status == 404 and json.loads(stranger.body)["code"] == "game_not_found"
        finally:
            stream.close()


def test_a_stream_resumed_with_last_event_id_misses_nothing(settings: Settings) -> None:
    """Moves made while the client was away: resumed with the last id it saw, the latest state comes at once;
    resumed with the current id, nothing but pings until the next move."""
    with _served(settings) as api:
        player = _player(api)
        game = _game(api, player)
        stream = Sse(f"{api}/v1/games/{game['id']}/events", player)
        seen = stream.next()["id"]
        stream.close()
        latest = _play(api, player, game["id"], MOVES[:4])
        resumed = Sse(f"{api}/v1/games/{game['id']}/events", {**player, "Last-Event-ID": str(seen)})
        try:
            event = resumed.next(timeout=2)
            assert event["id"] == latest["version"] > seen and event["data"]["pyramid"] == latest["pyramid"]
        finally:
            resumed.close()
        current = Sse(f"{api}/v1/games/{game['id']}/events", {**player, "Last-Event-ID": str(latest["version"])})
        try:
            assert current.items.get(timeout=3) == {"ping": True}  # a heartbeat, no state sent again
            after = _play(api, player, game["id"], MOVES[4:5])
            assert current.next()["id"] == after["version"]
        finally:
            current.close()


def test_a_board_stream_sees_a_win_enter(settings: Settings, redis_client: redis.Redis) -> None:
    """The deal's board, live: empty at first, then with the win as soon as it is made (id: the change counter).
    While nobody has entered it, nothing the stream leaves in Redis is kept for good; from the first entry on, its
    change counter is."""
    with _served(settings) as api:
        code = str(LAYOUT)
        stream = Sse(f"{api}/v1/leaderboards/{code}/events")
        try:
            first = stream.next()
            assert first["event"] == "board" and first["data"]["entries"] == [] and first["data"]["code"] == code
            with httpx.Client(base_url=api, timeout=10) as client:  # the first event started the deal's par: it
                _until_decided(client, code)  # is saved first (an event of its own), so the win's event shows it
            changes = keyspace.boards_of_deal(code).changes
            # the board is told in a step after the par's save
            eventually(lambda: redis_client.exists(changes), 5, what="the saved par bumping the board")
            board_keys = redis_client.keys(f"pyr:{{d:{code}}}:*")
            assert all(redis_client.ttl(k) > 0 for k in board_keys), board_keys
            player = _player(api)
            assert _play(api, player, _game(api, player)["id"], MOVES)["status"] == "won"
            second = _until(stream, lambda board: len(board["entries"]) == 1)
            assert second["id"] > first["id"]
            assert second["data"] == httpx.get(f"{api}/v1/leaderboards/{code}").json()
            assert redis_client.ttl(changes) == -1, "the counter is kept for good"
        finally:
            stream.close()


def test_a_sealed_challenge_board_stream_shows_what_its_get_shows(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """While the challenge is open its board's stream carries exactly the board's GET: no deal code anywhere, no
    par; an unknown challenge is 404 before any stream starts."""
    with _served(settings) as api:
        challenge = httpx.get(f"{api}/v1/challenges/current").json()
        stream = Sse(f"{api}/v1/challenges/{challenge['id']}/leaderboard/events")
        try:
            event = stream.next()
            board = httpx.get(f"{api}/v1/challenges/{challenge['id']}/leaderboard").json()
            assert event["event"] == "board" and event["data"] == board and board["final"] is False
            kept = redis_client.get(f"pyr:{{c:{challenge['id']}}}:deal")
            assert kept is not None and json.loads(kept)["code"] not in json.dumps(event)
            assert all(e["par"] is None for e in event["data"]["entries"])
        finally:
            stream.close()
        missing = Sse(f"{api}/v1/challenges/1999-01-01/leaderboard/events")
        assert missing.status == 404, missing.body


def test_a_deal_board_stream_gets_the_par_once_it_is_saved(settings: Settings) -> None:
    """A new deal's board, live, with no win on it: first with its par pending, then, once the par is worked out
    and saved, again with the par, as the board's GET shows it, under a new id; a client that left with the first
    id and comes back gets the par at once, one that comes back with the current id nothing more."""
    with _served(settings) as api:
        code = str(random_deal_code())  # never seen: its par is worked out from the stream's first read on
        stream = Sse(f"{api}/v1/leaderboards/{code}/events")
        try:
            first = stream.next()
            assert first["data"]["par_status"] == "pending" and first["data"]["entries"] == []
            second = stream.next()  # no win, no entry: only the saved par changes the board
            assert second["id"] > first["id"] and second["data"]["par_status"] != "pending"
            assert second["data"] == httpx.get(f"{api}/v1/leaderboards/{code}").json()
        finally:
            stream.close()
        resumed = Sse(f"{api}/v1/leaderboards/{code}/events", {"Last-Event-ID": str(first["id"])})
        current = Sse(f"{api}/v1/leaderboards/{code}/events", {"Last-Event-ID": str(second["id"])})
        try:
            assert resumed.next(timeout=2) == second
            assert current.items.get(timeout=3) == {"ping": True}  # nothing was missed: nothing comes again
        finally:
            resumed.close()
            current.close()


def test_a_deal_board_stream_gets_a_par_saved_by_a_process_that_died_before_telling_it(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """The par is saved in its own slot, and the board told in a second step: a process killed between the two
    leaves the par saved (written here as such a death leaves it) and the board's counter where it was. A client
    coming back with the current id still gets the board with the par, under a new id, and so do the streams still
    open on the board. Until then the streams' reads of the board, nobody having played it, write nothing."""
    with _served(settings) as api:
        code = str(random_deal_code())
        redis_client.set(keyspace.par(code), json.dumps({"par": None, "status": "pending"}), ex=60)  # claimed
        stream = Sse(f"{api}/v1/leaderboards/{code}/events")
        try:
            first = stream.next()
            assert first["data"]["par_status"] == "pending"
            assert redis_client.keys(f"pyr:{{d:{code}}}:*") == [], "a stream on a code nobody played wrote nothing"
            redis_client.set(keyspace.par(code), json.dumps({"par": 41, "status": "known"}))  # saved, then killed
            resumed = Sse(f"{api}/v1/leaderboards/{code}/events", {"Last-Event-ID": str(first["id"])})
            try:
                event = resumed.next(timeout=3)
                assert event["id"] > first["id"] and (event["data"]["par"], event["data"]["par_status"]) == (
                    41,
                    "known",
                )
                assert event["data"] == httpx.get(f"{api}/v1/leaderboards/{code}").json()
                assert stream.next(timeout=3) == event  # the stream open all along hears of it too
            finally:
                resumed.close()
        finally:
            stream.close()


def test_a_board_counter_that_expired_starts_again_above_where_it_was(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """The change counter of a board nobody has entered expires with what it showed (7 days): when it is made again,
    its ids go on growing (they start from Redis's clock), so a client holding an id from before never takes a new
    board for one it has."""
    with _served(settings) as api:
        code = str(random_deal_code())
        redis_client.set(keyspace.par(code), json.dumps({"par": 41, "status": "known"}))  # worked out
        stream = Sse(f"{api}/v1/leaderboards/{code}/events")
        try:
            before = stream.next()
        finally:
            stream.close()
        assert before["id"] > 0 and redis_client.ttl(keyspace.boards_of_deal(code).changes) > 0
        redis_client.delete(keyspace.boards_of_deal(code).changes, keyspace.board_shown(code).shown)  # expired
        redis_clock_past(redis_client, before["id"])  # a counter made again now starts from a later ms
        resumed = Sse(f"{api}/v1/leaderboards/{code}/events", {"Last-Event-ID": str(before["id"])})
        try:
            after = resumed.next(timeout=3)
        finally:
            resumed.close()
        assert after["id"] > before["id"] and after["data"] == before["data"]


def test_a_challenge_board_stream_open_across_the_close_gets_the_final_board_with_its_par(
    settings: Settings, clock: FakeClock
) -> None:
    """Today's challenge's board, live, while it is open (not final, par sealed); midnight passes with the stream
    open and nothing played: the stream gets the board final, then with the deal's par once it is worked out,
    each as the board's GET shows it."""
    with _served(settings, challenges={"close_check_s": 0.05}) as api:
        challenge = httpx.get(f"{api}/v1/challenges/current").json()
        path = f"{api}/v1/challenges/{challenge['id']}/leaderboard"
        stream = Sse(f"{path}/events")
        try:
            first = stream.next()
            assert (first["data"]["final"], first["data"]["par_status"]) == (False, "sealed")
            past_the_close(clock)
            final = _until(stream, lambda board: board["final"])
            assert final["id"] > first["id"]
            decided = _until(stream, lambda board: board["par_status"] not in ("pending", "sealed"))
            assert decided["id"] > final["id"] and decided["data"]["final"] is True
            assert decided["data"] == httpx.get(path).json()
            resumed = Sse(f"{path}/events", {"Last-Event-ID": str(first["id"])})
            try:
                assert resumed.next(timeout=2) == decided
            finally:
                resumed.close()
        finally:
            stream.close()


def test_two_servers_on_one_redis_share_changes_and_caps_and_stop_promptly(tmp_path: Path) -> None:
    """Two real processes on one Redis: a stream on B sees a move made through A; the caps count streams on both
    (429 `too_many_streams`, Hungarian by default, English when asked, with Retry-After); B killed with SIGKILL,
    its streams stop counting once their leases end; SIGTERM ends A with a stream open within seconds, exit 0."""
    (tmp_path / "a").mkdir()
    with _serve(tmp_path / "a", **CAPS) as (a, process_a):
        redis_url = f"unix://{tmp_path / 'a' / 'redis.sock'}"
        with _serve(tmp_path / "b", redis_url, **CAPS) as (b, process_b):
            player = _player(a)
            game = _game(a, player)
            on_b = Sse(f"{b}/v1/games/{game['id']}/events", player)
            assert on_b.next()["id"] == game["version"]
            moved = _play(a, player, game["id"], MOVES[:1])
            assert on_b.next()["id"] == moved["version"]
            on_a = Sse(f"{a}/v1/games/{game['id']}/events", player)
            assert on_a.status == 200
            third = Sse(f"{b}/v1/games/{game['id']}/events", player)  # the player's third game stream
            problem = json.loads(third.body)
            assert third.status == 429 and problem["code"] == "too_many_streams", third.body
            assert third.headers["content-type"] == "application/problem+json"
            assert third.headers["content-language"] == "hu" and int(third.headers["retry-after"]) >= 1
            board = Sse(f"{a}/v1/leaderboards/{LAYOUT}/events")  # the address's third stream
            assert board.status == 200
            fourth = Sse(f"{b}/v1/leaderboards/{LAYOUT}/events", {"Accept-Language": "en"})
            assert fourth.status == 429 and json.loads(fourth.body)["title"] == "Too many live streams are open"
            assert fourth.headers["content-language"] == "en"
            process_b.send_signal(signal.SIGKILL)
            process_b.wait(timeout=10)
            on_b.close()

            def opened() -> Sse | None:
                stream = Sse(f"{a}/v1/leaderboards/{LAYOUT}/events")
                return None if stream.status == 429 else stream

            # a lease lasts 3 heartbeats (1.5 s)
            again = eventually(opened, 5, what="a stream once the killed process's streams no longer count")
            assert again is not None
        assert again.next()["event"] == "board"
        started = time.monotonic()
        process_a.send_signal(signal.SIGTERM)
        assert process_a.wait(timeout=8) == 0
        assert time.monotonic() - started < 5
        assert on_a.ended.wait(2) and again.ended.wait(2)


def test_many_streams_of_one_process_share_one_redis_subscription(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """Eight streams on eight boards and a game: the process holds one subscribed Redis connection for them all, on
    every channel they follow; once they close, it follows none."""
    with _served(settings) as api:
        player = _player(api)
        game = _game(api, player)
        codes = [str(random_deal_code()) for _ in range(8)]
        streams = [Sse(f"{api}/v1/leaderboards/{code}/events") for code in codes]
        streams.append(Sse(f"{api}/v1/games/{game['id']}/events", player))
        try:
            for stream in streams:
                stream.next()
            subscribed = [c for c in redis_client.client_list() if int(c["sub"]) > 0]
            assert len(subscribed) == 1 and int(subscribed[0]["sub"]) == 9, subscribed
        finally:
            for stream in streams:
                stream.close()
        eventually(
            lambda: not any(int(c["sub"]) > 0 for c in redis_client.client_list()),
            5,
            what="no channel followed once every stream closed",
        )


def test_a_game_stream_ends_when_its_token_no_longer_holds(settings: Settings) -> None:
    """A stolen token opens the owner's game stream; the owner rotates the token: the thief's stream ends within a
    heartbeat and gets none of the moves made after (before, it went on for the stream's whole maximum duration)."""
    with _served(settings) as api:
        player = _player(api)
        game = _game(api, player)
        stolen = Sse(f"{api}/v1/games/{game['id']}/events", player)
        try:
            assert stolen.next()["id"] == game["version"]
            rotated = httpx.post(f"{api}/v1/players/me/token", headers=player)
            assert rotated.status_code == 201, rotated.text
            owner = {"Authorization": f"Bearer {rotated.json()['token']}"}
            _play(api, owner, game["id"], MOVES[:2])
            assert stolen.ended.wait(3), "the stream outlived its token"
            seen = []
            while not stolen.items.empty():
                seen.append(stolen.items.get())
            assert all(item.get("id", game["version"]) == game["version"] for item in seen), seen
        finally:
            stolen.close()


WRITE_TIMEOUT_S = 8.0
STALLING_WINS = 45
"""Wins, each a change of the board, whose first pages (20 entries, about 5 kB each) fill a stalled reader's
buffers: measured, the server's writes stop after about 33 of them."""


def _stalled_reader(api: str, path: str) -> socket.socket:
    """A client that asks for ``path`` and then never reads: the smallest receive buffer and segment size the
    kernel allows (so the server's send buffer stays small too), and a few kilobytes fill the connection."""
    host, port = api.removeprefix("http://").split(":")
    reader = socket.socket()
    reader.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    reader.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 536)
    reader.connect((host, int(port)))
    reader.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    return reader


def _closed_by_server(reader: socket.socket, timeout_s: float) -> bool:
    """Whether the server closed (or reset) the connection within ``timeout_s``, seen without reading a byte."""
    poller = select.poll()
    ended = select.POLLERR | select.POLLHUP | select.POLLRDHUP
    poller.register(reader, ended)
    return any(mask & ended for _, mask in poller.poll(int(timeout_s * 1000)))


def _wins(api: str, count: int) -> None:
    """``count`` new players each win the deal: ``count`` changes of its board."""
    with httpx.Client(base_url=api) as client:
        for _ in range(count):
            created = client.post("/v1/players", json={})
            assert created.status_code == 201, created.text
            player = {"Authorization": f"Bearer {created.json()['token']}"}
            game = client.post("/v1/games", json={"layout": LAYOUT.to_json()}, headers=player).json()
            for move in MOVES:
                last = client.post(f"/v1/games/{game['id']}/moves", json=move, headers=player)
            assert last.json()["status"] == "won", last.text


def test_a_stalled_reader_counts_in_the_caps_until_the_write_deadline_closes_it(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """A client opens a board's stream and never reads; the board changes until the server's writes to it block.
    While its connection is open it still counts against the address's cap (one here: a second stream is 429, well
    after its lease would have run out; before, leases were renewed only after a write, so it stopped counting and
    held its connection for ever); the server resets it within the write deadline, and its lease is given back at
    once (a new stream opens)."""
    app = create_app(_settings(settings, streams={"heartbeat_s": 0.25, "per_address": 1}))
    leases = keyspace.address_streams("127.0.0.1")
    with serve_in_thread(app, write_timeout_s=WRITE_TIMEOUT_S) as api:
        reader = _stalled_reader(api, f"/v1/leaderboards/{LAYOUT}/events")
        try:
            _wins(api, STALLING_WINS)
            time.sleep(1.0)  # longer than a lease (3 heartbeats: 0.75 s)
            assert not _closed_by_server(reader, 0), "closed before the write deadline"
            second = Sse(f"{api}/v1/leaderboards/{LAYOUT}/events")
            assert second.status == 429, "a stalled stream stopped counting in the address's cap"
            assert json.loads(second.body)["code"] == "too_many_streams"
            assert _closed_by_server(reader, WRITE_TIMEOUT_S), "a stalled stream outlived the write deadline"
            eventually(lambda: redis_client.zcard(leases) == 0, 0.5, what="the closed stream's lease given back")
            third = Sse(f"{api}/v1/leaderboards/{LAYOUT}/events")
            try:
                assert third.status == 200 and len(third.next()["data"]["entries"]) == 20
            finally:
                third.close()
        finally:
            reader.close()


def _read_slowly(reader: socket.socket, seconds: float, received: list[int]) -> None:
    """Reads at most 1 kB every 50 ms for ``seconds``, adding each read's size to ``received`` (0 for an end)."""
    reader.settimeout(2)
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        try:
            chunk = reader.recv(1024)
        except OSError:
            chunk = b""
        received.append(len(chunk))
        if not chunk:
            return
        time.sleep(0.05)


def test_a_slow_reader_that_still_reads_keeps_its_stream(settings: Settings) -> None:
    """The same board changes, but the client reads a little every 50 ms (about 20 kB/s, far less than they send):
    the server's writes stay paused longer than the write deadline (1 s here), yet they progress, so the connection
    is not reset and the data keeps coming (a deadline on the pause alone reset it)."""
    app = create_app(_settings(settings, streams={"heartbeat_s": 0.25}))
    with serve_in_thread(app, write_timeout_s=1.0) as api:
        reader = _stalled_reader(api, f"/v1/leaderboards/{LAYOUT}/events")
        received: list[int] = []
        slow = threading.Thread(target=_read_slowly, args=(reader, 5.0, received), daemon=True)
        slow.start()
        try:
            _wins(api, STALLING_WINS)
            slow.join(timeout=10)
            assert received and received[-1] > 0, "the server closed a stream whose client still reads"
            assert sum(received) > 20_000
        finally:
            reader.close()
