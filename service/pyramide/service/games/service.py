"""Playing through the store: take the game, let the engine act, save it back with an optimistic compare-and-set.

The game acted on is read from Redis, or is the copy this process kept of what it saved last, which the
compare-and-set confirms (it writes only over exactly the state acted on). Concurrency policy: a request with
``If-Match`` acts only on that version and gets 412 if the game has moved on; a request without it that loses a race
is tried again on the fresh state (the engine re-checks the move there), up to ``Settings.conflict_retries`` times,
then answered 409 ``version_conflict``. Exactly one write succeeds per version, so no update is ever lost.
"""

from __future__ import annotations

import asyncio
import json
import random
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final
from uuid import UUID, uuid4

from pyramide.engine import (
    DRAW,
    RECYCLE,
    UNDO,
    DealCode,
    Feedback,
    Game,
    IllegalMoveError,
    Move,
    RemoveKing,
    RemovePair,
    Rules,
    card_code,
    parse_card,
    parse_move,
    random_deal_code,
    tap_card,
    tap_stock,
)
from pyramide.engine.codes import Code
from pyramide.engine.messages import Locale
from pyramide.engine.taps import end_feedback
from pyramide.engine.taps import feedback as make_feedback
from pyramide.service.deals import WINNABLE_ONLY_ATTEMPTS, Solver
from pyramide.service.deals.schemas import RulesBody
from pyramide.service.errors import DomainError, ErrorCode, MoveRefusedError
from pyramide.service.games.results import settle
from pyramide.service.games.schemas import (
    CardTap,
    ChallengeGameBody,
    CodeGameBody,
    DrawMove,
    KingMove,
    LayoutGameBody,
    PairMove,
    RandomGameBody,
    RecycleMove,
    TapBody,
    UndoMove,
)
from pyramide.service.games.sealed import SealedDeal, SealedDeals
from pyramide.service.games.settlement import Settlement
from pyramide.service.games.snapshots import elapsed_ms, moment, now_ms, shown_code, snapshot_json
from pyramide.service.games.store import GameStore, Listed, derived_id, digest
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.infra import keyspace
from pyramide.service.infra.ratelimit import RateLimiter
from pyramide.service.infra.scripts import Result
from pyramide.service.players import Player
from pyramide.service.status import GameStatus, ListFilter

RETRY_BACKOFF_S = 0.001
LISTS: Final[dict[str, Listed | None]] = {
    "all": None,
    GameStatus.IN_PROGRESS: Listed.OPEN,
    GameStatus.LOST: Listed.OPEN,
    GameStatus.WON: Listed.WON,
    GameStatus.ABANDONED: Listed.ABANDONED,
}
"""The list each status is read from; in the open list, in progress and lost are told apart by the game itself."""


def summary(stored: StoredGame, changed_ms: int) -> dict[str, object]:
    """A game as a list of games shows it."""
    game = stored.game
    status = stored.status.listed
    now = now_ms()
    return {
        "id": stored.id,
        "code": shown_code(stored, now),
        "challenge": stored.challenge,
        "rules": game.rules.to_json(),
        "status": status,
        "score": game.score,
        "moves": game.moves,
        "elapsed_ms": elapsed_ms(stored, now),
        "created_at": moment(stored.created_ms),
        "updated_at": moment(changed_ms),
        "changed_ms": changed_ms,
    }


