"""Playing a command (:mod:`~pyramide.service.games.commands`) through the store: take the game, let the engine act,
save it back with an optimistic compare-and-set.

The game acted on is read from Redis, or is the copy this process kept of what it saved last, which the compare-and-set
confirms (it writes only over exactly the state acted on). Concurrency policy: a command that expects given
versions (the request's ``If-Match``) acts only on those and is refused ``precondition_failed`` if the game has moved
on; one that expects none and loses a race is tried again on the fresh state (the engine re-checks the move there),
up to ``Settings.conflict_retries`` times, then refused ``version_conflict``. Exactly one write succeeds per version,
so no update is ever lost.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, replace
from uuid import UUID

from pyramide.engine import IllegalMoveError
from pyramide.engine.messages import Locale
from pyramide.service.accounts import Player
from pyramide.service.deals import ParBook
from pyramide.service.errors import DomainError, ErrorCode, MoveRefusedError
from pyramide.service.events import EventType
from pyramide.service.games.access import ChallengeAccess
from pyramide.service.games.commands import Command, Versions
from pyramide.service.games.reading import owned
from pyramide.service.games.replies import Reply, reply_for
from pyramide.service.games.results import settle
from pyramide.service.games.settlement import Settlement
from pyramide.service.games.snapshots import moment
from pyramide.service.games.store import GameEvent, GameStore, digest
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.outbox import mark_due
from pyramide.service.infra.scripts import Result
from pyramide.service.stats import GameResult
from pyramide.service.status import GameStatus

RETRY_BACKOFF_S = 0.001


class GamePlay:
    """Carries out the commands that change a game (see the module's concurrency policy)."""

    def __init__(
        self,
        store: GameStore,
        conflict_retries: int,
        settlement: Settlement,
        pars: ParBook | None = None,
        access: ChallengeAccess | None = None,
    ) -> None:
        self.store = store
        self.clock = store.clock
        self.conflict_retries = conflict_retries
        self.settlement = settlement
        self.pars = pars
        self.access = access or ChallengeAccess()

    async def act(
        self,
        *,
        player: Player,
        game_id: UUID,
        command: Command,
        locale: Locale,
        idempotency_key: str | None,
        fingerprint: str,
    ) -> Reply:
        """Carry out ``command`` and save the game with compare-and-set; a lost race is tried again unless the
        command expects given versions. The first try acts on the game as this process saved it last, when it has
        it: the save then confirms that Redis still holds exactly that state, so a move costs one round trip, not
        two. Anything else (a refusal, a tap that changes nothing, another owner, another version) is answered only
        from the state read from Redis."""
        key = digest(str(player.id), idempotency_key) if idempotency_key else None
        recent = self.store.take_recent(game_id)
        basis = None if recent is None else _Basis(*recent, confirmed=False)
        races = 0
        while True:
            if basis is None:
                state, kept = await self.store.load(player.id, game_id, key, player.token_hash)
                stored = owned(player, game_id, state)
                self.access.check_sees(player, stored, now_ms(self.clock))  # a kept reply shows the game too
                if kept:
                    return Reply.from_kept(kept, fingerprint, game_id)
                basis = _Basis(state or b"", stored, confirmed=True)
            tried = await self._try(
                basis,
                player=player,
                command=command,
                locale=locale,
                key=key,
                fingerprint=fingerprint,
            )
            if isinstance(tried, Reply):
                return tried
            if tried is None:  # the kept copy would not do: read the game
                basis = None
            elif not basis.confirmed:  # the kept copy was out of date: act on the state Redis answered with
                basis = _Basis(tried, StoredGame.from_bytes(game_id, tried), confirmed=True)
            else:
                races += 1
                if command.expected is not None:
                    raise DomainError(
                        ErrorCode.PRECONDITION_FAILED, version=str(StoredGame.from_bytes(game_id, tried).version)
                    )
                if races > self.conflict_retries:
                    raise DomainError(ErrorCode.VERSION_CONFLICT)
                await asyncio.sleep(random.uniform(0, RETRY_BACKOFF_S * 2**races))  # let the winner finish
                basis = None

    async def _try(
        self,
        basis: _Basis,
        *,
        player: Player,
        command: Command,
        locale: Locale,
        key: str | None,
        fingerprint: str,
    ) -> Reply | bytes | None:
        """One try: the reply, or the state Redis holds when it is not ``basis.state``, or ``None`` when ``basis``
        is an unconfirmed copy that cannot answer by itself."""
        stored = basis.stored
        expected = command.expected
        if not basis.confirmed and (stored.owner != player.id or not _matches(expected, stored.version)):
            return None
        self.access.check_sees(player, stored, now_ms(self.clock))  # before any reply shows the game
        if not _matches(expected, stored.version):
            raise DomainError(ErrorCode.PRECONDITION_FAILED, version=str(stored.version))
        was_started = stored.started
        try:
            outcome = command.apply(stored)
        except (IllegalMoveError, MoveRefusedError):
            if basis.confirmed:
                raise
            return None
        if not outcome.changed:
            return reply_for(stored, locale, outcome.feedback, now=now_ms(self.clock)) if basis.confirmed else None
        now = _advance(stored, now_ms(self.clock))
        if stored.challenge is not None and outcome.notation is not None:
            stored.note_operation(now)
        result = settle(stored, now, player)
        started = stored.started and not was_started
        reply = reply_for(stored, locale, outcome.feedback, now=now)
        saved = await self.store.save(
            stored,
            basis.state,
            outcome.notation,
            idempotency=key,
            response=reply.kept(fingerprint) if key else b"",
            result=b"" if result is None else result.to_bytes(),
            changed_ms=now,
            token=player.token_hash,
            pending_since=now if started or result is not None else "",
            event=None if result is None or player.app_id is None else game_event(stored, result, player),
        )
        if saved.saved is Result.OK:
            if result is not None and player.app_id is not None:
                await mark_due(self.store.redis, keyspace.player_outbox(player.id), now)
            if started or result is not None:
                await self.settlement.record(player.id, stored.id, started, result, saved.hints)
            if result is not None or stored.finished_ms == now:
                await self._see_par(stored, now)
            return replace(reply, kept_more=True) if saved.kept_more else reply
        if saved.saved is Result.KEPT:
            return Reply.from_kept(saved.kept, fingerprint, stored.id)
        if saved.saved is Result.MISSING:
            raise DomainError(ErrorCode.GAME_NOT_FOUND)
        return saved.current

    async def _see_par(self, stored: StoredGame, now: int) -> None:
        """A game of a chosen deal just ended: start working its deal's par out in the background again (a task
        started or a place in the backlog, never a wait on Redis or the solver), should the par its deal started
        have expired. A random deal's waits for a read that shows it (its snapshot, record, board, deal or the
        player's statistics: ``docs/par.md``), and a challenge game's for the close, since its par would tell the
        sealed deal's depth."""
        if self.pars is not None and stored.chosen and not stored.sealed(now):
            await self.pars.see(stored.game.code, finished=True)


def game_event(stored: StoredGame, result: GameResult, player: Player) -> GameEvent:
    """The event of a change that ends an app player's game: ``game.won``, ``game.abandoned`` or ``game.lost`` (a
    dead end), with the payload of ``docs/api.md`` (a challenge game's ``code`` is null: sealed until the close;
    ``hints`` is set by the save script from the game's count)."""
    status = stored.status
    kind = (
        EventType.GAME_WON
        if status is GameStatus.WON
        else EventType.GAME_ABANDONED
        if status is GameStatus.ABANDONED
        else EventType.GAME_LOST
    )
    data: dict[str, object] = {
        "game_id": str(stored.id),
        "player_id": str(player.id),
        "external_id": player.external_id,
        "code": None if stored.challenge else str(stored.game.code),
        "challenge": stored.challenge,
        "rules": stored.game.rules.segment,  # the preset as docs/events.md shows it ("N", "2S"), not an object
        "moves": result.moves,
        "undos": result.undos,
        "hints": 0,
        "score": result.score,
        "elapsed_ms": result.elapsed_ms,
        "finished_at": moment(result.finished_ms).isoformat().replace("+00:00", "Z"),
    }
    return GameEvent(kind.value, str(player.app_id), str(player.id), data)


def _matches(expected: Versions, version: int) -> bool:
    return expected is None or version in expected


@dataclass(frozen=True, slots=True)
class _Basis:
    """The state a request acts on, as bytes and decoded: read from Redis for this request (``confirmed``), or the
    copy this process saved last, which only the save confirms."""

    state: bytes
    stored: StoredGame
    confirmed: bool


def _advance(stored: StoredGame, now: int) -> int:
    """A change at ``now``: a new version, and the game clock's start at the first move and its end at the finish.
    Returns now."""
    stored.version += 1
    if stored.first_move_ms is None and stored.game.moves > 0:
        stored.first_move_ms = now
    if stored.finished_ms is None and stored.status.final:
        stored.finished_ms = now
    return now
