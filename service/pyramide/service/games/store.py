"""Games in Redis: atomic compare-and-set saves, the game record, and stored responses for idempotent retries.

Every key of one game carries its owner's hash tag ``{p:<player id>}`` so that they share a Redis Cluster slot with
the player's rate limits and one Lua script can check and write them together: the player's rate limit, the new
state only if Redis still holds exactly the state the request acted on, the record entry, the response kept for its
Idempotency-Key, and the game's result when the change ends it. The token hash compared first is also what makes
an erasure final here: the erasure deletes it in its first step, so a save or creation racing it writes nothing.
Unfinished games expire ``unfinished_ttl_s`` after their last change; won and abandoned games are kept.

A kept response is not the response's bytes but what rebuilds them: a small head (see ``games.Reply.kept``) and the
stored game as it was saved, which the script appends itself, so a kept response costs little more than the game.

The scripts' keys and arguments are in ``store_scripts``, the plain reads in ``store_reads``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Final
from uuid import UUID

from pyramide.service.accounts import BANNED
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.store_reads import GameReads, listed
from pyramide.service.games.store_scripts import (
    COUNT_HINT,
    CREATE,
    FINISH,
    RECENT_GAMES,
    SAVE,
    CreateArgs,
    CreateKeys,
    FinishArgs,
    FinishKeys,
    HintArgs,
    HintKeys,
    SaveArgs,
    save_keys,
)
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.ratelimit import RateLimitedError, per_minute
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.infra.scripts import Result
from pyramide.service.infra.settings import Caps, LimitName, RateLimits, Retention


@dataclass(frozen=True, slots=True)
class GameEvent:
    """The event a change that ends an app player's game emits (``events.EventType``: ``game.*``)."""

    type: str
    app: str
    player: str
    data: dict[str, object]


@dataclass(frozen=True, slots=True)
class SaveResult:
    saved: Result
    hints: int = 0
    """How many hints the game has used (``OK``)."""
    current: bytes = b""
    """The state Redis holds (``CONFLICT``)."""
    kept: bytes = b""
    """The response kept for the Idempotency-Key (``KEPT``)."""
    kept_more: bool = False
    """Whether the change kept one response more for its game (``OK``, with an Idempotency-Key, on a game holding
    fewer than ``kept_responses_per_game``): what grows Redis, where replacing the oldest does not."""


