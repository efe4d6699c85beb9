"""Every Lua script run directly against the embedded Redis: its named keys and arguments, what it writes, and each
:class:`Result` it answers. (The routes that run them are tested through HTTP elsewhere; the cluster test runs them
on a real cluster.)"""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast
from uuid import UUID, uuid4

import pytest
import redis

from pyramide.service.accounts import app_players, audit, bans, players, privacy, rewrites
from pyramide.service.challenges import closes
from pyramide.service.events import delivery
from pyramide.service.events import store as webhook_store
from pyramide.service.games import screen_queue, store_scripts
from pyramide.service.games.store_scripts import HintArgs
from pyramide.service.http import kept_answers
from pyramide.service.infra import address_moves, keyspace, outbox, ratelimit, stream_leases
from pyramide.service.infra.redis import connect, raw
from pyramide.service.infra.scripts import LUA, NoKeys, Result, Script
from pyramide.service.infra.settings import Settings
from pyramide.service.stats import leaderboards, rankings, reviews, statistics
from tests.support.waiting import redis_clock_past

NONE = NoKeys()
SAVE_CONSTANTS = {"INTERVAL": 0, "BURST": 0, "KEPT_MS": 60_000, "KEPT": 2, "LONGEST": 0}


def run(settings: Settings, script: Script[Any, Any], keys: Any, args: Any, **constants: int) -> Any:
    """One call of ``script`` through the service's own client and loader."""

    async def call() -> Any:
        client = connect(settings.redis)
        try:
            return await script.load(client, **constants)(keys, args)
        finally:
            await client.aclose()

    return asyncio.run(call())


def test_every_lua_file_is_a_script_or_an_included_piece() -> None:
    scripts = {
        s.name
        for module in (store_scripts, ratelimit, address_moves, statistics, leaderboards, rankings, reviews, players)
        for s in vars(module).values()
        if isinstance(s, Script)
    }
    more = (
        audit,
        app_players,
        bans,
        privacy,
        rewrites,
        closes,
        delivery,
        webhook_store,
        stream_leases,
        outbox,
        screen_queue,
        kept_answers,
    )
    scripts |= {s.name for m in more for s in vars(m).values() if isinstance(s, Script)}
    pieces = {
        "gcra", "quota", "list_game", "follow_player", "hash_fields", "emit_event", "board_left", "save_game",
        "board_changed",
    }  # fmt: skip
    assert {p.stem for p in LUA.glob("*.lua")} == scripts | pieces
    assert len(scripts) == 54


# -- games --------------------------------------------------------------------------------------------------------


def test_a_win_to_screen_is_taken_by_one_process_and_claimed_again_when_due(
    settings: Settings, redis_client: redis.Redis
) -> None:
    """``screen_take`` leases a win to the first taker only; ``screen_claim`` takes back only the wins whose lease
    (or retry time) has come, at most ``limit``, and leases them anew."""
    keys = screen_queue.ClaimKeys(keyspace.SCREENS)

    def take(member: str, now: int) -> int:
        return int(run(settings, screen_queue.TAKE, keys, screen_queue.TakeArgs(member, now, 1000)))

    def claim(now: int, limit: int) -> list[bytes]:
        return list(run(settings, screen_queue.CLAIM, keys, screen_queue.ClaimArgs(now, 1000, limit)))

    assert (take("p:a", 0), take("p:a", 999), take("p:b", 500)) == (1, 0, 1)
    assert claim(999, 8) == [], "both leases still run"
    assert claim(1000, 8) == [b"p:a"] and take("p:a", 1500) == 0, "claimed anew: leased till 2000"
    redis_client.zadd(keyspace.SCREENS, {"p:c": 100, "p:d": 100})
    assert claim(1500, 2) == [b"p:c", b"p:d"] and claim(1500, 8) == [b"p:b"]
    assert redis_client.zscore(keyspace.SCREENS, "p:b") == 2500


def test_a_kept_answer_is_settled_only_by_the_claim_s_owner(settings: Settings, redis_client: redis.Redis) -> None:
    """``kept_answer_settle`` keeps the answer (or frees the key) only while the claim holds the caller's owner
    token: a first request slower than its lease cannot overwrite the answer of the request that took the key next."""
    slot = keyspace.kept_answer("lookup")
    keys = kept_answers.SettleKeys(slot)
    redis_client.set(slot, b"pending-b")  # B took the key after A's lease ran out
    assert run(settings, kept_answers.SETTLE, keys, kept_answers.SettleArgs(b"pending-a", b"A's answer", 60_000)) == 0
    assert redis_client.get(slot) == b"pending-b"
    assert run(settings, kept_answers.SETTLE, keys, kept_answers.SettleArgs(b"pending-b", b"B's answer", 60_000)) == 1
    assert redis_client.get(slot) == b"B's answer" and 0 < redis_client.pttl(slot) <= 60_000
    redis_client.set(slot, b"pending-c")
    assert run(settings, kept_answers.SETTLE, keys, kept_answers.SettleArgs(b"pending-c", b"", 60_000)) == 1
    assert redis_client.get(slot) is None, "an empty answer frees the key"


