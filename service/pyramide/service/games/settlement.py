"""Counting each game exactly once in the statistics and on the leaderboard, across Redis Cluster slots.

A game's keys share its player's slot, but its deal's leaderboard lives in another, so no single atomic write can
cover them all. Instead, for a change that makes a game count (its first move) or ends it:

1. the game is saved with compare-and-set, and its id goes into the player's ``pending`` set in the same script
   (one slot: the player's); the change that ends it writes the game's result there too, so a result exists
   exactly when the ending state was stored, and a game is pending exactly when such a change was stored;
2. a win is entered on the leaderboard (idempotent: a leaderboard keeps each player's best), or, for a daily
   challenge's win that the fair-play rules hold back (``stats.fairness``), held for review (idempotent: one review
   per game) or left off; a challenge win those rules would enter is first screened by the solver
   (``games.screening``), and then 2 and 3 run in a background task, never on the move's request. The win is
   first taken in the queue of wins to screen (``games.screen_queue``): a screen the solver refused, or a process
   that died mid-screen, leaves it there and pending, and every process's sweep screens it again once it is due;
3. the start or the result is recorded in the player's statistics, and the game leaves ``pending`` in the same
   script (idempotent: a game's state in the statistics only moves forward). A result counts the game as played,
   so a change that both starts and ends a game records only the result.

If the process dies anywhere after 1, the game stays pending; reading the player's statistics first settles every
pending game older than a grace period from what the game's slot says (started? result?), repeating 2 and 3. A
finishing request that is retried or raced by a second client cannot count twice: the compare-and-set lets only one
change end the game, and recording the same result again changes nothing.
"""

from __future__ import annotations

import contextlib
import logging
from uuid import UUID

from redis.exceptions import RedisError

from pyramide.service.errors import DomainError
from pyramide.service.games.screen_queue import ScreenQueue
from pyramide.service.games.screening import Screening
from pyramide.service.games.store import GameStore
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.scripts import Result
from pyramide.service.infra.tasks import TaskRegistry
from pyramide.service.stats import FairPlay, GameResult, HoldReason, Leaderboards, Reviews, StatsStore, Verdict

log = logging.getLogger("pyramide.service")