def digest(*parts: str) -> str:
    """A short stable hash, for keys derived from client input (Idempotency-Key) that Redis never sees raw."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def derived_id(*parts: str) -> UUID:
    """A UUID derived from client input: the same Idempotency-Key always names the same new resource."""
    return UUID(bytes=hashlib.sha256("\x1f".join(("pyramide-id", *parts)).encode()).digest()[:16], version=4)


@lru_cache(maxsize=RECENT_GAMES)
def id_text(game_id: UUID) -> str:
    """A game id as its lists hold it, kept for the games in play."""
    return str(game_id)


ATTEMPT_KEPT_MS: Final = 40 * 24 * 3600 * 1000
"""How long after its challenge closes an attempt stays noted (the challenge shows it as the player's)."""


class GameStore(GameReads):
    """The game store: :class:`GameReads`, and every write, each one script."""

    def __init__(
        self, redis: RedisClient, retention: Retention, caps: Caps, limits: RateLimits, *, clock: Clock
    ) -> None:
        super().__init__(redis)
        self.retention = retention
        self.caps = caps
        self.limits = limits
        self.clock = clock
        self._moves = per_minute(LimitName.MOVES, limits[LimitName.MOVES])
        interval, burst = self._moves.args()
        self._save = SAVE.load(
            redis,
            INTERVAL=interval,
            BURST=burst,
            KEPT_MS=retention.idempotency_ttl_s * 1000,
            KEPT=caps.kept_responses_per_game,
            LONGEST=caps.max_game_operations,
        )
        self._finish = FINISH.load(
            redis,
            INTERVAL=interval,
            BURST=burst,
            KEPT_MS=retention.idempotency_ttl_s * 1000,
            KEPT=caps.kept_responses_per_game,
            LONGEST=caps.max_game_operations,
        )
        self._create = CREATE.load(redis)
        self._count_hint = COUNT_HINT.load(redis)
        self._recent: dict[UUID, tuple[bytes, StoredGame]] = {}
        self._games = per_minute(LimitName.GAMES, limits[LimitName.GAMES])
        self._save_keys = save_keys(self._moves)

    def take_recent(self, game_id: UUID) -> tuple[bytes, StoredGame] | None:
        """The game as this process saved it last (bytes and decoded), for the caller to change, if it is among the
        last ``RECENT_GAMES`` saved here. Redis stays the authority: another process may have changed the game
        since, and :meth:`save` writes only over exactly these bytes. Taken out, so only one request has it."""
        return self._recent.pop(game_id, None)

    def _remember(self, stored: StoredGame, state: bytes) -> None:
        if len(self._recent) >= RECENT_GAMES:
            del self._recent[next(iter(self._recent))]  # the oldest
        self._recent[stored.id] = (state, stored)

    def _ttl_ms(self, stored: StoredGame) -> int:
        return 0 if stored.status.final else self.retention.unfinished_ttl_s * 1000

    async def load(
        self, player: UUID, game_id: UUID, idempotency: str | None = None, token: str = ""
    ) -> tuple[bytes | None, bytes | None]:
        """The stored game and, for an Idempotency-Key digest, the response kept for it, to act on, read together
        with the player's ``moves`` limit: a player over it gets ``RateLimitedError`` before anything is tried
        (a read only: what counts against the limit is a change, in the save script), and with the player's
        current token hash: a request whose ``token`` is no longer it is 401."""
        state, kept, cell, current = await self.redis.mget(
            [
                keyspace.game_state(player, game_id),
                keyspace.game_idempotency(player, game_id, idempotency or "-"),
                keyspace.player_limit(player, self._moves.name),
                keyspace.auth(player),
            ]
        )
        if raw(current) != token.encode():
            raise DomainError(ErrorCode.PLAYER_BANNED if raw(current) == BANNED else ErrorCode.UNAUTHORIZED)
        if cell is not None:
            wait = self._moves.wait_ms(int(cell), now_ms(self.clock))
            if wait > 0:
                raise RateLimitedError(self._moves, wait)
        return raw(state), raw(kept) if idempotency else None

    async def create(self, stored: StoredGame, idempotency: str | None, response: bytes, token: str) -> bytes | None:
        """Store a new game (counted against its owner's ``games`` limit); if one with this id exists already (a
        retried create), return its kept response. ``response`` is the head of the kept response: the script adds
        the stored game to it. A challenge game is stored only if its player has no attempt at that challenge yet
        (409 ``challenge_already_played``), checked and noted in the same script, as is the player's cap on
        unfinished games (409 ``too_many_unfinished_games``): its open list, less the games expired since their
        last change (dropped from it there), must hold fewer than ``max_unfinished_games``."""
        owner, state = stored.owner, stored.to_bytes()
        challenge = stored.challenge
        attempt_ttl = "" if challenge is None else max(1, stored.sealed_until_ms - stored.created_ms) + ATTEMPT_KEPT_MS
        lists = keyspace.game_lists(owner)
        interval, burst = self._games.args()
        created, kept = await self._create(
            CreateKeys(
                state=keyspace.game_state(owner, stored.id),
                idempotency=keyspace.game_idempotency(owner, stored.id, idempotency or "-"),
                limit=keyspace.player_limit(owner, self._games.name),
                all=lists.all,
                open=lists.open,
                won=lists.won,
                abandoned=lists.abandoned,
                auth=keyspace.auth(owner),
                attempt=keyspace.attempt(owner, challenge or "-"),
            ),
            CreateArgs(
                state=state,
                ttl_ms=self._ttl_ms(stored),
                response=response if idempotency else b"",
                kept_ms=self.retention.idempotency_ttl_s * 1000,
                interval=interval,
                burst=burst,
                game=id_text(stored.id),
                created_ms=stored.created_ms,
                token=token,
                attempt_ttl_ms=attempt_ttl,
                max_unfinished=self.caps.max_unfinished_games,
                expired_before_ms=stored.created_ms - self.retention.unfinished_ttl_s * 1000,
            ),
        )
        outcome = Result(int(created))
        if outcome is Result.UNAUTHORIZED:
            raise await self._refused(owner)
        if outcome is Result.ATTEMPTED:
            raise DomainError(ErrorCode.CHALLENGE_ALREADY_PLAYED)
        if outcome is Result.LIMITED:
            raise RateLimitedError(self._games, int(kept))
        if outcome is Result.TOO_MANY_UNFINISHED:
            raise DomainError(ErrorCode.TOO_MANY_UNFINISHED_GAMES, limit=str(self.caps.max_unfinished_games))
        if outcome is not Result.OK:
            return kept or b""
        self._remember(stored, state)
        return None

    async def save(
        self,
        stored: StoredGame,
        basis: bytes,
        notation: str | None,
        *,
        idempotency: str | None = None,
        response: bytes = b"",
        result: bytes = b"",
        changed_ms: int = 0,
        token: str = "",
        pending_since: int | str = "",
        event: GameEvent | None = None,
    ) -> SaveResult:
        """Write ``stored`` if Redis still holds ``basis`` (the state it was changed from), append ``notation`` to
        the record, keep ``response`` (its head: the script adds the stored game) for the Idempotency-Key and the
        game's ``result`` for the statistics, all at once (and drop the game's kept responses past the latest
        ``kept_responses_per_game``; a game whose record holds ``max_game_operations`` takes no more operations:
        409 ``game_too_long``, nothing written, abandoning still allowed); with an Idempotency-Key already used,
        write nothing and return its kept response. The change counts against the player's ``moves`` limit in the
        same step (``RateLimitedError`` past it: nothing written). A conflict returns the state Redis holds, so a
        caller that acted on an old copy needs no other read to try again. With ``pending_since`` (ms), the change
        makes the game count in the statistics, and the game goes into its player's pending settlements in the same
        step (see ``settlement``). Once saved, ``stored`` belongs to the store (see :meth:`take_recent`): the caller
        must not change it any more. With ``event`` (a change that ends an app player's game), the event goes into
        the player's outbox in the same step; the caller then marks the outbox due (``infra.outbox.mark_due``)."""
        game_id, owner, state = stored.id, stored.owner, stored.to_bytes()
        keys = self._save_keys(owner, game_id)
        if idempotency:
            keys = keys._replace(idempotency=keyspace.game_idempotency(owner, game_id, idempotency))
        args = SaveArgs(
            basis=basis,
            state=state,
            notation=notation or "",
            ttl_ms=self._ttl_ms(stored),
            response=response if idempotency else b"",
            result=result,
            game=id_text(game_id),
            changed_ms=changed_ms,
            listed=listed(stored),
            token=token,
            pending_since=pending_since,
        )
        if event is None:
            answer = await self._save(keys, args)
        else:
            answer = await self._finish(
                FinishKeys(*keys, outbox=keyspace.player_outbox(owner)),
                FinishArgs(*args, event.type, event.app, event.player, json.dumps(event.data)),
            )
        outcome, payload = Result(int(answer[0])), answer[1]
        if outcome is Result.OK:
            self._remember(stored, state)
            return SaveResult(outcome, hints=int(payload), kept_more=bool(answer[2]))
        if outcome is Result.CONFLICT:
            return SaveResult(outcome, current=payload)
        if outcome is Result.LIMITED:
            raise RateLimitedError(self._moves, int(payload))
        if outcome is Result.UNAUTHORIZED:
            raise await self._refused(owner)
        if outcome is Result.TOO_LONG:
            raise DomainError(ErrorCode.GAME_TOO_LONG, limit=str(self.caps.max_game_operations))
        if outcome is Result.EXPIRED:
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_EXPIRED, kept=str(self.caps.kept_responses_per_game))
        return SaveResult(outcome, kept=payload or b"")

    async def _refused(self, player: UUID) -> DomainError:
        """Why a script refused the request's token: the player is banned (403), or the token is not the player's
        any more (401). Asked only then, so the move route pays nothing for bans."""
        banned = raw(await self.redis.get(keyspace.auth(player))) == BANNED
        return DomainError(ErrorCode.PLAYER_BANNED if banned else ErrorCode.UNAUTHORIZED)

    async def count_hint(self, player: UUID, game_id: UUID, version: int) -> bool:
        """One more hint used in this game, unless one was counted at this ``version`` already (a hint asked again on
        the same position is the same hint: counting it twice would charge the player for pressing a button twice).
        Whether it counted; it expires with an unfinished game (the save script keeps it in step)."""
        keys = HintKeys(
            hints=keyspace.game_hints(player, game_id),
            hinted=keyspace.game_hinted(player, game_id),
            tombstone=keyspace.tombstone(player),
        )
        ttl_ms = self.retention.unfinished_ttl_s * 1000
        return Result(int(await self._count_hint(keys, HintArgs(version=version, ttl_ms=ttl_ms)))) is Result.OK