def _save_keys(player: UUID, game: UUID, idempotency: str = "-") -> store_scripts.SaveKeys:
    keys = store_scripts.save_keys(ratelimit.Limit("moves", 0))(player, game)
    return keys._replace(idempotency=keyspace.game_idempotency(player, game, idempotency))


def _save_args(basis: bytes, state: bytes, **changes: Any) -> store_scripts.SaveArgs:
    args = store_scripts.SaveArgs(
        basis=basis, state=state, notation="D", ttl_ms=60_000, response=b"", result=b"", game="g1",
        changed_ms=5, listed=1, token="t", pending_since="",
    )  # fmt: skip
    return args._replace(**changes)


def test_game_save(settings: Settings, redis_client: redis.Redis) -> None:
    player, game = uuid4(), uuid4()
    keys = _save_keys(player, game)

    def save(args: store_scripts.SaveArgs, **constants: int) -> Any:
        return run(settings, store_scripts.SAVE, keys, args, **(SAVE_CONSTANTS | constants))

    assert save(_save_args(b"s0", b"s1")) == [Result.UNAUTHORIZED, b""]
    redis_client.set(keys.auth, "t")
    assert save(_save_args(b"s0", b"s1")) == [Result.MISSING, b""]
    redis_client.set(keys.state, "s0")
    assert save(_save_args(b"other", b"s1")) == [Result.CONFLICT, b"s0"], "Redis's state comes back"
    redis_client.set(keys.hints, 2)
    assert save(_save_args(b"s0", b"s1", result=b"won", pending_since=7)) == [Result.OK, 2, 0]
    assert redis_client.get(keys.state) == b"s1" and redis_client.lrange(keys.record, 0, -1) == [b"D"]
    assert redis_client.get(keys.result) == b"won" and redis_client.zscore(keys.pending, "g1") == 7
    assert redis_client.zscore(keys.all, "g1") == 5 and redis_client.zscore(keys.open, "g1") == 5
    assert 0 < redis_client.pttl(keys.state) <= 60_000 and 0 < redis_client.pttl(keys.hints) <= 60_000
    assert save(_save_args(b"s1", b"s2", ttl_ms=0, listed=2)) == [Result.OK, 2, 0]
    assert redis_client.ttl(keys.state) == -1 and redis_client.ttl(keys.record) == -1, "a finished game is kept"
    assert redis_client.zscore(keys.won, "g1") == 5 and redis_client.zscore(keys.open, "g1") is None
    assert save(_save_args(b"s2", b"s3"), LONGEST=2) == [Result.TOO_LONG, b""]
    assert save(_save_args(b"s2", b"s3", notation=""), LONGEST=2)[0] == Result.OK, "abandoning is still allowed"
    redis_client.set(keys.limit, 10**15)
    assert save(_save_args(b"s3", b"s4"), INTERVAL=1000, BURST=1000)[0] == Result.LIMITED
    assert redis_client.get(keys.state) == b"s3", "nothing written past the limit"


def test_game_save_keeps_the_latest_responses_for_idempotency_keys(
    settings: Settings, redis_client: redis.Redis
) -> None:
    player, game = uuid4(), uuid4()
    redis_client.set(keyspace.auth(player), "t")
    redis_client.set(keyspace.game_state(player, game), "s0")
    answers = []
    for n in range(3):
        keys = _save_keys(player, game, f"k{n}")
        answers.append(run(settings, store_scripts.SAVE, keys, _save_args(f"s{n}".encode(), f"s{n + 1}".encode(),
                                                                   response=b"head|"), **SAVE_CONSTANTS))  # fmt: skip
    assert [a[2] for a in answers] == [1, 1, 0], "the third replaces the oldest (KEPT 2): Redis does not grow"
    assert redis_client.get(keyspace.game_idempotency(player, game, "k0")) is None
    assert redis_client.lrange(keyspace.game_kept(player, game), 0, -1) == [b"k2", b"k1"]
    again = run(settings, store_scripts.SAVE, _save_keys(player, game, "k2"), _save_args(b"s0", b"x", response=b"h|"),
                **SAVE_CONSTANTS)  # fmt: skip
    assert again == [Result.KEPT, b"head|s3"], "the kept response comes back, nothing written"


def _create(player: UUID, game: UUID, **changes: Any) -> tuple[store_scripts.CreateKeys, store_scripts.CreateArgs]:
    lists = keyspace.game_lists(player)
    keys = store_scripts.CreateKeys(
        state=keyspace.game_state(player, game), idempotency=keyspace.game_idempotency(player, game, "k"),
        limit=keyspace.player_limit(player, "games"), all=lists.all, open=lists.open, won=lists.won,
        abandoned=lists.abandoned, auth=keyspace.auth(player), attempt=keyspace.attempt(player, "2026-12-05"),
    )  # fmt: skip
    args = store_scripts.CreateArgs(
        state=b"s", ttl_ms=60_000, response=b"head|", kept_ms=60_000, interval=0, burst=0, game=str(game),
        created_ms=100, token="t", attempt_ttl_ms="", max_unfinished=0, expired_before_ms=0,
    )  # fmt: skip
    return keys, args._replace(**changes)