class Settlement:
    def __init__(
        self,
        redis: RedisClient,
        games: GameStore,
        stats: StatsStore,
        boards: Leaderboards,
        grace_s: float,
        *,
        fair_play: FairPlay | None = None,
        reviews: Reviews | None = None,
        screening: Screening | None = None,
        tasks: TaskRegistry | None = None,
    ) -> None:
        """With ``screening`` and ``tasks`` (the app's), challenge wins are screened in a background task there."""
        self.redis = redis
        self.games = games
        self.clock = games.clock
        self.stats = stats
        self.boards = boards
        self.grace_ms = int(grace_s * 1000)
        self.fair_play = fair_play or FairPlay("any", 0)
        self.reviews = reviews
        self.screening = screening if tasks is not None else None
        self.tasks = tasks
        self.queue = None if self.screening is None else ScreenQueue(redis, self.clock, _lease_s(self.screening))
        self._screening: set[UUID] = set()
        """The games this process is screening now: a reconcile meanwhile does not start a second screen."""

    async def record(self, player: UUID, game: UUID, started: bool, result: GameResult | None, hints: int) -> None:
        """Steps 2 and 3: one round trip for a start or a loss, two for a win; a challenge win to screen, none (the
        background task does them). A failure here loses nothing: the game stays pending and is settled later."""
        try:
            if result is not None:
                verdict = self.fair_play.verdict(result) if result.won else None
                if verdict is Verdict.ENTER and self._to_screen(result):
                    if await self._take(result):
                        self._screen_later(result, hints)
                    return
                if verdict is not None:
                    await self._rank(result, hints, verdict)
                await self._count(result, hints)
            elif started:
                await self.stats.record_start(player, game)
            else:
                await self.redis.zrem(keyspace.pending(player), str(game))
        except RedisError:
            log.warning("statistics of game %s left pending; settled on the player's next statistics read", game)

    async def _count(self, result: GameResult, hints: int) -> None:
        """Step 3: the result in the player's statistics, the game out of ``pending``; a win of a player erased or
        banned meanwhile follows the player."""
        recorded = await self.stats.record_result(result, hints)
        if recorded is Result.ERASED and result.won:
            await self.boards.withdraw(result)  # the player was erased meanwhile
            if self.reviews is not None:
                await self.reviews.forget(result.player)
        elif recorded is Result.BANNED and result.board is not None:
            await self.boards.set_aside(result.player, [result.board])  # banned meanwhile: kept with the ban

    async def _rank(self, result: GameResult, hints: int, verdict: Verdict) -> None:
        """Enter a win on its board, hold it for review, or leave it off, as the fair-play rules' ``verdict`` says."""
        if verdict is Verdict.ENTER:
            await self.boards.enter(result, hints)
        elif verdict is Verdict.REVIEW and self.reviews is not None:
            record = await self.games.record(result.player, result.game)
            await self.reviews.hold(result, hints, record, now_ms(self.clock), reasons=[HoldReason.CADENCE])

    def _to_screen(self, result: GameResult) -> bool:
        """Whether a win the cheap rules would enter is a challenge's, and the screening is on."""
        return self.screening is not None and result.challenge is not None and result.board is not None

    async def _take(self, result: GameResult) -> bool:
        """Whether this process is to screen the win now: neither it nor another process screens it already, and
        it does not wait to be tried again (the queue's sweep takes it then)."""
        assert self.queue is not None
        return result.game not in self._screening and await self.queue.take(result.player, result.game)

    def _screen_later(self, result: GameResult, hints: int) -> None:
        """Start the win's screening and steps 2 and 3 in the background (taken in the queue already)."""
        assert self.tasks is not None
        try:
            task = self.tasks.spawn("screen", self._screen(result, hints))
        except RuntimeError:  # the process is stopping: the win stays pending, screened on a reconcile
            log.warning("win %s left pending: the process is stopping", result.game)
            return
        self._screening.add(result.game)
        task.add_done_callback(lambda _: self._screening.discard(result.game))

    async def _screen(self, result: GameResult, hints: int) -> None:
        """Steps 2 and 3 of a challenge win: the screening's judgement, then the board or the review list, then the
        statistics. A full solver leaves the game pending and due again in the queue soon; a failing Redis leaves
        it pending, due again when its lease runs out."""
        assert self.screening is not None
        assert self.queue is not None
        try:
            record = await self.games.record(result.player, result.game)
            screened = await self.screening.judge(result, record)
            if screened.reasons:
                if self.reviews is not None:
                    held = now_ms(self.clock)
                    await self.reviews.hold(
                        result, hints, record, held, reasons=screened.reasons, screen=screened.figures
                    )
            else:
                await self.boards.enter(result, hints)
            await self._count(result, hints)
            await self.queue.done(result.player, result.game)
        except DomainError as error:
            log.warning("win %s left pending, to be screened again: the solver is busy (%s)", result.game, error.code)
            with contextlib.suppress(RedisError):  # else its lease runs out: screened again a little later
                await self.queue.retry(result.player, result.game)
        except RedisError:
            log.warning("win %s left pending; screened again once its lease runs out", result.game)

    async def sweep(self) -> None:
        """Screens again the wins due in the queue (refused by a busy solver, or left by a process that died), each
        taken by one process; a win settled meanwhile (or its player erased) leaves the queue."""
        assert self.queue is not None
        for player, game in await self.queue.claim():
            if game in self._screening:
                continue
            if await self.redis.zscore(keyspace.pending(player), str(game)) is None:
                await self.queue.done(player, game)
                continue
            started, result, hints = await self._settled(player, game)
            if result is not None and self._to_screen(result) and self.fair_play.verdict(result) is Verdict.ENTER:
                self._screen_later(result, hints)
            else:  # not a win to screen (any more): settled as any game
                await self.record(player, game, started, result, hints)
                await self.queue.done(player, game)

    async def reconcile(self, player: UUID) -> int:
        """Settle every game of ``player`` pending for longer than the grace period; how many were."""
        due = await self.redis.zrangebyscore(keyspace.pending(player), "-inf", now_ms(self.clock) - self.grace_ms)
        for raw in due:
            game = UUID(raw.decode())
            await self.record(player, game, *await self._settled(player, game))
        return len(due)

    async def _settled(self, player: UUID, game: UUID) -> tuple[bool, GameResult | None, int]:
        """What the game's slot says of a pending game: started? its result, if it ended; the hints it took."""
        state, result_bytes, hints = await self.games.settled(player, game)
        stored = StoredGame.from_bytes(game, state) if state is not None else None
        result = GameResult.from_bytes(result_bytes) if result_bytes is not None else None
        if result is not None and result.player != player:
            result = None  # cannot happen through the service; never count another player's game
        started = (stored is not None and stored.owner == player and stored.started) or result is not None
        return started, result, hints


def _lease_s(screening: Screening) -> float:
    """How long a process holds a win it screens: the screen's own limit, with room for the solver's queue."""
    return 4 * screening.time_limit_s + 60