@dataclass(frozen=True, slots=True)
class Reply:
    """A response as it is sent, and what rebuilds it for a retry with the same Idempotency-Key."""

    created: bool
    """Whether this request dealt the game (answered 201 with its location)."""
    body: bytes
    version: int
    locale: Locale = "hu"
    feedback: Feedback | None = None
    now: int = 0
    kept_more: bool = False
    """Whether this change kept one response more for its game (see ``SaveResult.kept_more``): what the
    per-address allowance of keyed moves counts."""

    def kept(self, fingerprint: str) -> bytes:
        """The head of the kept response: the request's fingerprint and what, with the stored game that the save
        script appends, rebuilds this response byte for byte (see :meth:`from_kept`)."""
        flags = (_EN if self.locale == "en" else 0) | (_CREATED if self.created else 0)
        feedback = b"" if self.feedback is None else _feedback_json(self.feedback)
        status = 201 if self.created else 200  # the stored layout keeps its status field
        return _KEPT.pack(bytes.fromhex(fingerprint)[:16], status, self.now, flags, len(feedback)) + feedback

    @classmethod
    def from_kept(cls, data: bytes, fingerprint: str, game_id: UUID) -> Reply:
        """The response kept for an Idempotency-Key; 409 ``idempotency_key_reused`` for a different request."""
        fp, _status, now, flags, size = _KEPT.unpack_from(data)
        if fp != bytes.fromhex(fingerprint)[:16]:
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED)
        start = _KEPT.size
        feedback = _feedback_from_json(data[start : start + size]) if size else None
        stored = StoredGame.from_bytes(game_id, data[start + size :])
        return reply_for(stored, "en" if flags & _EN else "hu", feedback, created=bool(flags & _CREATED), now=now)


_KEPT = struct.Struct(">16sHQBH")
"""Fingerprint (16 bytes of its SHA-256), status, the moment answered (ms), flags, length of the feedback JSON."""
_EN = 1
_CREATED = 2


def _feedback_json(feedback: Feedback) -> bytes:
    return json.dumps([feedback.code, feedback.params, feedback.always_shown], separators=(",", ":")).encode()