def test_game_create(settings: Settings, redis_client: redis.Redis) -> None:
    player, game = uuid4(), uuid4()
    keys, args = _create(player, game)
    assert run(settings, store_scripts.CREATE, keys, args) == [Result.UNAUTHORIZED, b""]
    redis_client.set(keys.auth, "t")
    assert run(settings, store_scripts.CREATE, keys, args) == [Result.OK, b""]
    assert redis_client.get(keys.state) == b"s" and redis_client.get(keys.idempotency) == b"head|s"
    assert redis_client.zscore(keys.open, str(game)) == 100 and redis_client.zscore(keys.all, str(game)) == 100
    assert run(settings, store_scripts.CREATE, keys, args) == [Result.KEPT, b"head|s"], "a retried create"
    other_keys, other = _create(player, uuid4(), max_unfinished=1, expired_before_ms=50)
    assert run(settings, store_scripts.CREATE, other_keys, other) == [Result.TOO_MANY_UNFINISHED, b""]
    assert run(settings, store_scripts.CREATE, other_keys, other._replace(expired_before_ms=101))[0] == Result.OK, (
        "a game expired since its last change leaves the open list"
    )
    redis_client.set(keys.attempt, "earlier")
    third_keys, third = _create(player, uuid4(), attempt_ttl_ms=5000)
    assert run(settings, store_scripts.CREATE, third_keys, third) == [Result.ATTEMPTED, b""]
    redis_client.delete(keys.attempt)
    assert run(settings, store_scripts.CREATE, third_keys, third)[0] == Result.OK
    assert redis_client.get(keys.attempt) == third.game.encode()
    fourth_keys, fourth = _create(player, uuid4(), interval=10**6, burst=1)
    assert run(settings, store_scripts.CREATE, fourth_keys, fourth)[0] == Result.LIMITED


def test_game_count_hint(settings: Settings, redis_client: redis.Redis) -> None:
    player, game = uuid4(), uuid4()
    keys = store_scripts.HintKeys(
        hints=keyspace.game_hints(player, game),
        hinted=keyspace.game_hinted(player, game),
        tombstone=keyspace.tombstone(player),
    )
    assert run(settings, store_scripts.COUNT_HINT, keys, HintArgs(version=3, ttl_ms=60_000)) == Result.OK
    assert redis_client.get(keys.hints) == b"1" and 0 < redis_client.pttl(keys.hints) <= 60_000
    assert 0 < redis_client.pttl(keys.hinted) <= 60_000
    assert run(settings, store_scripts.COUNT_HINT, keys, HintArgs(version=3, ttl_ms=60_000)) == Result.UNCHANGED
    assert redis_client.get(keys.hints) == b"1"  # the same version: the same hint
    assert run(settings, store_scripts.COUNT_HINT, keys, HintArgs(version=4, ttl_ms=60_000)) == Result.OK
    assert redis_client.get(keys.hints) == b"2"
    redis_client.set(keys.tombstone, 1)
    assert run(settings, store_scripts.COUNT_HINT, keys, HintArgs(version=5, ttl_ms=60_000)) == Result.ERASED
    assert redis_client.get(keys.hints) == b"2"


# -- rate limits --------------------------------------------------------------------------------------------------


def test_rate_limits_and_quotas(settings: Settings, redis_client: redis.Redis) -> None:
    cell = keyspace.address_limit("127.0.0.1", "games")
    limit = ratelimit.Limit("games", 2, 60)
    check = [run(settings, ratelimit.CHECK, ratelimit.CellKeys(cell=cell), limit.args()) for _ in range(3)]
    assert [wait for wait, _ in check[:2]] == [0, 0] and 0 < check[2][0] <= 30_000, "the third of two a minute waits"
    ahead = [ahead for _, ahead in check]
    assert 29_000 < ahead[0] <= 30_000 < ahead[1] <= 60_000 and ahead[2] == 0, "how far ahead the cell stands"
    assert [limit.allowance(a).remaining for a in ahead[:2]] == [1, 0]
    counter = keyspace.address_quota("127.0.0.1", "games")
    both = ratelimit.CellAndCounterKeys(cell=keyspace.address_limit("127.0.0.2", "games"), counter=counter)
    args = ratelimit.LimitAndQuotaArgs(interval=1, burst=1000, quota=1, window=60_000)
    assert run(settings, ratelimit.CHECK_WITH_QUOTA, both, args) == [Result.OK, 1]
    over, wait = run(settings, ratelimit.CHECK_WITH_QUOTA, both, args)
    assert over == Result.OVER_QUOTA and 0 < wait <= 60_000
    limited = ratelimit.LimitAndQuotaArgs(interval=10**6, burst=0, quota=5, window=60_000)
    assert run(settings, ratelimit.CHECK_WITH_QUOTA, both, limited)[0] == Result.LIMITED
    assert redis_client.get(counter) == b"1", "a refused request counts against neither"
    quota = ratelimit.QuotaArgs(quota=2, window=60_000)
    keys = ratelimit.CounterKeys(counter=counter)
    assert run(settings, ratelimit.TAKE, keys, quota) == 0
    assert 0 < run(settings, ratelimit.TAKE, keys, quota) <= 60_000
    assert run(settings, ratelimit.GIVE_BACK, keys, NONE) == 0 and redis_client.get(counter) == b"1"


