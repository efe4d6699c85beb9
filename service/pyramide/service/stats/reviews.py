"""The review list: challenge wins faster than a person plays (``stats.fairness``), held off the board until a
moderator accepts them (entered on the board as they would have been) or rejects them (dropped).

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
from typing import Any, Final
from uuid import UUID

from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.stats.fairness import Cadence
from pyramide.service.stats.rankings import Page, RankedLists
from pyramide.service.stats.results import GameResult
from pyramide.service.stats.statistics import tombstone_key

log = logging.getLogger("pyramide.service")
REVIEWS_PER_CHALLENGE: Final = 1000
KEPT_OPERATIONS: Final = 500
"""Operations of a held win whose notation and time a review keeps (a winning line is some 50 to 200): a game may
record up to ``max_game_operations``, and a review must stay small however long the game it holds was."""
PENDING, DECIDED = "0", "1"
_FAR: Final = 10**15
QUEUE, ITEMS, ORDER = "pyr:{reviews}:queue", "pyr:{reviews}:items", "pyr:{reviews}:order"

_HOLD: Final = """
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[4]) then
  local room = false
  for _, old in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
    local member = redis.call('HGET', KEYS[3], old)
    if not member or string.sub(member, 1, 1) == '1' then
      if member then redis.call('ZREM', KEYS[1], member) end
      redis.call('HDEL', KEYS[2], old)
      redis.call('HDEL', KEYS[3], old)
      redis.call('ZREM', KEYS[4], old)
      room = true
      break
    end
  end
  if not room then return -1 end
end
redis.call('ZADD', KEYS[1], 0, ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1])
return 1
"""

_DECIDE: Final = """
local member = redis.call('HGET', KEYS[3], ARGV[1])
if not member then return -1 end
if string.sub(member, 1, 1) ~= '0' then return 0 end
redis.call('ZREM', KEYS[1], member)
redis.call('ZADD', KEYS[1], 0, ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
return 1
"""

_FORGET: Final = """
local member = redis.call('HGET', KEYS[3], ARGV[1])
if member then redis.call('ZREM', KEYS[1], member) end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
"""

_NOTE: Final = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
"""
"""Notes a review among the player's, unless the player is being erased (then nothing is held)."""


def challenge_reviews_key(challenge: str) -> str:
    """A challenge's reviews (ids by the moment held), to keep it within ``REVIEWS_PER_CHALLENGE``."""
    return "pyr:{reviews}:c:" + challenge


def player_reviews_key(player: UUID) -> str:
    """The player's reviews, ``<challenge> <id>``, in the player's slot: for erasure."""
    return f"pyr:{{p:{player}}}:reviews"


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
    def __init__(self, redis: RedisClient, min_move_ms: int) -> None:
        self.redis = redis
        self.min_move_ms = min_move_ms
        self._hold = redis.register_script(_HOLD)
        self._decide = redis.register_script(_DECIDE)
        self._forget = redis.register_script(_FORGET)
        self._note = redis.register_script(_NOTE)
        self._lists = RankedLists(redis)

    async def hold(self, result: GameResult, hints: int, record: list[str], now_ms: int) -> bool:
        """Hold a too-fast challenge win for review, with its record and timings; true when it is held now (false:
        held before, the challenge's list is full of pending reviews, or the player is being erased)."""
        assert result.challenge is not None
        review = str(result.game)
        note = [player_reviews_key(result.player), tombstone_key(result.player)]
        noted = await self._note(keys=note, args=[f"{result.challenge} {review}"])
        if not noted:
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
            "min_move_ms": self.min_move_ms,
            "median_interval_ms": cadence.median_interval_ms,
            "per_move_ms": cadence.per_move_ms,
            "hints": hints,
            "operations": len(record),
            "record": record[:KEPT_OPERATIONS],
            "result": json.loads(replace(result, times=(result.times or [])[:KEPT_OPERATIONS]).to_bytes()),
        }
        keys = [QUEUE, ITEMS, ORDER, challenge_reviews_key(result.challenge)]
        member = queue_member("pending", now_ms, review)
        args: list[str | int] = [review, member, json.dumps(item), REVIEWS_PER_CHALLENGE, now_ms]
        held = int(await self._hold(keys=keys, args=args))
        if held == 1 and await self.redis.exists(tombstone_key(result.player)):
            await self._forget(keys=keys, args=[review])  # erased since the note: its forget found nothing yet
            return False
        if held < 0:
            log.warning("challenge %s: review list full of pending reviews; win %s not held", result.challenge, review)
        return held == 1

    async def get(self, review: UUID) -> dict[str, Any]:
        """One review; 404 ``review_not_found``."""
        item = raw(await self.redis.hget(ITEMS, str(review)))
        if item is None:
            raise DomainError(ErrorCode.REVIEW_NOT_FOUND)
        found: dict[str, Any] = json.loads(item)
        return found

    async def page(self, cursor: str | None, limit: int) -> Page:
        """Reviews pending first (oldest first), then decided ones (latest first)."""
        page = await self._lists.page(QUEUE, ITEMS, cursor, limit)
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
        done = int(await self._decide(keys=[QUEUE, ITEMS, ORDER], args=[str(review), member, json.dumps(item)]))
        if done < 0:
            raise DomainError(ErrorCode.REVIEW_NOT_FOUND)
        if done == 0:  # decided by another moderator in between
            return await self.decide(review, status, actor, reason, now_ms)
        return Decided(item, changed=True)

    @staticmethod
    def result_of(item: dict[str, Any]) -> GameResult:
        """The win a review holds, to enter on its board."""
        return GameResult.from_bytes(json.dumps(item["result"]).encode())

    async def forget(self, player: UUID) -> int:
        """Take away every review of the player (it is being erased); how many there were."""
        noted = await self.redis.smembers(player_reviews_key(player))
        for entry in noted:
            challenge, _, review = (raw(entry) or b"").decode().partition(" ")
            await self._forget(keys=[QUEUE, ITEMS, ORDER, challenge_reviews_key(challenge)], args=[review])
        await self.redis.delete(player_reviews_key(player))
        return len(noted)