def _feedback_from_json(data: bytes) -> Feedback:
    code, params, always_shown = json.loads(data)
    return Feedback(code, tuple((k, v) for k, v in params), always_shown)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an action did: whether the game changed, the record entry and the feedback to show."""

    changed: bool
    notation: str | None = None
    feedback: Feedback | None = None


Action = Callable[[StoredGame], Outcome]
CreateBody = CodeGameBody | LayoutGameBody | ChallengeGameBody | RandomGameBody


def _rules(body: RulesBody | None) -> Rules:
    return Rules() if body is None else Rules.from_json(body.model_dump())


def deal_for(body: CreateBody) -> DealCode:
    if isinstance(body, ChallengeGameBody):
        raise TypeError("a challenge's deal is sealed: see GameService.create")
    if isinstance(body, CodeGameBody):
        return DealCode.parse(body.code)
    if isinstance(body, LayoutGameBody):
        return DealCode.from_json(body.layout.model_dump(exclude_none=True))
    return random_deal_code(_rules(body.rules))


def reply_for(
    stored: StoredGame, locale: Locale, feedback: Feedback | None, *, created: bool = False, now: int | None = None
) -> Reply:
    now = now_ms() if now is None else now
    body = snapshot_json(stored, locale, feedback, now)
    return Reply(created, body, stored.version, locale, feedback, now)


class GameService:
    def __init__(
        self,
        store: GameStore,
        conflict_retries: int,
        solver: Solver,
        settlement: Settlement,
        limiter: RateLimiter,
        *,
        sealed_deals: SealedDeals | None = None,
    ) -> None:
        self.store = store
        self.sealed_deals = sealed_deals
        self.limiter = limiter
        self.conflict_retries = conflict_retries
        self.solver = solver
        self.settlement = settlement
        self.hints_limit = store.settings.limits.limit("hints")

    async def _deal(self, body: CreateBody) -> DealCode:
        """The deal to play; for ``winnable_only`` the first random deal the solver proves winnable, trying for up to
        the solver's time limit counted from its first answer (starting a cold worker process is not solving, and
        must not use up the time the deals are tried in)."""
        if not (isinstance(body, RandomGameBody) and body.winnable_only):
            return deal_for(body)
        deadline: float | None = None
        for _ in range(WINNABLE_ONLY_ATTEMPTS):
            code = deal_for(body)
            if (await self.solver.analyse(Game(code)))["winnable"]:
                return code
            if deadline is None:
                deadline = time.monotonic() + self.solver.time_limit_s
            elif time.monotonic() > deadline:
                break
        raise DomainError(ErrorCode.WINNABLE_DEAL_NOT_FOUND)

    async def hint(self, player: Player, game_id: UUID) -> dict[str, object]:
        """The next move of the best line from here, and whether the game can still be won."""
        stored = await self.load(player, game_id)
        if stored.sealed(now_ms()):
            raise DomainError(ErrorCode.HINTS_NOT_ALLOWED)
        if stored.status.final:
            raise IllegalMoveError(Code.GAME_OVER)
        await self.limiter.check(self.hints_limit, keyspace.player_limit(player.id, self.hints_limit.name))
        result = await self.solver.for_player(player.id, stored.game)
        await self.store.count_hint(player.id, game_id)
        await self.settlement.stats.count_hint(player.id)
        line = result["line"]
        return {**result, "move": line[0] if line else None}

    async def _sealed(self, body: ChallengeGameBody) -> SealedDeal:
        if self.sealed_deals is None:
            raise DomainError(ErrorCode.CHALLENGE_NOT_FOUND)
        return await self.sealed_deals.open_deal(body.challenge)

    async def create(
        self,
        player: Player,
        body: CreateBody,
        locale: Locale,
        idempotency_key: str | None,
        fingerprint: str,
    ) -> tuple[UUID, Reply]:
        """Deal a game for ``player``: its id and the reply (a retry with the same key gets the first reply). A
        challenge's game is the player's one attempt at it (409 ``challenge_already_played`` for a second)."""
        sealed = await self._sealed(body) if isinstance(body, ChallengeGameBody) else None
        code = sealed.code if sealed is not None else await self._deal(body)
        explain = player.explain_errors if body.explain_errors is None else body.explain_errors
        game_id = derived_id("game", str(player.id), idempotency_key) if idempotency_key else None
        stored = StoredGame(
            id=game_id or uuid4(),
            owner=player.id,
            game=Game(code, explain_errors=explain),
            created_ms=now_ms(),
            challenge=None if sealed is None else sealed.challenge,
            sealed_until_ms=0 if sealed is None else sealed.closes_ms,
        )
        reply = reply_for(stored, locale, None, created=True)
        key = digest(str(player.id), idempotency_key) if idempotency_key else None
        kept = await self.store.create(stored, key, reply.kept(fingerprint) if key else b"", player.token_hash)
        if sealed is not None and self.sealed_deals is not None:
            await self.sealed_deals.joined(sealed.challenge, stored.id)
        if kept is None:
            return stored.id, reply
        if not kept:
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED)
        return stored.id, Reply.from_kept(kept, fingerprint, stored.id)

    async def read(self, player: Player, game_id: UUID, locale: Locale) -> Reply:
        """The game's snapshot now."""
        return reply_for(await self.load(player, game_id), locale, None)

    async def list_games(
        self, player: Player, status: ListFilter, cursor: tuple[int, str] | None, limit: int
    ) -> tuple[list[dict[str, object]], tuple[int, str] | None]:
        """The player's games of ``status`` (``all``, ``in_progress``, ``won``, ``lost``, ``abandoned``), newest
        change first: up to ``limit`` summaries, and where the next page starts (``None`` after the last)."""
        kind = LISTS[status]
        entries: list[dict[str, object]] = []
        position = cursor
        while len(entries) <= limit:
            want = limit + 1 - len(entries)
            batch = await self.store.listed(player.id, kind, position, want)
            states = await self.store.states(player.id, [game for game, _ in batch])
            gone = [game for (game, _), state in zip(batch, states, strict=True) if state is None]
            if gone:
                await self.store.unlist(player.id, gone)  # expired since: they drop out of the lists
            for (game, changed), state in zip(batch, states, strict=True):
                entry = None if state is None else summary(StoredGame.from_bytes(UUID(game), state), changed)
                if entry is not None and (kind is not Listed.OPEN or entry["status"] == status):
                    entries.append(entry)
            if len(batch) < want:
                break
            position = (batch[-1][1], batch[-1][0])
        if len(entries) <= limit:
            return entries, None
        last = entries[limit - 1]
        return entries[:limit], (int(str(last["changed_ms"])), str(last["id"]))

    async def attempt(self, player: Player, challenge: str) -> tuple[UUID, StoredGame | None] | None:
        """The player's game at a daily challenge: its id and the game (``None`` once it is no longer kept);
        ``None`` when the player did not take part."""
        game_id = await self.store.attempt(player.id, challenge)
        if game_id is None:
            return None
        state = await self.store.read(player.id, game_id)
        return game_id, None if state is None else StoredGame.from_bytes(game_id, state)

    async def record(self, player: Player, game_id: UUID) -> tuple[StoredGame, list[Move]]:
        """The game and every move played in it, in order."""
        stored = await self.load(player, game_id)
        return stored, [parse_move(m) for m in await self.store.record(player.id, game_id)]

    async def load(self, player: Player, game_id: UUID) -> StoredGame:
        """The player's game, to read; 404 when the player has no such game."""
        return self._owned(player, game_id, await self.store.read(player.id, game_id))

    @staticmethod
    def _owned(player: Player, game_id: UUID, state: bytes | None) -> StoredGame:
        if state is None:
            raise DomainError(ErrorCode.GAME_NOT_FOUND)
        stored = StoredGame.from_bytes(game_id, state)
        if stored.owner != player.id:
            raise DomainError(ErrorCode.GAME_NOT_FOUND)  # not 403: another player's game does not exist for you
        return stored

    async def act(
        self,
        *,
        player: Player,
        game_id: UUID,
        action: Action,
        locale: Locale,
        if_match: tuple[int, ...] | None,
        idempotency_key: str | None,
        fingerprint: str,
    ) -> Reply:
        """Act on the game and save it with compare-and-set; a lost race is tried again unless ``if_match`` pins
        the version. The first try acts on the game as this process saved it last, when it has it: the save then
        confirms that Redis still holds exactly that state, so a move costs one round trip, not two. Anything
        else (a refusal, a tap that changes nothing, another owner, another version) is answered only from the
        state read from Redis."""
        key = digest(str(player.id), idempotency_key) if idempotency_key else None
        recent = self.store.take_recent(game_id)
        basis = None if recent is None else _Basis(*recent, confirmed=False)
        races = 0
        while True:
            if basis is None:
                state, kept = await self.store.load(player.id, game_id, key, player.token_hash)
                stored = self._owned(player, game_id, state)
                if kept:
                    return Reply.from_kept(kept, fingerprint, game_id)
                basis = _Basis(state or b"", stored, confirmed=True)
            tried = await self._try(
                basis,
                player=player,
                action=action,
                locale=locale,
                if_match=if_match,
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
                if if_match is not None:
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
        action: Action,
        locale: Locale,
        if_match: tuple[int, ...] | None,
        key: str | None,
        fingerprint: str,
    ) -> Reply | bytes | None:
        """One try: the reply, or the state Redis holds when it is not ``basis.state``, or ``None`` when ``basis``
        is an unconfirmed copy that cannot answer by itself."""
        stored = basis.stored
        if not basis.confirmed and (stored.owner != player.id or not _matches(if_match, stored.version)):
            return None
        if not _matches(if_match, stored.version):
            raise DomainError(ErrorCode.PRECONDITION_FAILED, version=str(stored.version))
        was_started = stored.started
        try:
            outcome = action(stored)
        except (IllegalMoveError, MoveRefusedError):
            if basis.confirmed:
                raise
            return None
        if not outcome.changed:
            return reply_for(stored, locale, outcome.feedback) if basis.confirmed else None
        now = _advance(stored)
        if stored.challenge is not None and outcome.notation is not None:
            stored.note_operation(now)
        result = settle(stored, now, player)
        started = stored.started and not was_started
        reply = reply_for(stored, locale, outcome.feedback)
        saved = await self.store.save(
            stored,
            basis.state,
            outcome.notation,
            idempotency=key,
            response=reply.kept(fingerprint) if key else b"",
            result=b"" if result is None else result.to_bytes(),
            changed_ms=now,
            token=player.token_hash,
            pending_since=int(time.time() * 1000) if started or result is not None else "",
        )
        if saved.saved is Result.OK:
            if started or result is not None:
                await self.settlement.record(player.id, stored.id, started, result, saved.hints)
            return replace(reply, kept_more=True) if saved.kept_more else reply
        if saved.saved is Result.KEPT:
            return Reply.from_kept(saved.kept, fingerprint, stored.id)
        if saved.saved is Result.MISSING:
            raise DomainError(ErrorCode.GAME_NOT_FOUND)
        return saved.current