def test_address_moves_add(settings: Settings, redis_client: redis.Redis) -> None:
    keys = address_moves.WindowKeys(window=keyspace.address_window("127.0.0.1", "address_moves", 7))
    assert run(settings, address_moves.ADD, keys, address_moves.AddArgs(moves=3, expire_ms=120_000)) == 3
    assert run(settings, address_moves.ADD, keys, address_moves.AddArgs(moves=0, expire_ms=120_000)) == 3
    assert 0 < redis_client.pttl(keys.window) <= 120_000


# -- statistics, boards, reviews -----------------------------------------------------------------------------------


def test_statistics_record_reset_and_hints(settings: Settings, redis_client: redis.Redis) -> None:
    player = uuid4()
    keys = statistics.StatsStore._keys(player)
    redis_client.hset(keys.player, "name", "x")
    redis_client.pexpire(keys.player, 60_000)
    redis_client.zadd(keys.pending, {"g": 1})
    start = statistics.RecordArgs(
        game="g", outcome="start", elapsed_ms=0, moves=0, member="", entry="", par_deal="", par_from=0, par_max=50
    )
    assert run(settings, statistics.RECORD, keys, start) == Result.OK
    assert run(settings, statistics.RECORD, keys, start) == Result.UNCHANGED
    assert redis_client.zcard(keys.pending) == 0 and 0 < redis_client.pttl(keys.games) <= 60_000
    won = start._replace(outcome="won", elapsed_ms=9000, moves=40, member="m", entry="{}")
    assert run(settings, statistics.RECORD, keys, won) == Result.OK
    assert run(settings, statistics.RECORD, keys, won) == Result.UNCHANGED, "counted once"
    counters = redis_client.hgetall(keys.counters)
    assert counters[b"won"] == b"1" and counters[b"best_time_ms"] == b"9000" and counters[b"fewest_moves"] == b"40"
    assert redis_client.ttl(keys.player) == -1 and redis_client.ttl(keys.counters) == -1, "a winner is kept"
    redis_client.hset(keys.player, "banned_ms", 1)
    assert run(settings, statistics.RECORD, keys, won._replace(game="h")) == Result.BANNED
    hint = statistics.HintKeys(counters=keys.counters, player=keys.player, tombstone=keys.tombstone)
    assert run(settings, statistics.COUNT_HINT, hint, NONE) == Result.OK
    assert redis_client.hget(keys.counters, "hints") == b"1"
    assert run(settings, statistics.RESET, keys, statistics.ResetArgs(since_ms=77)) == Result.OK
    assert redis_client.hgetall(keys.counters) == {b"since_ms": b"77"} and not redis_client.exists(keys.games)
    redis_client.set(keys.tombstone, 1)
    assert run(settings, statistics.RECORD, keys, won._replace(game="i")) == Result.ERASED
    assert run(settings, statistics.RESET, keys, statistics.ResetArgs(since_ms=78)) == Result.ERASED
    assert run(settings, statistics.COUNT_HINT, hint, NONE) == Result.ERASED
    assert redis_client.hgetall(keys.counters) == {b"since_ms": b"77"}


def test_leaderboard_scripts(settings: Settings, redis_client: redis.Redis) -> None:
    player = uuid4()
    board = keyspace.boards_of_deal("PY1-N-CODE")
    who = str(player)
    enter = leaderboards.EnterArgs(who, "0002", '{"n": 2}', "app", "", 1)
    assert run(settings, leaderboards.ENTER, board, enter) == Result.OK
    assert run(settings, leaderboards.ENTER, board, enter._replace(member="0003")) == Result.UNCHANGED
    assert run(settings, leaderboards.ENTER, board, enter._replace(member="0001", identity="anonymous")) == Result.OK
    assert redis_client.zrange(board.ranked, 0, -1) == [b"0001"] and redis_client.zrange(board.apps, 0, -1) == []
    assert redis_client.zrange(board.anonymous, 0, -1) == [b"0001"]
    read = leaderboards.ReadKeys(best=board.best, entries=board.entries)
    assert run(settings, leaderboards.READ, read, leaderboards.PlayerArgs(player=who)) == [b"0001", b'{"n": 2}']
    assert run(settings, leaderboards.READ, read, leaderboards.PlayerArgs(player="nobody")) is None
    kept = leaderboards.KeepKeys(kept=keyspace.ban_kept(player), player=keyspace.player(player))
    keep = leaderboards.KeepArgs(board="PY1-N-CODE", member="0001", entry="{}")
    assert run(settings, leaderboards.KEEP, kept, keep) == Result.MISSING, "not banned: nothing kept"
    redis_client.hset(kept.player, "banned_ms", 1)
    assert run(settings, leaderboards.KEEP, kept, keep) == Result.OK
    assert redis_client.hget(kept.kept, "PY1-N-CODE") == b"0001\n{}"
    remove_if = leaderboards.RemoveIfArgs(player=who, member="0009", at_ms=1)
    assert run(settings, leaderboards.REMOVE_IF, board, remove_if) == Result.UNCHANGED, "a better one stays"
    assert run(settings, leaderboards.REMOVE_IF, board, remove_if._replace(member="0001")) == Result.OK
    assert run(settings, leaderboards.REMOVE, board, leaderboards.RemoveArgs(player=who, at_ms=1)) == Result.MISSING
    run(settings, leaderboards.ENTER, board, enter)
    assert run(settings, leaderboards.REMOVE, board, leaderboards.RemoveArgs(player=who, at_ms=1)) == Result.OK
    assert not redis_client.exists(board.ranked, board.best, board.entries, board.apps)
    note = leaderboards.NoteKeys(boards=keyspace.boards(player), tombstone=keyspace.tombstone(player))
    assert run(settings, leaderboards.NOTE, note, leaderboards.NoteArgs(board="B")) == Result.OK
    redis_client.set(note.tombstone, 1)
    assert run(settings, leaderboards.NOTE, note, leaderboards.NoteArgs(board="C")) == Result.ERASED
    assert redis_client.smembers(note.boards) == {b"B"}


