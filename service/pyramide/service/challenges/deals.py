"""Choosing each daily challenge's deal, once, ahead of its day.

A challenge's deal is the first of its sealed candidates (``<day>/<preset>#0``, ``#1``, …, dealt from the server's
secret) that the solver proves winnable under the preset's rules: an undecided answer counts as not proven. The
choice is kept in Redis with ``SET NX``, so every process and replica plays the same deal even if two chose at
once (they choose the same one: the candidates and the solver are deterministic). Solving stays off the request
path: a background task (:meth:`ChallengeDeals.keep_ahead`) keeps today's and the next ``days_ahead`` days'
challenges of every preset chosen, at the solver's low (public) priority; only a challenge nobody prepared (the very
first day, or after a long outage) is chosen while its first request waits.

Each choice carries its commitment, published from the moment it is kept: the hex SHA-256 of the ASCII bytes
``<code>:<nonce>``, the nonce being 32 random bytes in lowercase hex, drawn once when the choice is made (see
``docs/fair-play.md``). ``SET NX`` keeps the first choice: one kept is never replaced, so neither is its commitment.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Final
from uuid import UUID

from pyramide.engine import DealCode, Game
from pyramide.service.challenges.calendar import ChallengeId, day_of
from pyramide.service.deals import DealSecret, Priority, Solver
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games import SealedDeal
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.infra.tasks import TaskRegistry

log = logging.getLogger("pyramide.service")
RETRY_AFTER_S: Final = 5
REFILL_S: Final = 600
"""How often the background task looks for days still to choose (a new day comes into its window once a day)."""
NONCE_BYTES: Final = 32


def commitment(code: str, nonce: str) -> str:
    """The commitment to ``code``: hex SHA-256 over the ASCII bytes ``<code>:<nonce>`` (nonce in lowercase hex)."""
    return hashlib.sha256(f"{code}:{nonce}".encode("ascii")).hexdigest()


@dataclass(frozen=True, slots=True)
class Chosen:
    """A challenge's deal as chosen: which candidate, its code, and what choosing it took."""

    challenge: ChallengeId
    candidate: int
    code: DealCode
    chosen_ms: int
    solving_ms: int
    """Solver time over every candidate tried."""
    nonce: str | None = None
    """Hex of random bytes drawn with the choice; ``None`` in a choice kept before commitments existed."""
    commitment: str | None = None
    """:func:`commitment` of the code and nonce, as kept: published from the moment the choice is kept."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "candidate": self.candidate,
                "code": str(self.code),
                "chosen_ms": self.chosen_ms,
                "solving_ms": self.solving_ms,
                "nonce": self.nonce,
                "commitment": self.commitment,
            }
        )

    @classmethod
    def from_json(cls, challenge: ChallengeId, data: bytes) -> Chosen:
        fields: dict[str, Any] = json.loads(data)
        code = DealCode.parse(fields["code"])
        nonce, committed = fields.get("nonce"), fields.get("commitment")
        return cls(challenge, fields["candidate"], code, fields["chosen_ms"], fields["solving_ms"], nonce, committed)


class ChallengeDeals:
    """Each challenge's deal: chosen once (see the module), read from Redis after that."""

    def __init__(
        self,
        redis: RedisClient,
        secret: DealSecret,
        solver: Solver,
        presets: tuple[str, ...],
        candidates: int,
        *,
        days_ahead: int = 0,
        clock: Clock,
        tasks: TaskRegistry | None = None,
    ) -> None:
        """``days_ahead``: how many days after today :meth:`keep_ahead` keeps chosen (0: none ahead of its day).
        ``tasks``: where choices run (default: a registry of their own, for a benchmark or a test)."""
        self.redis = redis
        self.clock = clock
        self.secret = secret
        self.solver = solver
        self.presets = presets
        self.candidates = candidates
        self.days_ahead = days_ahead
        self.tasks = TaskRegistry(clock) if tasks is None else tasks
        self._choosing: dict[ChallengeId, asyncio.Task[Chosen]] = {}
        self._ready: set[ChallengeId] = set()
        """Chosen and kept: nothing to prepare."""

    def exists(self, challenge: ChallengeId, now: int) -> bool:
        """A challenge exists for each configured preset, up to ``days_ahead`` days ahead (one still to come is
        shown only once chosen: its commitment, never its deal)."""
        return challenge.preset in self.presets and challenge.day <= self.last_day_ahead(now)

    def last_day_ahead(self, now: int) -> date:
        """The last day kept chosen: ``days_ahead + 1`` after today, so that a day entering the window (at midnight,
        or within ``REFILL_S`` of it) is chosen at least ``days_ahead`` full days before it opens."""
        return day_of(now) + timedelta(days=self.days_ahead + 1 if self.days_ahead > 0 else 0)

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

    async def keep_ahead(self, now: int) -> int:
        """Choose, one after another at the solver's low priority, every challenge from today to
        :meth:`last_day_ahead` not chosen yet; how many were missing."""
        missing = 0
        for offset in range((self.last_day_ahead(now) - day_of(now)).days + 1):
            for preset in self.presets:
                challenge = ChallengeId(day_of(now) + timedelta(days=offset), preset)
                if await self.kept(challenge) is None:
                    missing += 1
                    await asyncio.shield(self.prepare(challenge, Priority.PUBLIC))
        return missing

    async def refill(self) -> float | None:
        """One pass of :meth:`keep_ahead`: a periodic job, every ``REFILL_S`` (``RETRY_AFTER_S`` after a failure)."""
        try:
            await self.keep_ahead(now_ms(self.clock))
        except Exception as error:
            log.warning("choosing the coming challenges failed: %s", error)
            return RETRY_AFTER_S
        return None

    def prepare(self, challenge: ChallengeId, priority: Priority = Priority.PLAYER) -> asyncio.Task[Chosen]:
        """Choose the challenge's deal in the background, once per process at a time."""
        task = self._choosing.get(challenge)
        if task is None:
            task = self.tasks.spawn("challenge choice", self._choose_and_keep(challenge, priority))
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

    async def _choose_and_keep(self, challenge: ChallengeId, priority: Priority) -> Chosen:
        kept = await self.kept(challenge)
        if kept is not None:
            return kept
        chosen = await self.choose(challenge, priority)
        await self.redis.set(keyspace.challenge_deal(str(challenge)), chosen.to_json(), nx=True)
        kept = await self.kept(challenge)
        if kept is None:
            raise RuntimeError(f"the deal of challenge {challenge} vanished from Redis")
        if kept.code == chosen.code:
            log.info("challenge %s: candidate %d chosen in %d ms", challenge, chosen.candidate, chosen.solving_ms)
        return kept

    async def choose(self, challenge: ChallengeId, priority: Priority = Priority.PLAYER) -> Chosen:
        """The first candidate the solver proves winnable (``challenge_not_ready`` if none of ``candidates`` is),
        committed to with a fresh nonce."""
        rules = challenge.rules
        started = time.perf_counter()  # the solver's work, measured: not the service's time
        for candidate in range(self.candidates):
            code = DealCode.for_layout(await self.secret.layout(challenge.identity(candidate)), rules)
            if (await self.solver.analyse(Game(code), priority=priority)).winnable is True:
                solving_ms = round((time.perf_counter() - started) * 1000)
                nonce = secrets.token_hex(NONCE_BYTES)
                committed = commitment(str(code), nonce)
                return Chosen(challenge, candidate, code, now_ms(self.clock), solving_ms, nonce, committed)
        raise DomainError(ErrorCode.CHALLENGE_NOT_READY, retry_after_s=RETRY_AFTER_S)

    async def open_deal(self, challenge: str) -> SealedDeal:
        """The deal of an open challenge, for a player's attempt."""
        now = now_ms(self.clock)
        named = self.named(challenge, now)
        if now < named.opens_ms:
            raise DomainError(ErrorCode.CHALLENGE_NOT_FOUND)
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
