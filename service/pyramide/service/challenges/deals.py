"""Choosing each daily challenge's deal, once, ahead of its day.

A challenge's deal is the first of its sealed candidates (``<day>/<preset>#0``, ``#1``, …, dealt from the server's
secret) that the solver proves winnable under the preset's rules: an undecided answer counts as not proven. The
choice is kept in Redis with ``SET NX``, so every process and replica plays the same deal even if two chose at
once (they choose the same one: the candidates and the solver are deterministic). Solving stays off the request
path: the first use of a day's challenge starts choosing the next day's in the background; only a challenge nobody
prepared (the very first day, or after a long outage) is chosen while its first request waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Final
from uuid import UUID

from pyramide.engine import DealCode, Game
from pyramide.service.challenges.calendar import ChallengeId, day_of, now_ms
from pyramide.service.deals import DealSecret, Solver
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games import SealedDeal
from pyramide.service.infra import keyspace
from pyramide.service.infra.redis import RedisClient, raw

log = logging.getLogger("pyramide.service")
RETRY_AFTER_S: Final = 5


@dataclass(frozen=True, slots=True)
class Chosen:
    """A challenge's deal as chosen: which candidate, its code, and what choosing it took."""

    challenge: ChallengeId
    candidate: int
    code: DealCode
    chosen_ms: int
    solving_ms: int
    """Solver time over every candidate tried."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "candidate": self.candidate,
                "code": str(self.code),
                "chosen_ms": self.chosen_ms,
                "solving_ms": self.solving_ms,
            }
        )

    @classmethod
    def from_json(cls, challenge: ChallengeId, data: bytes) -> Chosen:
        fields: dict[str, Any] = json.loads(data)
        return cls(
            challenge, fields["candidate"], DealCode.parse(fields["code"]), fields["chosen_ms"], fields["solving_ms"]
        )


class ChallengeDeals:
    """Each challenge's deal: chosen once (see the module), read from Redis after that."""

    def __init__(
        self, redis: RedisClient, secret: DealSecret, solver: Solver, presets: tuple[str, ...], candidates: int
    ) -> None:
        self.redis = redis
        self.secret = secret
        self.solver = solver
        self.presets = presets
        self.candidates = candidates
        self._choosing: dict[ChallengeId, asyncio.Task[Chosen]] = {}
        self._ready: set[ChallengeId] = set()
        """Chosen and kept: nothing to prepare."""

    def exists(self, challenge: ChallengeId, now: int) -> bool:
        """A challenge exists for each configured preset, from the day it opens: none for a day still to come."""
        return challenge.preset in self.presets and challenge.day <= day_of(now)

    def named(self, text: str, now: int) -> ChallengeId:
        """The challenge ``text`` names; 404 ``challenge_not_found`` when there is none."""
        challenge = ChallengeId.parse(text)
        if challenge is None or not self.exists(challenge, now):
            raise DomainError(ErrorCode.CHALLENGE_NOT_FOUND)
        return challenge

    async def chosen(self, challenge: ChallengeId, now: int) -> Chosen:
        """The challenge's deal. Today's is chosen now if it was not chosen ahead (and tomorrow's is started in the
        background either way); an earlier day's that nobody ever played is not there (404)."""
        kept = await self.kept(challenge)
        if challenge.day == day_of(now) and challenge.next_day() not in self._ready:
            self.prepare(challenge.next_day())
        if kept is not None:
            return kept
        if challenge.day != day_of(now):
            raise DomainError(ErrorCode.CHALLENGE_NOT_FOUND)
        try:
            return await asyncio.shield(self.prepare(challenge))
        except DomainError:
            raise DomainError(ErrorCode.CHALLENGE_NOT_READY, retry_after_s=RETRY_AFTER_S) from None

    async def kept(self, challenge: ChallengeId) -> Chosen | None:
        data = raw(await self.redis.get(keyspace.challenge_deal(str(challenge))))
        return None if data is None else Chosen.from_json(challenge, data)

    def prepare(self, challenge: ChallengeId) -> asyncio.Task[Chosen]:
        """Choose the challenge's deal in the background, once per process at a time."""
        task = self._choosing.get(challenge)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._choose_and_keep(challenge))
            self._choosing[challenge] = task
            task.add_done_callback(lambda done: self._done(challenge, done))
        return task

    def _done(self, challenge: ChallengeId, task: asyncio.Task[Chosen]) -> None:
        self._choosing.pop(challenge, None)
        if task.cancelled():
            return
        if task.exception() is None:
            self._ready.add(challenge)
        else:
            log.warning("choosing the deal of challenge %s failed: %s", challenge, task.exception())

    async def _choose_and_keep(self, challenge: ChallengeId) -> Chosen:
        kept = await self.kept(challenge)
        if kept is not None:
            return kept
        chosen = await self.choose(challenge)
        await self.redis.set(keyspace.challenge_deal(str(challenge)), chosen.to_json(), nx=True)
        kept = await self.kept(challenge)
        if kept is None:
            raise RuntimeError(f"the deal of challenge {challenge} vanished from Redis")
        if kept.code == chosen.code:
            log.info("challenge %s: candidate %d chosen in %d ms", challenge, chosen.candidate, chosen.solving_ms)
        return kept

    async def choose(self, challenge: ChallengeId) -> Chosen:
        """The first candidate the solver proves winnable (``challenge_not_ready`` if none of ``candidates`` is)."""
        rules = challenge.rules
        started = time.monotonic()
        for candidate in range(self.candidates):
            code = DealCode.for_layout(await self.secret.layout(challenge.identity(candidate)), rules)
            if (await self.solver.analyse(Game(code))).winnable is True:
                solving_ms = round((time.monotonic() - started) * 1000)
                return Chosen(challenge, candidate, code, now_ms(), solving_ms)
        raise DomainError(ErrorCode.CHALLENGE_NOT_READY, retry_after_s=RETRY_AFTER_S)

    async def open_deal(self, challenge: str) -> SealedDeal:
        """The deal of an open challenge, for a player's attempt."""
        now = now_ms()
        named = self.named(challenge, now)
        if not named.is_open(now):
            raise DomainError(ErrorCode.CHALLENGE_CLOSED)
        chosen = await self.chosen(named, now)
        return SealedDeal(str(named), chosen.code, named.closes_ms)

    async def joined(self, challenge: str, game: UUID) -> None:
        named = ChallengeId.parse(challenge)
        if named is not None:
            await self.redis.sadd(keyspace.challenge_games(str(named)), str(game))

    async def players(self, challenge: ChallengeId) -> int:
        return int(await self.redis.scard(keyspace.challenge_games(str(challenge))))

    async def close(self) -> None:
        """Stop every choice in progress (the app is stopping)."""
        tasks = list(self._choosing.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