def test_ranked_page(settings: Settings, redis_client: redis.Redis) -> None:
    ids = [str(uuid4()) for _ in range(3)]
    members = [rankings.rank_member(1000 * (i + 1), 10, 5, ids[i]) for i in range(3)]
    redis_client.zadd("pyr:{d:x}:board", dict.fromkeys(members, 0))
    redis_client.hset("pyr:{d:x}:entries", mapping={ids[i]: json.dumps({"i": i}) for i in range(3)})
    keys = rankings.PageKeys(ranking="pyr:{d:x}:board", details="pyr:{d:x}:entries")
    rank, page, details = run(settings, rankings.PAGE, keys, rankings.PageArgs(after=members[0], limit=1))
    assert rank == 2 and page == [m.encode() for m in members[1:]] and details == [b'{"i": 1}', b'{"i": 2}']
    assert run(settings, rankings.PAGE, keys, rankings.PageArgs(after=members[2], limit=1)) == [0, [], []]


def test_review_scripts(settings: Settings, redis_client: redis.Redis) -> None:
    keys = reviews._keys("2026-12-05")
    hold = reviews.HoldArgs(review="r1", member="0:1:r1", item="{}", per_challenge=1, held_ms=1)
    assert run(settings, reviews.HOLD, keys, hold) == Result.OK
    assert run(settings, reviews.HOLD, keys, hold) == Result.UNCHANGED
    second = hold._replace(review="r2", member="0:2:r2")
    assert run(settings, reviews.HOLD, keys, second) == Result.FULL, "every review of the challenge is pending"
    decide = reviews.DecideArgs(review="r1", member="1:9:r1", item='{"status": "accepted"}')
    assert run(settings, reviews.DECIDE, keyspace.REVIEWS, decide) == Result.OK
    assert run(settings, reviews.DECIDE, keyspace.REVIEWS, decide) == Result.CONFLICT
    assert run(settings, reviews.DECIDE, keyspace.REVIEWS, decide._replace(review="r9")) == Result.MISSING
    assert run(settings, reviews.HOLD, keys, second) == Result.OK, "the decided one makes room"
    assert redis_client.zrange(keys.queue, 0, -1) == [b"0:2:r2"] and not redis_client.hexists(keys.items, "r1")
    assert run(settings, reviews.FORGET, keys, reviews.ReviewArgs(review="r2")) == Result.OK
    assert not redis_client.exists(keys.queue, keys.items, keys.order, keys.challenge)
    player = uuid4()
    note = reviews.NoteKeys(reviews=keyspace.player_reviews(player), tombstone=keyspace.tombstone(player))
    assert run(settings, reviews.NOTE, note, reviews.NoteArgs(entry="c r")) == Result.OK
    redis_client.set(note.tombstone, 1)
    assert run(settings, reviews.NOTE, note, reviews.NoteArgs(entry="c s")) == Result.ERASED
    assert redis_client.smembers(note.reviews) == {b"c r"}


# -- players, audit, apps, privacy --------------------------------------------------------------------------------


