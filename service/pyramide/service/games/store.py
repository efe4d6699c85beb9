"""Games in Redis: atomic compare-and-set saves, the game record, and stored responses for idempotent retries.

Every key of one game carries its owner's hash tag ``{p:<player id>}`` so that they share a Redis Cluster slot with
the player's rate limits and one Lua script can check and write them together: the player's rate limit, the new
state only if Redis still holds exactly the state the request acted on, the record entry, the response kept for its
Idempotency-Key, and the game's result when the change ends it. The token hash compared first is also what makes
an erasure final here: the erasure deletes it in its first step, so a save or creation racing it writes nothing.
Unfinished games expire ``unfinished_ttl_s`` after their last change; won and abandoned games are kept.

A kept response is not the response's bytes but what rebuilds them: a small head (see ``games.Reply.kept``) and the
stored game as it was saved, which the script appends itself, so a kept response costs little more than the game.
"""

from __future__ import annotations

import enum
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final
from uuid import UUID

from redis.commands.core import AsyncScript

from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.stored_game import StoredGame
from pyramide.service.infra.ratelimit import GCRA_LUA, Limit, RateLimitedError, player_limit_key
from pyramide.service.infra.redis import RedisClient, raw, run_script
from pyramide.service.infra.settings import Settings
from pyramide.service.players import BANNED, auth_key
from pyramide.service.stats import pending_key, tombstone_key
from pyramide.service.status import GameStatus

LIST_LUA: Final = """
local function list_game(first, game, now, kind)
  redis.call('ZADD', KEYS[first], now, game)
  for i = first + 1, first + 3 do
    if i - first == tonumber(kind) then
      redis.call('ZADD', KEYS[i], now, game)
    else
      redis.call('ZREM', KEYS[i], game)
    end
  end
end
"""
"""Keeps a game in its owner's lists (``KEYS[first]``: all games; the next three: open, won, abandoned) under the
moment of its last change, in the same script that writes the change."""

_SAVE: Final = (
    GCRA_LUA
    + LIST_LUA
    + """
if redis.call('GET', KEYS[11]) ~= ARGV[10] then return {4, ''} end
local current = redis.call('GET', KEYS[1])
if not current then return {0, ''} end
if ARGV[5] ~= '' then
  local kept = redis.call('GET', KEYS[3])
  if kept then return {2, kept} end
end
if current ~= ARGV[1] then return {-1, current} end
if ARGV[3] ~= '' and LONGEST > 0 and redis.call('LLEN', KEYS[2]) >= LONGEST then return {7, ''} end
local wait = gcra(KEYS[6], INTERVAL, BURST)
if wait > 0 then return {3, wait} end
local ttl = tonumber(ARGV[4])
if ARGV[11] ~= '' then redis.call('ZADD', KEYS[12], ARGV[11], ARGV[7]) end
if ARGV[3] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[3]) end
if ARGV[6] ~= '' then redis.call('SET', KEYS[4], ARGV[6], 'NX') end
if ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[4], ttl)
  redis.call('PEXPIRE', KEYS[5], ttl)
else
  redis.call('SET', KEYS[1], ARGV[2])
  redis.call('PERSIST', KEYS[2])
  redis.call('PERSIST', KEYS[4])
  redis.call('PERSIST', KEYS[5])
end
local grew = 0
if ARGV[5] ~= '' then
  redis.call('SET', KEYS[3], ARGV[5] .. ARGV[2], 'PX', KEPT_MS)
  local prefix = string.sub(KEYS[13], 1, -5) .. 'idem:'
  if redis.call('LLEN', KEYS[13]) < KEPT then grew = 1 end
  redis.call('LPUSH', KEYS[13], string.sub(KEYS[3], #prefix + 1))
  for _, old in ipairs(redis.call('LRANGE', KEYS[13], KEPT, -1)) do redis.call('DEL', prefix .. old) end
  redis.call('LTRIM', KEYS[13], 0, KEPT - 1)
  redis.call('PEXPIRE', KEYS[13], KEPT_MS)
end
list_game(7, ARGV[7], ARGV[8], ARGV[9])
return {1, tonumber(redis.call('GET', KEYS[5]) or '0'), grew}
"""
)
"""Saves a changed game (see :meth:`GameStore.save`). The settings it needs on every call (the moves limit, how
long and how many responses are kept, the longest record) are not arguments but constants of each store's copy
(:func:`save_script`): every argument is encoded again on every move."""


