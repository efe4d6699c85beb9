"""A player's data across the domains: everything kept about them, as one document, and its complete erasure.

Everything of a player lives under its hash tag ``{p:<id>}`` (settings, token hash, statistics, games, records,
results, lists, kept responses, rate limits), except its entries on the deal leaderboards, which the player's
``boards`` set names.

Erasure is final, however requests of the player race it on any process. Its first step, one script in the
player's slot, deletes the player's settings and token hash and sets the player's tombstone (``keyspace.tombstone``)
for ``erasure_guard_s``: from then on no write brings a key of the player back, because every script that writes
one refuses first, either on the tombstone (statistics, leaderboard notes, hints, settings) or on
the missing token hash (game saves, which also note the games pending settlement, game creations, token rotation:
they compare the token hash anyway, so the move route pays nothing more), and no script writes a token hash again
for a player without settings. The step answers the boards the player is noted on; the entries come off them, then
every other key under the player's tag. A win entered on a board while this runs is taken off again when recording
it finds the tombstone (``games.settlement``, ``stats.leaderboards``).

The first step begins with a deletion, and every later one only deletes: Redis allows them when it is full
(``maxmemory`` under ``noeviction``), so a player can be erased then too. What is erased leaves the append-only file
at the next rewrite, which ``rewrites`` asks for.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final, NamedTuple
from uuid import UUID

from redis.exceptions import ResponseError

from pyramide.service.accounts.audit import AuditLog
from pyramide.service.accounts.player import Player
from pyramide.service.accounts.players import PlayerStore
from pyramide.service.accounts.ports import PlayerBoards, PlayerGames, PlayerReviews, PlayerStatistics
from pyramide.service.accounts.rewrites import Rewrites
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.outbox import hand_over
from pyramide.service.infra.ratelimit import Limit, RateLimiter
from pyramide.service.infra.redis import RedisClient, raw, storage_full
from pyramide.service.infra.scripts import Script

SCAN_COUNT: Final = 1000
PAGE: Final = 100
log = logging.getLogger("pyramide.service")


class EraseKeys(NamedTuple):
    player: str
    auth: str
    boards: str
    tombstone: str


class EraseArgs(NamedTuple):
    guard_ms: int
    """How long the tombstone stays: longer than any request may still be in flight."""


ERASE: Final = Script("privacy_erase", EraseKeys, EraseArgs)
"""The erasure's first step: settings and token hash go, the tombstone is set, and the boards noted and Redis's
clock are answered (written so that it works even when Redis is full)."""


class PlayerData:
    def __init__(
        self,
        *,
        redis: RedisClient,
        players: PlayerStore,
        games: PlayerGames,
        stats: PlayerStatistics,
        boards: PlayerBoards,
        retry_window_s: int,
        limiter: RateLimiter,
        exports_limit: Limit,
        guard_s: float = 120.0,
        rewrites: Rewrites | None = None,
        audit: AuditLog | None = None,
        reviews: PlayerReviews | None = None,
    ) -> None:
        self.redis = redis
        self.players = players
        self.games = games
        self.stats = stats
        self.boards = boards
        self.reviews = reviews
        self.retry_window_s = retry_window_s
        self.limiter = limiter
        self.exports_limit = exports_limit
        self.guard_ms = max(1, int(guard_s * 1000))
        self.rewrites = rewrites
        self.audit = audit
        self._erase_script = ERASE.load(redis)

    async def export(self, player: Player) -> dict[str, Any]:
        """Everything kept about ``player``: settings, statistics, every game with its record and result, the won
        games as ranked, the leaderboard entries, and what moderators did to the player (the audit log's entries).
        Counted against the player's ``exports`` limit: it reads every game."""
        await self.limiter.check(self.exports_limit, keyspace.player_limit(player.id, self.exports_limit.name))
        return {
            "player": {
                "id": str(player.id),
                "locale": player.locale,
                "explain_errors": player.explain_errors,
                "name": player.name,
                "created_at": player.created_at.isoformat(),
                **({"app": {"id": str(player.app_id), "name": player.app_name}} if player.app_id else {}),
                **({"external_id": player.external_id} if player.app_id else {}),
                **({"banned_by": player.banned_by} if player.banned else {}),
            },
            "statistics": await self.stats.read(player.id),
            "games": await self._games(player),
            "wins": await self._wins(player),
            "leaderboard_entries": await self.boards.entries_of(player.id),
            "entries_kept_by_ban": await self.boards.kept_of(player.id),
            "moderation": [] if self.audit is None else await self.audit.of_player(player.id),
        }

    async def _wins(self, player: Player) -> list[dict[str, Any]]:
        """Every won game as ranked, page after page."""
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            page = await self.stats.wins(player.id, cursor, PAGE)
            found += page.entries
            cursor = page.next_cursor
            if cursor is None:
                return found

    async def _games(self, player: Player) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            entries, cursor = await self.games.list_games(player, "all", cursor, PAGE)
            for entry in entries:
                game = UUID(str(entry["id"]))
                _, result, hints = await self.games.store.settled(player.id, game)
                found.append(
                    {
                        **{k: v for k, v in entry.items() if k != "changed_ms"},
                        "record": await self.games.store.record(player.id, game),
                        "hints": hints,
                        "result": None if result is None else _shown_result(json.loads(result), entry["code"]),
                    }
                )
            if cursor is None:
                return found

    async def erase(self, player: Player, token: str | None) -> None:
        """Delete everything kept about ``player``, for good (see the module); its token stops working, and a retry
        with it answers the same (``token`` ``None``: erased by the operator, no retry to recognise)."""
        keys = EraseKeys(
            player=keyspace.player(player.id),
            auth=keyspace.auth(player.id),
            boards=keyspace.boards(player.id),
            tombstone=keyspace.tombstone(player.id),
        )
        boards, erased_ms = await self._erase_script(keys, EraseArgs(guard_ms=self.guard_ms))
        self.players.forget(player.id)
        await self.boards.remove(player.id, [(raw(c) or b"").decode() for c in boards])
        if self.reviews is not None:
            await self.reviews.forget(player.id)  # before its note goes with the player's keys
        if self.audit is not None:
            await self.audit.forget(player.id)  # the audit log's entries about it, before their list goes
        outbox = keyspace.player_outbox(player.id)
        if player.app_id is not None:  # its events not yet delivered go on, before player.erased, in the app's
            await self._hand_over(outbox, keyspace.app_outbox(player.app_id))
        await self._delete_tagged(player)  # its outbox among them
        await self.redis.zrem(keyspace.EVENTS_DUE, outbox)
        await self.redis.hdel(keyspace.EVENTS_CLAIMS, outbox)
        await self.redis.unlink(keyspace.delivery_cursors(outbox))  # written after the scan, before the outbox went
        if player.create_record:
            await self.redis.unlink(player.create_record)  # createPlayer's sealed answer, in a slot of its own
        try:
            if token is not None:
                await self.redis.set(keyspace.erased_token(token), "1", ex=self.retry_window_s)
        except ResponseError as error:  # erased all the same; a retry with the token is 401 instead of 204
            if not storage_full(error):
                raise
            log.warning("Redis is full: an erased player's retry will not be recognised")
        if self.rewrites is not None:
            self.rewrites.after(int(erased_ms) + self.guard_ms)

    async def _hand_over(self, outbox: str, target: str) -> None:
        """The erased player's undelivered events, to its app's outbox; a full Redis loses them (logged) rather
        than keep the player."""
        try:
            await hand_over(self.redis, outbox, target, now_ms(self.players.clock))
        except ResponseError as error:
            if not storage_full(error):
                raise
            log.warning("Redis is full: an erased player's undelivered events are dropped")

    async def _delete_tagged(self, player: Player) -> None:
        """Every key under the player's tag but the tombstone, which expires by itself: nothing writes new ones any
        more, so one scan finds them all."""
        tombstone = keyspace.tombstone(player.id)
        pattern = keyspace.player_pattern(player.id)
        keys = [(raw(k) or b"").decode() async for k in self.redis.scan_iter(match=pattern, count=SCAN_COUNT)]
        keys = [k for k in keys if k != tombstone]
        for start in range(0, len(keys), SCAN_COUNT):  # all in the player's slot
            await self.redis.unlink(*keys[start : start + SCAN_COUNT])

    async def was_erased(self, token: str) -> bool:
        return raw(await self.redis.get(keyspace.erased_token(token))) is not None


def _shown_result(result: dict[str, Any], code: object) -> dict[str, Any]:
    """A game's kept result as the export shows it: without its ``deal`` (the code its par is looked up by) while
    the game withholds its code (a daily challenge's game before the close: the code deals the face-down cards)."""
    return result if code is not None else {k: v for k, v in result.items() if k != "deal"}