def _matches(if_match: tuple[int, ...] | None, version: int) -> bool:
    return if_match is None or version in if_match


@dataclass(frozen=True, slots=True)
class _Basis:
    """The state a request acts on, as bytes and decoded: read from Redis for this request (``confirmed``), or the
    copy this process saved last, which only the save confirms."""

    state: bytes
    stored: StoredGame
    confirmed: bool


def _advance(stored: StoredGame) -> int:
    """A change: a new version, and the clock's start at the first move and its end at the finish. Returns now."""
    stored.version += 1
    now = now_ms()
    if stored.first_move_ms is None and stored.game.moves > 0:
        stored.first_move_ms = now
    if stored.finished_ms is None and stored.status.final:
        stored.finished_ms = now
    return now


def _guard_open(stored: StoredGame) -> None:
    if stored.abandoned:
        raise IllegalMoveError(Code.GAME_OVER)


def move_from_body(body: PairMove | KingMove | DrawMove | RecycleMove | UndoMove | object) -> Move:
    """The engine's move for a parsed move body; a body of no known kind is 422 ``validation_failed``, never a
    draw (the schema's union refuses one first; this holds if a kind is ever added there and not here)."""
    if isinstance(body, PairMove):
        first, second = (parse_card(c) for c in body.cards)
        return RemovePair(first, second)
    if isinstance(body, KingMove):
        return RemoveKing(parse_card(body.card))
    if isinstance(body, RecycleMove):
        return RECYCLE
    if isinstance(body, UndoMove):
        return UNDO
    if isinstance(body, DrawMove):
        return DRAW
    raise DomainError(ErrorCode.VALIDATION_FAILED)