def test_player_scripts(settings: Settings, redis_client: redis.Redis) -> None:
    player = uuid4()
    keys = players.PlayerKeys(player=keyspace.player(player), auth=keyspace.auth(player))
    fields = json.dumps({"token_hash": "h1", "name": "Ágnes"})
    assert run(settings, players.INSERT, keys, players.InsertArgs(idle_ms=60_000, token_hash="h1", fields=fields)) == 1
    assert redis_client.hget(keys.player, "name") == "Ágnes".encode() and redis_client.get(keys.auth) == b"h1"
    stats = keyspace.statistics(player)
    touch = players.AuthenticateKeys(keys.player, *stats, audit=keyspace.audit(player), auth=keys.auth)
    redis_client.delete(keys.auth)
    flat = run(settings, players.AUTHENTICATE, touch, players.IdleArgs(idle_ms=90_000))
    assert dict(zip(flat[::2], flat[1::2], strict=True))[b"token_hash"] == b"h1"
    assert redis_client.get(keys.auth) == b"h1", "the token hash is put back where the game scripts compare it"
    assert 60_000 < redis_client.pttl(keys.player) <= 90_000 and 60_000 < redis_client.pttl(keys.auth) <= 90_000
    change = players.ChangeKeys(player=keys.player)
    assert run(settings, players.CHANGE, change, players.FieldsArgs(fields='{"locale": "en"}')) == Result.OK
    assert redis_client.hget(keys.player, "locale") == b"en"
    assert run(settings, players.CHANGE, players.ChangeKeys(player="pyr:{p:x}:player"),
               players.FieldsArgs(fields='{"locale": "en"}')) == Result.MISSING  # fmt: skip
    sealed = keyspace.player_sealed(player, "s1")
    rotate = players.RotateKeys(player=keys.player, auth=keys.auth, sealed=sealed)
    args = players.RotateArgs(old_hash="h0", new_hash="h2", record=b"sealed", kept_ms=60_000)
    assert run(settings, players.ROTATE, rotate, args) == Result.CONFLICT, "not the token the request holds"
    assert run(settings, players.ROTATE, rotate, args._replace(old_hash="h1")) == Result.OK
    assert redis_client.get(keys.auth) == b"h2" and redis_client.get(sealed) == b"sealed"
    outbox = keyspace.player_outbox(player)
    ban = bans.BanKeys(player=keys.player, auth=keys.auth, tombstone=keyspace.tombstone(player), outbox=outbox)
    by_app = bans.BanArgs(5, bans.BANNED, "app:1", "0", str(player), "")
    assert run(settings, bans.BAN, ban, by_app) == b"app:1"
    assert redis_client.get(keys.auth) == bans.BANNED
    assert not redis_client.exists(outbox), "a player of no app emits nothing"
    unban = bans.UnbanArgs("app:2", "0", str(player), 6, "")
    unban_keys = bans.UnbanKeys(player=keys.player, auth=keys.auth, outbox=outbox)
    assert run(settings, bans.UNBAN, unban_keys, unban) == Result.FORBIDDEN, "not the app's ban"
    assert run(settings, bans.UNBAN, unban_keys, unban._replace(actor="app:1")) == Result.OK
    assert redis_client.get(keys.auth) == b"h2", "the current token works again"
    assert run(settings, bans.UNBAN, unban_keys, unban._replace(actor="app:1")) == Result.UNCHANGED
    assert not redis_client.exists(outbox)
    redis_client.set(ban.tombstone, 1)
    assert run(settings, bans.BAN, ban, by_app) == Result.MISSING, "being erased"
    gone = bans.UnbanKeys(player="pyr:{p:y}:player", auth="pyr:{p:y}:auth", outbox="pyr:{p:y}:outbox")
    assert run(settings, bans.UNBAN, gone, unban) == Result.MISSING


def test_audit_note(settings: Settings, redis_client: redis.Redis) -> None:
    player = uuid4()
    keys = audit.NoteKeys(
        audit=keyspace.audit(player), player=keyspace.player(player), tombstone=keyspace.tombstone(player)
    )
    assert run(settings, audit.NOTE, keys, audit.NoteArgs(entry="a", most=2)) == [Result.MISSING]
    redis_client.hset(keys.player, "name", "x")
    assert run(settings, audit.NOTE, keys, audit.NoteArgs(entry="a", most=2)) == [Result.OK]
    assert run(settings, audit.NOTE, keys, audit.NoteArgs(entry="b", most=2)) == [Result.OK]
    assert run(settings, audit.NOTE, keys, audit.NoteArgs(entry="c", most=2)) == [Result.OK, b"a"], "pushed out"
    redis_client.set(keys.tombstone, 1)
    assert run(settings, audit.NOTE, keys, audit.NoteArgs(entry="d", most=2)) == [Result.MISSING]