def save_script(settings: Settings) -> str:
    """The save script with ``settings``' constants set in its text."""
    interval, burst = settings.limits.limit("moves").args()
    constants = (
        f"local INTERVAL, BURST, KEPT_MS = {interval}, {burst}, {settings.idempotency_ttl_s * 1000}\n"
        f"local KEPT, LONGEST = {settings.kept_responses_per_game}, {settings.max_game_operations}\n"
    )
    return constants + _SAVE


_CREATE: Final = (
    GCRA_LUA
    + LIST_LUA
    + """
if redis.call('GET', KEYS[8]) ~= ARGV[9] then return {4, ''} end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('GET', KEYS[2]) or ''}
end
if ARGV[10] ~= '' and redis.call('EXISTS', KEYS[9]) == 1 then return {5, ''} end
if tonumber(ARGV[11]) > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', '(' .. ARGV[12])
  if redis.call('ZCARD', KEYS[5]) >= tonumber(ARGV[11]) then return {6, ''} end
end
local wait = gcra(KEYS[3], tonumber(ARGV[5]), tonumber(ARGV[6]))
if wait > 0 then return {3, wait} end
if ARGV[10] ~= '' then redis.call('SET', KEYS[9], ARGV[7], 'PX', ARGV[10]) end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[3] ~= '' then redis.call('SET', KEYS[2], ARGV[3] .. ARGV[1], 'PX', ARGV[4]) end
list_game(4, ARGV[7], ARGV[8], 1)
return {1, ''}
"""
)

_COUNT_HINT: Final = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""
"""One more hint in a game, unless its player is being erased (``KEYS[2]``, the tombstone)."""


class Saved(enum.Enum):
    OK = 1
    CONFLICT = -1
    """Redis holds another state than the one acted on (in ``SaveResult.current``): nothing was written."""
    MISSING = 0
    KEPT = 2
    """A request with the same Idempotency-Key was applied before: its response is in ``SaveResult.kept``."""
    LIMITED = 3
    """The player is over the rate limit: nothing was written (raised as ``RateLimitedError``)."""
    UNAUTHORIZED = 4
    """The token the request came with is no longer the player's: nothing was written (401)."""
    ATTEMPTED = 5
    """The player has an attempt at this daily challenge already: nothing was written (409)."""
    TOO_MANY_UNFINISHED = 6
    """The player has ``max_unfinished_games`` unfinished games already: nothing was written (409)."""
    TOO_LONG = 7
    """The game's record holds ``max_game_operations`` already: nothing was written (409)."""


@dataclass(frozen=True, slots=True)
class SaveResult:
    saved: Saved
    hints: int = 0
    """How many hints the game has used (``OK``)."""
    current: bytes = b""
    """The state Redis holds (``CONFLICT``)."""
    kept: bytes = b""
    """The response kept for the Idempotency-Key (``KEPT``)."""
    kept_more: bool = False
    """Whether the change kept one response more for its game (``OK``, with an Idempotency-Key, on a game holding
    fewer than ``kept_responses_per_game``): what grows Redis, where replacing the oldest does not."""


RECENT_GAMES: Final = 4096