def move_body(move: Move) -> dict[str, object]:
    """The request body for ``move``: the inverse of :func:`move_from_body`, for clients replaying a record."""
    if isinstance(move, RemovePair):
        return {"type": "pair", "cards": [card_code(c) for c in move.cards]}
    if isinstance(move, RemoveKing):
        return {"type": "king", "card": card_code(move.card)}
    return {"type": {DRAW: "draw", RECYCLE: "recycle", UNDO: "undo"}[move]}


def play_action(move: Move) -> Action:
    def act(stored: StoredGame) -> Outcome:
        _guard_open(stored)
        try:
            stored.game.play(move)
        except IllegalMoveError as refusal:
            shown = make_feedback(refusal.code).shown(stored.game.explain_errors)
            raise MoveRefusedError(refusal, shown) from None
        return Outcome(True, move.notation(), end_feedback(stored.game))

    return act


def tap_action(body: TapBody) -> Action:
    def act(stored: StoredGame) -> Outcome:
        _guard_open(stored)
        game = stored.game
        before = game.selection
        result = tap_card(game, parse_card(body.card)) if isinstance(body, CardTap) else tap_stock(game)
        operation = result.operation
        changed = operation is not None or game.selection != before
        return Outcome(changed, None if operation is None else operation.move.notation(), result.feedback)

    return act


def abandon_action(stored: StoredGame) -> Outcome:
    if stored.status.final:
        raise IllegalMoveError(Code.GAME_OVER)
    stored.abandoned = True
    return Outcome(True, None, make_feedback(Code.GAME_OVER))
