"""Games in Redis: atomic compare-and-set saves, the game record, and stored responses for idempotent retries.

Every key of one game carries the hash tag ``{g:<id>}`` so that they share a Redis Cluster slot and one Lua script
can write them together: the new state only if Redis still holds exactly the state the request acted on, the record
entry, the response kept for its Idempotency-Key, and the game's result when the change ends it. Unfinished games
expire ``unfinished_ttl_s`` after their last change; won and abandoned games are kept.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final
from uuid import UUID

from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from pyramide.service.settings import Settings
from pyramide.service.stored_game import StoredGame

Redis = Any  # redis.asyncio.Redis or redis.asyncio.cluster.RedisCluster: both have the calls used here

_SAVE: Final = """
local current = redis.call('GET', KEYS[1])
if not current then return {0, ''} end
if ARGV[5] ~= '' then
  local kept = redis.call('GET', KEYS[3])
  if kept then return {2, kept} end
end
if current ~= ARGV[1] then return {-1, current} end
local ttl = tonumber(ARGV[4])
if ARGV[3] ~= '' then redis.call('RPUSH', KEYS[2], ARGV[3]) end
if ARGV[7] ~= '' then redis.call('SET', KEYS[4], ARGV[7], 'NX') end
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
if ARGV[5] ~= '' then redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[6]) end
return {1, tonumber(redis.call('GET', KEYS[5]) or '0')}
"""

_CREATE: Final = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {0, redis.call('GET', KEYS[2]) or ''}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[3] ~= '' then redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4]) end
return {1, ''}
"""


class Saved(enum.Enum):
    OK = 1
    CONFLICT = -1
    """Redis holds another state than the one acted on (in ``SaveResult.current``): nothing was written."""
    MISSING = 0
    KEPT = 2
    """A request with the same Idempotency-Key was applied before: its response is in ``SaveResult.kept``."""


@dataclass(frozen=True, slots=True)
class SaveResult:
    saved: Saved
    hints: int = 0
    """How many hints the game has used (``OK``)."""
    current: bytes = b""
    """The state Redis holds (``CONFLICT``)."""
    kept: bytes = b""
    """The response kept for the Idempotency-Key (``KEPT``)."""


RECENT_GAMES: Final = 4096


def digest(*parts: str) -> str:
    """A short stable hash, for keys derived from client input (Idempotency-Key) that Redis never sees raw."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def derived_id(*parts: str) -> UUID:
    """A UUID derived from client input: the same Idempotency-Key always names the same new resource."""
    return UUID(bytes=hashlib.sha256("\x1f".join(("pyramide-id", *parts)).encode()).digest()[:16], version=4)


@lru_cache(maxsize=RECENT_GAMES)
def game_tag(game_id: UUID) -> str:
    """The prefix of every key of one game: its hash tag puts them all in one cluster slot. Kept for the games in
    play, as every request names a game's keys several times (``str(UUID)`` is not cheap)."""
    return f"pyr:{{g:{game_id}}}:"


def game_key(game_id: UUID) -> str:
    return game_tag(game_id) + "state"


def record_key(game_id: UUID) -> str:
    return game_tag(game_id) + "record"


def result_key(game_id: UUID) -> str:
    """The game's result for the statistics, written with the state that ends it (see ``results``)."""
    return game_tag(game_id) + "result"


def hints_key(game_id: UUID) -> str:
    return game_tag(game_id) + "hints"


def game_idempotency_key(game_id: UUID, key_digest: str) -> str:
    return game_tag(game_id) + "idem:" + key_digest


class GameStore:
    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self._save = redis.register_script(_SAVE)
        self._create = redis.register_script(_CREATE)
        self._recent: dict[UUID, tuple[bytes, StoredGame]] = {}

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
        return 0 if stored.finished else self.settings.unfinished_ttl_s * 1000

    async def load(self, game_id: UUID, idempotency: str | None = None) -> tuple[bytes | None, bytes | None]:
        """The stored game and, for an Idempotency-Key digest, the response kept for it."""
        if idempotency is None:
            return await self.redis.get(game_key(game_id)), None
        state, kept = await self.redis.mget([game_key(game_id), game_idempotency_key(game_id, idempotency)])
        return state, kept

    async def create(self, stored: StoredGame, idempotency: str | None, response: bytes) -> bytes | None:
        """Store a new game; if one with this id exists already (a retried create), return its kept response."""
        idem_key = game_idempotency_key(stored.id, idempotency or "-")
        created, kept = await self._run(
            self._create,
            [game_key(stored.id), idem_key],
            [
                stored.to_bytes(),
                self._ttl_ms(stored),
                response if idempotency else b"",
                self.settings.idempotency_ttl_s * 1000,
            ],
        )
        return None if created == 1 else (kept or b"")

    async def save(
        self,
        stored: StoredGame,
        basis: bytes,
        notation: str | None,
        *,
        idempotency: str | None = None,
        response: bytes = b"",
        result: bytes = b"",
    ) -> SaveResult:
        """Write ``stored`` if Redis still holds ``basis`` (the state it was changed from), append ``notation`` to
        the record, keep ``response`` for the Idempotency-Key and the game's ``result`` for the statistics, all at
        once; with an Idempotency-Key already used, write nothing and return its kept response. A conflict
        returns the state Redis holds, so a caller that acted on an old copy needs no other read to try again.
        Once saved, ``stored`` belongs to the store (see :meth:`take_recent`): the caller must not change it any
        more."""
        game_id, state = stored.id, stored.to_bytes()
        saved, payload = await self._run(
            self._save,
            [
                game_key(game_id),
                record_key(game_id),
                game_idempotency_key(game_id, idempotency or "-"),
                result_key(game_id),
                hints_key(game_id),
            ],
            [
                basis,
                state,
                notation or "",
                self._ttl_ms(stored),
                response if idempotency else b"",
                self.settings.idempotency_ttl_s * 1000,
                result,
            ],
        )
        outcome = Saved(int(saved))
        if outcome is Saved.OK:
            self._remember(stored, state)
            return SaveResult(outcome, hints=int(payload))
        if outcome is Saved.CONFLICT:
            return SaveResult(outcome, current=payload)
        return SaveResult(outcome, kept=payload or b"")

    async def _run(self, script: AsyncScript, keys: list[str], args: list[Any]) -> Any:
        """EVALSHA straight through the client (redis-py's ``Script.__call__`` costs an import and a Protocol check
        on every call: a few per cent of a move); loads the script again if the server lost it (restart, failover)."""
        try:
            return await self.redis.evalsha(script.sha, len(keys), *keys, *args)
        except NoScriptError:
            script.sha = await self.redis.script_load(script.script)
            return await self.redis.evalsha(script.sha, len(keys), *keys, *args)

    async def count_hint(self, game_id: UUID) -> None:
        """One more hint used in this game; it expires with an unfinished game (the save script keeps it in step)."""
        key = hints_key(game_id)
        await self.redis.incr(key)
        await self.redis.pexpire(key, self.settings.unfinished_ttl_s * 1000)

    async def settled(self, game_id: UUID) -> tuple[bytes | None, bytes | None, int]:
        """The stored game, its result and its hints, read together (one slot)."""
        state, result, hints = await self.redis.mget([game_key(game_id), result_key(game_id), hints_key(game_id)])
        return state, result, int(hints or 0)

    async def record(self, game_id: UUID) -> list[str]:
        return [m.decode() for m in await self.redis.lrange(record_key(game_id), 0, -1)]