def test_app_scripts(settings: Settings, redis_client: redis.Redis) -> None:
    app, player = uuid4(), uuid4()
    binding = app_players.binding_key(app, "user-1")
    redis_client.hset(keyspace.app(app), "name", "A")
    resolve = app_players.ResolveKeys(app=keyspace.app(app), binding=binding)
    assert run(settings, app_players.RESOLVE, resolve, NONE) == [[b"name", b"A"], None]
    bind = app_players.BindingKeys(binding=binding)
    assert run(settings, app_players.BIND, bind, app_players.BindArgs(seen="", player="p1")) == b"p1"
    assert run(settings, app_players.BIND, bind, app_players.BindArgs(seen="", player="p2")) == b"p1", "bound first"
    unbind = app_players.UnbindKeys(binding=binding, outbox=keyspace.app_outbox(app))
    erased = app_players.ErasedArgs(player="p2", app=str(app), data="{}")
    assert run(settings, app_players.UNBIND, unbind, erased) == Result.OK
    assert redis_client.get(binding) == b"p1", "another player's binding stays"
    assert not redis_client.exists(unbind.outbox), "no erasure, no event"
    run(settings, app_players.UNBIND, unbind, erased._replace(player="p1"))
    assert not redis_client.exists(binding)
    assert redis_client.xlen(unbind.outbox) == 1
    sessions = app_players.SessionKeys(player=keyspace.player(player), sessions=keyspace.sessions(player))
    issue = app_players.IssueArgs(session="s1", app=str(app), expires_ms=10**13, now_ms=1000, most=2)
    assert run(settings, app_players.ISSUE, sessions, issue) == Result.MISSING, "an erased player gets none"
    redis_client.hset(sessions.player, "name", "x")
    redis_client.hset(sessions.sessions, "old", f"{app} 999")
    for n in range(3):
        session = issue._replace(session=f"s{n}", expires_ms=10**13 + n)
        assert run(settings, app_players.ISSUE, sessions, session) == Result.OK
    assert set(redis_client.hkeys(sessions.sessions)) == {b"s1", b"s2"}, "expired and oldest gone"
    redis_client.hset(sessions.player, "banned_ms", "1")  # banned while the session was being issued (issue 57)
    banned = issue._replace(session="s9", expires_ms=10**13 + 9)
    assert run(settings, app_players.ISSUE, sessions, banned) == Result.UNAUTHORIZED, "a banned player gets none"
    assert set(redis_client.hkeys(sessions.sessions)) == {b"s1", b"s2"}, "nothing written"
    note = app_players.erased_ban_key(app, player)
    ban = app_players.BanKeys(binding=binding, note=note)
    keep_keys = app_players.KeepBanKeys(binding=binding, note=note, outbox=unbind.outbox)
    redis_client.set(binding, str(player))
    keep = app_players.KeepBanArgs("other", "banned", "d", str(app), "{}")
    assert run(settings, app_players.KEEP_BAN, keep_keys, keep) == Result.CONFLICT
    assert run(settings, app_players.KEEP_BAN, keep_keys, keep._replace(player=str(player))) == Result.OK
    assert redis_client.xlen(unbind.outbox) == 2
    assert redis_client.get(binding) == b"banned" and redis_client.get(note) == b"d"
    lift = app_players.LiftArgs(digest="other", banned="banned")
    assert run(settings, app_players.LIFT, ban, lift) == Result.CONFLICT
    assert run(settings, app_players.LIFT, ban, lift._replace(digest="d")) == Result.OK
    assert not redis_client.exists(binding, note)


def test_erasure_scripts(settings: Settings, redis_client: redis.Redis) -> None:
    player = uuid4()
    keys = privacy.EraseKeys(
        player=keyspace.player(player), auth=keyspace.auth(player), boards=keyspace.boards(player),
        tombstone=keyspace.tombstone(player),
    )  # fmt: skip
    redis_client.hset(keys.player, "name", "x")
    redis_client.set(keys.auth, "h")
    redis_client.sadd(keys.boards, "B")
    boards, now_ms = run(settings, privacy.ERASE, keys, privacy.EraseArgs(guard_ms=60_000))
    assert boards == [b"B"] and now_ms > 1_700_000_000_000
    assert not redis_client.exists(keys.player, keys.auth) and 0 < redis_client.pttl(keys.tombstone) <= 60_000
    claim = rewrites.ClaimKeys(rewritten=keyspace.ERASURE_REWRITTEN)
    later = rewrites.ClaimArgs(due_ms=now_ms + 10**6, interval_ms=0)
    kind, wait = run(settings, rewrites.CLAIM, claim, later)
    assert kind == Result.LIMITED and 0 < wait <= 10**6
    kind, at = run(settings, rewrites.CLAIM, claim, later._replace(due_ms=now_ms))
    assert kind == Result.OK and redis_client.get(claim.rewritten) == str(at).encode()
    assert run(settings, rewrites.CLAIM, claim, later._replace(due_ms=now_ms)) == [Result.UNCHANGED, at]


# -- the loader ---------------------------------------------------------------------------------------------------


def test_a_script_the_server_lost_is_loaded_again(settings: Settings, redis_client: redis.Redis) -> None:
    keys = address_moves.WindowKeys(window="pyr:{rl:x}:w:1")

    async def twice() -> list[Any]:
        client = connect(settings.redis)
        try:
            add = address_moves.ADD.load(client)
            first = await add(keys, address_moves.AddArgs(moves=1, expire_ms=1000))
            redis_client.script_flush()
            return [first, await add(keys, address_moves.AddArgs(moves=1, expire_ms=1000))]
        finally:
            await client.aclose()

    assert asyncio.run(twice()) == [1, 2]


def test_the_save_script_bakes_its_validated_constants() -> None:
    text = store_scripts.SAVE.text(**SAVE_CONSTANTS | {"INTERVAL": 1234})
    assert "gcra(KEYS[5], 1234, 0)" in text and "CONST." not in text and "KEYS." not in text
    with pytest.raises(ValueError, match="takes the constants"):
        store_scripts.SAVE.text(INTERVAL=1)
    with pytest.raises(ValueError, match="must be an int"):
        store_scripts.SAVE.text(**SAVE_CONSTANTS | {"KEPT": "2; redis.call('FLUSHALL')"})  # type: ignore[arg-type]


# -- events housekeeping ------------------------------------------------------------------------------------------


