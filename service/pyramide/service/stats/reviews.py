"""The review list: challenge wins faster than a person plays (``stats.fairness``) or that the screening held
(``games.screening``), each with its reasons, held off the board until a moderator accepts them (entered on the
board as they would have been) or rejects them (dropped). A review kept before reasons were written held a win for
its cadence alone, and reads so.

Every review lives in one Redis slot (``{reviews}``): a hash of the reviews by id (the game's id, so holding the
same win again, as a repeated settlement does, changes nothing), and a queue whose members sort pending reviews
first, oldest held first, then decided ones, latest decided first (``<0|1>:<15 digits of ms>:<id>``, score 0, so
a page starts after the last member of the previous one, like the ranked lists). Each challenge holds at most
``REVIEWS_PER_CHALLENGE``: when it is full, its oldest decided review makes room; when every one is still
pending, the new win is not held (and logged). A review keeps the first ``KEPT_OPERATIONS`` operations of the
game's record and times. Each player's reviews are noted in the player's slot, so that erasing a player takes them
away.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from typing import Any, Final, NamedTuple
from uuid import UUID

from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.infra.scripts import Result, Script
from pyramide.service.stats.fairness import Cadence, HoldReason
from pyramide.service.stats.rankings import Page, RankedLists
from pyramide.service.stats.results import GameResult

log = logging.getLogger("pyramide.service")
REVIEWS_PER_CHALLENGE: Final = 1000
KEPT_OPERATIONS: Final = 500
"""Operations of a held win whose notation and time a review keeps (a winning line is some 50 to 200): a game may
record up to ``max_game_operations``, and a review must stay small however long the game it holds was."""
PENDING, DECIDED = "0", "1"
_FAR: Final = 10**15


class ReviewKeys(NamedTuple):
    queue: str
    """Every review's member, pending first (a sorted set)."""
    items: str
    """Each review by id (a hash)."""
    order: str
    """Each review's member by id (a hash)."""
    challenge: str
    """The challenge's reviews by the moment held (a sorted set), to keep it within ``REVIEWS_PER_CHALLENGE``."""


def _keys(challenge: str) -> ReviewKeys:
    queue = keyspace.REVIEWS
    return ReviewKeys(queue.queue, queue.items, queue.order, keyspace.challenge_reviews(challenge))


class HoldArgs(NamedTuple):
    review: str
    member: str
    item: str
    per_challenge: int
    held_ms: int


HOLD: Final = Script("review_hold", ReviewKeys, HoldArgs)
"""Holds a win: :attr:`Result.OK`; :attr:`Result.UNCHANGED` when held before; :attr:`Result.FULL` when the
challenge's list is full of pending reviews."""


class DecideArgs(NamedTuple):
    review: str
    member: str
    item: str


DECIDE: Final = Script("review_decide", keyspace.ReviewQueue, DecideArgs)
"""Decides a pending review: :attr:`Result.OK`; :attr:`Result.MISSING`; :attr:`Result.CONFLICT` when decided
meanwhile."""


class ReviewArgs(NamedTuple):
    review: str


FORGET: Final = Script("review_forget", ReviewKeys, ReviewArgs)


class NoteKeys(NamedTuple):
    reviews: str
    tombstone: str


class NoteArgs(NamedTuple):
    entry: str
    """``<challenge> <review id>``."""


NOTE: Final = Script("review_note", NoteKeys, NoteArgs)
"""Notes a review among the player's, unless the player is being erased (:attr:`Result.ERASED`)."""