def digest(*parts: str) -> str:
    """A short stable hash, for keys derived from client input (Idempotency-Key) that Redis never sees raw."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def derived_id(*parts: str) -> UUID:
    """A UUID derived from client input: the same Idempotency-Key always names the same new resource."""
    return UUID(bytes=hashlib.sha256("\x1f".join(("pyramide-id", *parts)).encode()).digest()[:16], version=4)


def game_tag_text(player_id: UUID, game_id: str) -> str:
    """The prefix of every key of one game, for a game id as text (as the player's lists hold it)."""
    return f"pyr:{{p:{player_id}}}:g:{game_id}:"


@lru_cache(maxsize=RECENT_GAMES)
def game_tag(player_id: UUID, game_id: UUID) -> str:
    """The prefix of every key of one game: the owner's hash tag puts them in the owner's cluster slot, with the
    player's statistics and rate limits, so one script can check and write them together. A game is found only
    under its owner's tag: another player's request finds nothing. Kept for the games in play, as every request
    names a game's keys several times (``str(UUID)`` is not cheap)."""
    return game_tag_text(player_id, str(game_id))


def game_key(player_id: UUID, game_id: UUID) -> str:
    return game_tag(player_id, game_id) + "state"


def record_key(player_id: UUID, game_id: UUID) -> str:
    return game_tag(player_id, game_id) + "record"


def result_key(player_id: UUID, game_id: UUID) -> str:
    """The game's result for the statistics, written with the state that ends it (see ``results``)."""
    return game_tag(player_id, game_id) + "result"


def hints_key(player_id: UUID, game_id: UUID) -> str:
    return game_tag(player_id, game_id) + "hints"


LIST_TIES: Final = 64
"""Entries read beyond a page, for games changed in the same millisecond as the previous page's last one."""


@lru_cache(maxsize=RECENT_GAMES)
def id_text(game_id: UUID) -> str:
    """A game id as its lists hold it, kept for the games in play."""
    return str(game_id)


class Listed(enum.IntEnum):
    """The list a game is in besides all games: the position of its key after the all-games list."""

    OPEN = 1
    """In progress, or stuck (which undo may still turn back into play)."""
    WON = 2
    ABANDONED = 3


@lru_cache(maxsize=RECENT_GAMES)
def list_keys(player_id: UUID) -> tuple[str, str, str, str]:
    """The player's lists of games, each a sorted set of game ids by the moment of their last change: all, open,
    won, abandoned. Kept in the same scripts that write a game, so listing needs no scan."""
    tag = f"pyr:{{p:{player_id}}}:list:"
    return (f"{tag}all", f"{tag}open", f"{tag}won", f"{tag}abandoned")


_OPEN, _WON, _ABANDONED = int(Listed.OPEN), int(Listed.WON), int(Listed.ABANDONED)


def listed(stored: StoredGame) -> int:
    """The list (a :class:`Listed` value) a game belongs in besides all games."""
    status = stored.status
    if status is GameStatus.ABANDONED:
        return _ABANDONED
    return _WON if status is GameStatus.WON else _OPEN


def attempt_key(player_id: UUID, challenge: str) -> str:
    """The player's one game at a daily challenge (its id), in the player's slot: written in the script that
    creates the game, only if there is none yet."""
    return f"pyr:{{p:{player_id}}}:challenge:{challenge}"


ATTEMPT_KEPT_MS: Final = 40 * 24 * 3600 * 1000
"""How long after its challenge closes an attempt stays noted (the challenge shows it as the player's)."""


def game_idempotency_key(player_id: UUID, game_id: UUID, key_digest: str) -> str:
    return game_tag(player_id, game_id) + "idem:" + key_digest


def kept_keys_key(player_id: UUID, game_id: UUID) -> str:
    """The digests of the game's kept responses, newest first (the save script takes them from the keys, which it
    finds beside this one): only the latest ``kept_responses_per_game`` are kept, so what Idempotency-Keys keep of
    one game is bounded however fast it is played."""
    return game_tag(player_id, game_id) + "kept"


def save_keys(moves: Limit) -> Callable[[UUID, UUID], tuple[str, ...]]:
    """The keys the save script takes but the Idempotency-Key's (third), for a store whose moves limit is
    ``moves``: cached for the games in play, one lookup where a dozen would each hash both ids again."""

    @lru_cache(maxsize=RECENT_GAMES)
    def keys(player_id: UUID, game_id: UUID) -> tuple[str, ...]:
        return (
            game_key(player_id, game_id),
            record_key(player_id, game_id),
            result_key(player_id, game_id),
            hints_key(player_id, game_id),
            player_limit_key(player_id, moves),
            *list_keys(player_id),
            auth_key(player_id),
            pending_key(player_id),
            kept_keys_key(player_id, game_id),
        )

    return keys


class GameStore:
    def __init__(self, redis: RedisClient, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self._save = redis.register_script(save_script(settings))
        self._create = redis.register_script(_CREATE)
        self._count_hint = redis.register_script(_COUNT_HINT)
        self._recent: dict[UUID, tuple[bytes, StoredGame]] = {}
        self._moves = settings.limits.limit("moves")
        self._games = settings.limits.limit("games")
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
        return 0 if stored.status.final else self.settings.unfinished_ttl_s * 1000

    async def read(self, player: UUID, game_id: UUID) -> bytes | None:
        """The stored game, for reading only (no rate limit)."""
        return raw(await self.redis.get(game_key(player, game_id)))

    async def load(
        self, player: UUID, game_id: UUID, idempotency: str | None = None, token: str = ""
    ) -> tuple[bytes | None, bytes | None]:
        """The stored game and, for an Idempotency-Key digest, the response kept for it, to act on, read together
        with the player's ``moves`` limit: a player over it gets ``RateLimitedError`` before anything is tried
        (a read only: what counts against the limit is a change, in the save script), and with the player's
        current token hash: a request whose ``token`` is no longer it is 401."""
        state, kept, cell, current = await self.redis.mget(
            [
                game_key(player, game_id),
                game_idempotency_key(player, game_id, idempotency or "-"),
                player_limit_key(player, self._moves),
                auth_key(player),
            ]
        )
        if raw(current) != token.encode():
            raise DomainError(ErrorCode.PLAYER_BANNED if raw(current) == BANNED else ErrorCode.UNAUTHORIZED)
        if cell is not None:
            wait = self._moves.wait_ms(int(cell), int(time.time() * 1000))
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
        created, kept = await self._run(
            self._create,
            [
                game_key(owner, stored.id),
                game_idempotency_key(owner, stored.id, idempotency or "-"),
                player_limit_key(owner, self._games),
                *list_keys(owner),
                auth_key(owner),
                attempt_key(owner, challenge or "-"),
            ],
            [
                state,
                self._ttl_ms(stored),
                response if idempotency else b"",
                self.settings.idempotency_ttl_s * 1000,
                *self._games.args(),
                id_text(stored.id),
                stored.created_ms,
                token,
                attempt_ttl,
                self.settings.max_unfinished_games,
                stored.created_ms - self.settings.unfinished_ttl_s * 1000,
            ],
        )
        if int(created) == Saved.UNAUTHORIZED.value:
            raise await self._refused(owner)
        if int(created) == Saved.ATTEMPTED.value:
            raise DomainError(ErrorCode.CHALLENGE_ALREADY_PLAYED)
        if int(created) == Saved.LIMITED.value:
            raise RateLimitedError(self._games, int(kept))
        if int(created) == Saved.TOO_MANY_UNFINISHED.value:
            raise DomainError(ErrorCode.TOO_MANY_UNFINISHED_GAMES, limit=str(self.settings.max_unfinished_games))
        if created != 1:
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
        must not change it any more."""
        game_id, owner, state = stored.id, stored.owner, stored.to_bytes()
        keys = self._save_keys(owner, game_id)
        answer = await self._run(
            self._save,
            [*keys[:2], game_idempotency_key(owner, game_id, idempotency or "-"), *keys[2:]],
            [
                basis,
                state,
                notation or "",
                self._ttl_ms(stored),
                response if idempotency else b"",
                result,
                id_text(game_id),
                changed_ms,
                listed(stored),
                token,
                pending_since,
            ],
        )
        outcome, payload = Saved(int(answer[0])), answer[1]
        if outcome is Saved.OK:
            self._remember(stored, state)
            return SaveResult(outcome, hints=int(payload), kept_more=bool(answer[2]))
        if outcome is Saved.CONFLICT:
            return SaveResult(outcome, current=payload)
        if outcome is Saved.LIMITED:
            raise RateLimitedError(self._moves, int(payload))
        if outcome is Saved.UNAUTHORIZED:
            raise await self._refused(owner)
        if outcome is Saved.TOO_LONG:
            raise DomainError(ErrorCode.GAME_TOO_LONG, limit=str(self.settings.max_game_operations))
        return SaveResult(outcome, kept=payload or b"")

    async def _refused(self, player: UUID) -> DomainError:
        """Why a script refused the request's token: the player is banned (403), or the token is not the player's
        any more (401). Asked only then, so the move route pays nothing for bans."""
        banned = raw(await self.redis.get(auth_key(player))) == BANNED
        return DomainError(ErrorCode.PLAYER_BANNED if banned else ErrorCode.UNAUTHORIZED)

    async def _run(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        return await run_script(self.redis, script, keys, args)

    async def attempt(self, player: UUID, challenge: str) -> UUID | None:
        """The player's game at ``challenge``, if the player took part."""
        game = raw(await self.redis.get(attempt_key(player, challenge)))
        return None if game is None else UUID(game.decode())

    async def count_hint(self, player: UUID, game_id: UUID) -> None:
        """One more hint used in this game; it expires with an unfinished game (the save script keeps it in step)."""
        keys = [hints_key(player, game_id), tombstone_key(player)]
        await self._count_hint(keys=keys, args=[self.settings.unfinished_ttl_s * 1000])

    async def settled(self, player: UUID, game_id: UUID) -> tuple[bytes | None, bytes | None, int]:
        """The stored game, its result and its hints, read together (one slot)."""
        state, result, hints = await self.redis.mget(
            [game_key(player, game_id), result_key(player, game_id), hints_key(player, game_id)]
        )
        return raw(state), raw(result), int(hints or 0)

    async def record(self, player: UUID, game_id: UUID) -> list[str]:
        return [
            m.decode() if isinstance(m, bytes) else m
            for m in await self.redis.lrange(record_key(player, game_id), 0, -1)
        ]

    async def listed(
        self, player: UUID, kind: Listed | None, before: tuple[int, str] | None, count: int
    ) -> list[tuple[str, int]]:
        """Up to ``count`` of the player's game ids with the moment of their last change, newest first, in the list
        ``kind`` (``None``: all games), after ``before`` (the last entry of the previous page)."""
        key = list_keys(player)[0 if kind is None else kind.value]
        high: float | str = "+inf" if before is None else before[0]
        rows = await self.redis.zrevrangebyscore(key, high, "-inf", start=0, num=count + LIST_TIES, withscores=True)
        found: list[tuple[str, int]] = []
        for member, score in rows:
            game = member.decode() if isinstance(member, bytes) else str(member)
            if before is not None and int(score) == before[0] and game >= before[1]:
                continue  # on the previous page: equal moments come in descending id order
            found.append((game, int(score)))
        return found[:count]

    async def states(self, player: UUID, games: list[str]) -> list[bytes | None]:
        """The stored games named, ``None`` for each that has expired."""
        if not games:
            return []
        return [raw(s) for s in await self.redis.mget([game_tag_text(player, g) + "state" for g in games])]

    async def unlist(self, player: UUID, games: list[str]) -> None:
        """Take expired games out of the player's lists."""
        for key in list_keys(player):
            await self.redis.zrem(key, *games)