def _settle(settings: Settings, box: str, cursors: dict[str, str], gone: list[str], finished: list[str]) -> Any:
    keys = outbox.SettleKeys(box, keyspace.delivery_cursors(box))
    args = outbox.SettleArgs(json.dumps(cursors), json.dumps(gone), json.dumps(finished))
    return run(settings, outbox.SETTLE, keys, args)


def test_outbox_settle(settings: Settings, redis_client: redis.Redis) -> None:
    box = keyspace.player_outbox(uuid4())
    cursors = keyspace.delivery_cursors(box)
    assert _settle(settings, box, {"wh_a": "{}"}, [], []) == [Result.MISSING, 0, 0]
    assert redis_client.exists(cursors) == 0, "no cursor for an outbox that is gone"
    first, second = ((raw(redis_client.xadd(box, {"type": "t"})) or b"").decode() for _ in range(2))
    redis_client.hset(cursors, "wh_gone", "{}")
    assert _settle(settings, box, {"wh_a": '{"done": 1}'}, ["wh_gone"], [first]) == [Result.OK, 1, 0]
    assert redis_client.hgetall(cursors) == {b"wh_a": b'{"done": 1}'}
    redis_clock_past(redis_client, int(second.partition("-")[0]))  # the last entry's ms is past
    assert _settle(settings, box, {"wh_a": "{}"}, [], [second]) == [Result.OK, 0, 1]
    assert redis_client.exists(box, cursors) == 0, "an emptied outbox goes with its cursors"
    redis_client.xadd(box, {"type": "t"}, id="99999999999999-0")  # its last id in this ms or later: kept
    assert _settle(settings, box, {}, [], ["99999999999999-0"]) == [Result.OK, 0, 0]
    assert redis_client.exists(box) == 1 and redis_client.xlen(box) == 0


def test_stream_lease_and_release(settings: Settings, redis_client: redis.Redis) -> None:
    """A cap of one: a second stream is FULL until the first's lease is given back (a lease given back twice, or
    never taken, is no error: a stream's end gives back what it may not hold)."""
    leases = stream_leases.LeaseKeys(leases=keyspace.address_streams("127.0.0.9"))
    now = int(redis_client.time()[0]) * 1000

    def lease(stream: str) -> Any:
        args = stream_leases.LeaseArgs(stream=stream, now_ms=str(now), until_ms=str(now + 60_000), cap="1")
        return run(settings, stream_leases.LEASE, leases, args)

    def release(stream: str) -> Any:
        return run(settings, stream_leases.RELEASE, leases, stream_leases.ReleaseArgs(stream=stream))

    assert (lease("a"), lease("b")) == (Result.OK, Result.FULL)
    assert (release("a"), release("a"), release("never")) == (Result.OK,) * 3
    assert redis_client.exists(leases.leases) == 0
    assert lease("b") == Result.OK and redis_client.zrange(leases.leases, 0, -1) == [b"b"]


def test_webhook_note(settings: Settings, redis_client: redis.Redis) -> None:
    app = uuid4()
    keys = webhook_store.NoteKeys(
        keyspace.webhooks(app), keyspace.webhook_log(app, "wh_a"), keyspace.webhook_deliveries(app, "wh_a")
    )
    note = webhook_store.NOTE

    def noted(event: str, created: int) -> Any:
        return run(settings, note, keys, webhook_store.NoteArgs("wh_a", event, created, "{}"), KEPT=2)

    assert noted("evt_1", 1) == Result.MISSING
    assert redis_client.exists(keys.log, keys.deliveries) == 0, "nothing written for an endpoint that is gone"
    redis_client.hset(keys.webhooks, "wh_a", "{}")
    assert [noted(f"evt_{n}", n) for n in range(1, 4)] == [Result.OK] * 3
    assert redis_client.zrange(keys.log, 0, -1) == [b"evt_2", b"evt_3"], "the newest KEPT"
    assert sorted(redis_client.hkeys(keys.deliveries)) == [b"evt_2", b"evt_3"]


def test_an_event_id_covers_the_microsecond_it_was_written(settings: Settings, redis_client: redis.Redis) -> None:
    """An outbox deleted once empty and written again after Redis's clock stepped back may give a new entry the id
    an earlier entry had (here: the second event's fields read under the first's entry id): the events' ids differ
    all the same (before, an id covered the outbox and entry id only, so the delivery log sent the old event's body
    under it and receivers dropped the new event as a repeat)."""
    app = uuid4()
    box = keyspace.app_outbox(app)
    binding = app_players.binding_key(app, "user-1")
    unbind = app_players.UnbindKeys(binding=binding, outbox=box)
    written: list[tuple[bytes, dict[bytes, bytes]]] = []
    for player in ("p1", "p2"):
        redis_client.set(binding, player)
        run(settings, app_players.UNBIND, unbind, app_players.ErasedArgs(player=player, app=str(app), data="{}"))
        written.extend(cast(Any, redis_client.xrange(box)))
        redis_client.delete(box)  # emptied and deleted, as outbox_settle.lua does
    (entry, first), (_, second) = written
    assert b"us" in first and first[b"us"] != second[b"us"]
    assert outbox.parse(box, entry, first).id != outbox.parse(box, entry, second).id