def queue_member(status: str, moment_ms: int, review: str) -> str:
    """Pending first, oldest held first; then decided, latest decided first."""
    if status == "pending":
        return f"{PENDING}:{moment_ms:015d}:{review}"
    return f"{DECIDED}:{_FAR - moment_ms:015d}:{review}"


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision taken: the review as it now stands, and whether this call took it (``False``: it was taken
    before, the same way)."""

    review: dict[str, Any]
    changed: bool


class Reviews:
    def __init__(self, redis: RedisClient, min_move_ms: int, *, clock: Clock) -> None:
        self.redis = redis
        self.clock = clock
        self.min_move_ms = min_move_ms
        self._hold = HOLD.load(redis)
        self._decide = DECIDE.load(redis)
        self._forget = FORGET.load(redis)
        self._note = NOTE.load(redis)
        self._lists = RankedLists(redis)

    async def hold(
        self,
        result: GameResult,
        hints: int,
        record: list[str],
        now_ms: int,
        *,
        reasons: list[HoldReason],
        screen: dict[str, Any] | None = None,
    ) -> bool:
        """Hold a challenge win for review, with why (``reasons``; the screening's figures as ``screen``), its
        record and timings; true when it is held now (false: held before, the challenge's list is full of pending
        reviews, or the player is being erased)."""
        assert result.challenge is not None
        review = str(result.game)
        note = NoteKeys(reviews=keyspace.player_reviews(result.player), tombstone=keyspace.tombstone(result.player))
        if await self._note(note, NoteArgs(entry=f"{result.challenge} {review}")) != Result.OK:
            return False
        cadence = Cadence.of(result)
        item = {
            "id": review,
            "challenge": result.challenge,
            "player": str(result.player),
            "name": result.name,
            "identity": result.identity,
            "app_id": result.app_id,
            "app": result.app_name,
            "status": "pending",
            "held_ms": now_ms,
            "decided_ms": None,
            "decided_by": None,
            "reason": None,
            "reasons": [str(reason) for reason in reasons],
            "screen": screen,
            "min_move_ms": self.min_move_ms,
            "median_interval_ms": cadence.median_interval_ms,
            "per_move_ms": cadence.per_move_ms,
            "hints": hints,
            "operations": len(record),
            "record": record[:KEPT_OPERATIONS],
            "result": json.loads(replace(result, times=(result.times or [])[:KEPT_OPERATIONS], deal=None).to_bytes()),
        }
        keys = _keys(result.challenge)
        args = HoldArgs(
            review=review,
            member=queue_member("pending", now_ms, review),
            item=json.dumps(item),
            per_challenge=REVIEWS_PER_CHALLENGE,
            held_ms=now_ms,
        )
        held = Result(int(await self._hold(keys, args)))
        if held is Result.OK and await self.redis.exists(keyspace.tombstone(result.player)):
            await self._forget(keys, ReviewArgs(review=review))  # erased since the note: its forget found nothing yet
            return False
        if held is Result.FULL:
            log.warning("challenge %s: review list full of pending reviews; win %s not held", result.challenge, review)
        return held is Result.OK

    async def get(self, review: UUID) -> dict[str, Any]:
        """One review; 404 ``review_not_found``."""
        item = raw(await self.redis.hget(keyspace.REVIEWS.items, str(review)))
        if item is None:
            raise DomainError(ErrorCode.REVIEW_NOT_FOUND)
        found: dict[str, Any] = json.loads(item)
        return found

    async def page(self, cursor: str | None, limit: int) -> Page:
        """Reviews pending first (oldest first), then decided ones (latest first)."""
        page = await self._lists.page(keyspace.REVIEWS.queue, keyspace.REVIEWS.items, cursor, limit)
        for entry in page.entries:
            entry.pop("rank", None)
        return page

    async def decide(self, review: UUID, status: str, actor: str, reason: str, now_ms: int) -> Decided:
        """Accept or reject a pending review (``status``: ``accepted`` or ``rejected``). Deciding it again the same
        way changes nothing; the other way is 409 ``review_already_decided``."""
        item = await self.get(review)
        if item["status"] != "pending":
            if item["status"] == status:
                return Decided(item, changed=False)
            raise DomainError(ErrorCode.REVIEW_ALREADY_DECIDED)
        item |= {"status": status, "decided_ms": now_ms, "decided_by": actor, "reason": reason}
        member = queue_member(status, now_ms, str(review))
        args = DecideArgs(review=str(review), member=member, item=json.dumps(item))
        done = Result(int(await self._decide(keyspace.REVIEWS, args)))
        if done is Result.MISSING:
            raise DomainError(ErrorCode.REVIEW_NOT_FOUND)
        if done is Result.CONFLICT:  # decided by another moderator in between
            return await self.decide(review, status, actor, reason, now_ms)
        return Decided(item, changed=True)

    @staticmethod
    def result_of(item: dict[str, Any]) -> GameResult:
        """The win a review holds, to enter on its board."""
        return GameResult.from_bytes(json.dumps(item["result"]).encode())

    async def forget(self, player: UUID) -> int:
        """Take away every review of the player (it is being erased); how many there were."""
        noted = await self.redis.smembers(keyspace.player_reviews(player))
        for entry in noted:
            challenge, _, review = (raw(entry) or b"").decode().partition(" ")
            await self._forget(_keys(challenge), ReviewArgs(review=review))
        await self.redis.delete(keyspace.player_reviews(player))
        return len(noted)
