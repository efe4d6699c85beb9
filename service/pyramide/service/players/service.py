"""Anonymous players and their bearer tokens.

A token is ``<player id>.<secret>``: both random, neither derived from anything a client sends. Redis keeps only the
SHA-256 of the secret, in the player's hash ``pyr:{p:<id>}:player``. A player that has never finished a game expires
``player_idle_ttl_s`` after its last request (its statistics with it); finishing a game keeps it for good.

Creating a player with an ``Idempotency-Key`` keeps the response for retries, and the response holds the token, so it
is kept sealed: under ``pyr:{ip:<SHA-256 of the key>}`` (the key itself is never stored) and encrypted with AES-GCM
under a key derived from the Idempotency-Key by HKDF. Only a caller holding the Idempotency-Key finds the record and
can read it; Redis cannot. That is also why the key must carry at least 128 bits (see ``schemas``): it is the only
secret between a retry and the token. The record expires with the idempotency window.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Final
from uuid import UUID, uuid4

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from redis.exceptions import ResponseError

from pyramide.engine.messages import Locale
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra.redis import RedisClient, raw, storage_full
from pyramide.service.infra.settings import Settings
from pyramide.service.stats import FOLLOW_PLAYER_LUA, player_key, stats_keys, tombstone_key

_AUTHENTICATE: Final = (
    FOLLOW_PLAYER_LUA
    + """
local fields = redis.call('HGETALL', KEYS[1])
local hash = redis.call('HGET', KEYS[1], 'token_hash')
if hash and redis.call('EXISTS', KEYS[#KEYS]) == 0 then redis.call('SET', KEYS[#KEYS], hash) end
if #fields > 0 and redis.call('PTTL', KEYS[1]) > 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  follow_player(KEYS[1], #KEYS)
elseif #fields > 0 and redis.call('PTTL', KEYS[#KEYS - 1]) > 0 then
  redis.call('PERSIST', KEYS[#KEYS - 1])
end
return fields
"""
)
_INSERT: Final = """
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[1])
return 1
"""
_ROTATE: Final = """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'KEEPTTL')
redis.call('HSET', KEYS[1], 'token_hash', ARGV[2])
if ARGV[3] ~= '' then
  local previous = redis.call('HGET', KEYS[1], 'rotate_record')
  if previous and previous ~= KEYS[3] then redis.call('DEL', previous) end
  redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4])
  redis.call('HSET', KEYS[1], 'rotate_record', KEYS[3])
end
return 1
"""
"""Replaces the token's hash only if it is still the one the request authenticated with: of two rotations at once,
one wins and the other is refused. Keeps the sealed answer of the latest rotation only (``rotate_record``, in the
player's slot): an earlier one's retry holds a token that no longer works, and its answer a token replaced since, so
keeping it would serve no one, and rotating with fresh keys in a loop would fill Redis for 24 hours."""
_CHANGE: Final = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""
"""Changes fields of a player that still exists: a change racing the player's erasure (or expiry) must not bring
back a hash, without a time to live, that names the erased player."""
_BAN: Final = """
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
if ARGV[4] == '1' or redis.call('HEXISTS', KEYS[1], 'banned_ms') == 0 then
  redis.call('HSET', KEYS[1], 'banned_by', ARGV[3])
end
redis.call('HSET', KEYS[1], 'banned_ms', ARGV[1])
redis.call('SET', KEYS[2], ARGV[2], 'KEEPTTL')
return redis.call('HGET', KEYS[1], 'banned_by') or 'operator'
"""
"""Bans a player that exists and is not being erased: the flag in its settings (read by every route that reads
the player from Redis) and :data:`BANNED` in place of its token hash (compared by every game script, so the move
route refuses at once in every process, at no extra cost). The ban remembers who imposed it (``banned_by``): the
first banner, unless the operator bans again, who then owns it. Answers who owns the ban now (0: no such player)."""
_UNBAN: Final = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local was = redis.call('HEXISTS', KEYS[1], 'banned_ms')
if was == 1 and ARGV[2] ~= '1' and redis.call('HGET', KEYS[1], 'banned_by') ~= ARGV[1] then return 3 end
redis.call('HDEL', KEYS[1], 'banned_ms', 'banned_by')
local hash = redis.call('HGET', KEYS[1], 'token_hash')
if hash then redis.call('SET', KEYS[2], hash, 'KEEPTTL') end
return 1 + was
"""
"""Lifts a ban, when the caller may: the operator any ban, an app only one it imposed itself (a ban with no
``banned_by``, from before it was kept, is the operator's). The flag goes and the player's current token hash is
back where the game scripts compare it. 0: no such player; 1: it was not banned; 2: lifted; 3: not the caller's
ban to lift."""
_NONCE_BYTES: Final = 12
BANNED: Final = b"banned"
"""What :func:`auth_key` holds while the player is banned: never the hash of a token (64 hex digits)."""


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_hash(token: str) -> str:
    """What Redis keeps of a token: the SHA-256 of its secret part."""
    return _hash(token.partition(".")[2])


@lru_cache(maxsize=4096)
def audit_key(player_id: UUID) -> str:
    """What moderators did to the player (``moderation.AuditLog``), in its slot: it lives as long as the player
    (renewed with it by every authentication) and goes with its erasure."""
    return f"pyr:{{p:{player_id}}}:audit"


def auth_key(player_id: UUID) -> str:
    """The hash of the player's current token, beside its settings: the game scripts check it on every change, so
    a replaced token stops working at once in every process, whatever a process remembers of its player."""
    return f"pyr:{{p:{player_id}}}:auth"


@dataclass(frozen=True, slots=True)
class Player:
    id: UUID
    locale: Locale
    explain_errors: bool
    created_ms: int
    name: str | None = None
    """Shown beside the player's wins on leaderboards; ``None``: none chosen."""
    token_hash: str = ""
    """The hash of the token this request authenticated with (see :func:`auth_key`)."""
    create_record: str | None = None
    """Where createPlayer's sealed answer for a retry is kept, when it was created with an Idempotency-Key."""
    app_id: UUID | None = None
    """The app whose user this player is (see ``apps``); ``None``: an anonymous player."""
    app_name: str | None = None
    """That app's name when the player was bound to it (shown beside the player's board entries)."""
    external_id: str | None = None
    """The app's own id for its user (``Pyramide-Player``)."""
    banned: bool = False
    """A moderator has banned the player (see ``moderation``): every player route but export and erasure is 403."""
    banned_by: str | None = None
    """Who imposed the ban in force: ``operator`` or ``app:<id>`` (the audit log's actor); ``None`` when not banned."""

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created_ms / 1000, UTC)

    def fields(self) -> dict[str, str]:
        return {
            "locale": self.locale,
            "explain_errors": "1" if self.explain_errors else "0",
            "created_ms": str(self.created_ms),
            **({"name": self.name} if self.name else {}),
            **(self._app_fields() if self.app_id else {}),
        }

    def _app_fields(self) -> dict[str, str]:
        return {"app_id": str(self.app_id), "app_name": self.app_name or "", "external_id": self.external_id or ""}


def _player(player_id: UUID, fields: dict[bytes, bytes]) -> Player:
    locale: Locale = "en" if fields.get(b"locale") == b"en" else "hu"
    name = fields.get(b"name")
    return Player(
        player_id,
        locale,
        fields.get(b"explain_errors") == b"1",
        int(fields.get(b"created_ms", b"0")),
        name.decode() if name else None,
        fields.get(b"token_hash", b"").decode(),
        (fields.get(b"create_record") or b"").decode() or None,
        *_app_binding(fields),
        b"banned_ms" in fields,
        _banned_by(fields),
    )


def _banned_by(fields: dict[bytes, bytes]) -> str | None:
    """Who owns the player's ban; a ban kept from before owners were kept is the operator's."""
    if b"banned_ms" not in fields:
        return None
    return (fields.get(b"banned_by") or b"operator").decode()


def _app_binding(fields: dict[bytes, bytes]) -> tuple[UUID | None, str | None, str | None]:
    """An app player's binding (app id, app name, external id), read from its hash; ``None`` for an anonymous one."""
    app = fields.get(b"app_id")
    if not app:
        return None, None, None
    return UUID(app.decode()), fields.get(b"app_name", b"").decode(), fields.get(b"external_id", b"").decode()


class SealedCreate:
    """The kept response of one ``createPlayer`` Idempotency-Key: where it is kept and how it is sealed."""

    def __init__(self, idempotency_key: str, purpose: bytes = b"create-player", place: str = "ip") -> None:
        secret = idempotency_key.encode()
        lookup = hashlib.sha256(b"pyramide:" + purpose + b"\x1f" + secret).hexdigest()
        self.key = f"pyr:{{{place}:{lookup}}}" if place == "ip" else f"pyr:{{{place}}}:sealed:{lookup}"
        self._aad = lookup.encode()
        derive = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"pyramide", info=purpose + b" response")
        self._aead = AESGCM(derive.derive(secret))

    @classmethod
    def rotation(cls, old_token: str, idempotency_key: str) -> SealedCreate:
        """The kept response of a token rotation: in the player's slot, found and opened only with both the token it
        replaced and the Idempotency-Key (a retry after a lost answer holds both; no one else does)."""
        player = old_token.partition(".")[0]
        with contextlib.suppress(ValueError):
            player = str(UUID(player))  # the player's slot, however the token spells its id
        return cls(f"{old_token}\x1f{idempotency_key}", b"rotate-token", f"p:{player}")

    def seal(self, fingerprint: str, player: Player, token: str) -> bytes:
        plain = json.dumps({"fp": fingerprint, "id": str(player.id), "token": token, **player.fields()}).encode()
        nonce = os.urandom(_NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plain, self._aad)

    def open(self, sealed: bytes, fingerprint: str) -> tuple[Player, str]:
        """The player and token kept; 409 ``idempotency_key_reused`` when the kept request was another one."""
        try:
            plain = self._aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], self._aad)
        except InvalidTag:
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED) from None
        kept = json.loads(plain)
        if not hmac.compare_digest(kept.pop("fp"), fingerprint):
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED)
        token = kept.pop("token")
        player_id = UUID(kept.pop("id"))
        return _player(player_id, {k.encode(): v.encode() for k, v in kept.items()}), token


AUTH_CACHE_S = 10.0
AUTH_CACHE_SIZE = 10_000


class PlayerStore:
    """Players in Redis. Authenticated players are remembered in this process for ``AUTH_CACHE_S`` seconds, so a
    move costs no extra Redis round trip for its token; a settings change made through another process shows
    here within that time."""

    def __init__(self, redis: RedisClient, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings
        self._authenticate_script = redis.register_script(_AUTHENTICATE)
        self._insert_script = redis.register_script(_INSERT)
        self._rotate_script = redis.register_script(_ROTATE)
        self._change_script = redis.register_script(_CHANGE)
        self._ban_script = redis.register_script(_BAN)
        self._unban_script = redis.register_script(_UNBAN)
        self._known: dict[str, tuple[float, Player]] = {}

    async def create(
        self,
        locale: Locale,
        explain_errors: bool,
        idempotency_key: str | None = None,
        fingerprint: str = "",
        name: str | None = None,
    ) -> tuple[Player, str]:
        """A new player and its token; with an Idempotency-Key used before for the same request, that player and
        the same token (409 ``idempotency_key_reused`` for a different request). Concurrent requests with one key
        all get the one player that was kept first: each creates a player, only one keeps its record, and the
        others delete theirs (settings and token hash) before answering with the kept one, so every token answered
        works and no key of a player no one holds a token of is left behind."""
        player = Player(uuid4(), locale, explain_errors, int(time.time() * 1000), name)
        if idempotency_key is None:
            return player, await self._insert(player)
        sealed = SealedCreate(idempotency_key)
        kept = raw(await self.redis.get(sealed.key))
        if kept is not None:
            return sealed.open(kept, fingerprint)
        token = await self._insert(player)
        ttl_ms = self.settings.idempotency_ttl_s * 1000
        if await self.redis.set(sealed.key, sealed.seal(fingerprint, player, token), nx=True, px=ttl_ms):
            await self._change(player.id, {"create_record": sealed.key})
            return player, token
        await self.redis.delete(player_key(player.id), auth_key(player.id))
        kept = raw(await self.redis.get(sealed.key))
        if kept is None:  # kept and expired in between: not seen in practice, but never answer a deleted player
            raise DomainError(ErrorCode.VERSION_CONFLICT)
        return sealed.open(kept, fingerprint)

    async def _insert(self, player: Player) -> str:
        """Store ``player`` with a fresh token's hash; the token."""
        token = f"{player.id}.{secrets.token_urlsafe(32)}"
        fields = {"token_hash": token_hash(token), **player.fields()}
        args = [
            str(self.settings.player_idle_ttl_s * 1000),
            fields["token_hash"],
            *(str(item) for pair in fields.items() for item in pair),
        ]
        await self._insert_script(keys=[player_key(player.id), auth_key(player.id)], args=args)
        return token

    async def insert_bound(self, app_id: UUID, app_name: str, external_id: str) -> Player:
        """A new player bound to an app's user, with createPlayer's defaults and a random token no one is given:
        its hash sits at :func:`auth_key`, which the game scripts compare with the request's on every change, and
        the app's requests carry it as :attr:`Player.token_hash` (so erasure, and a ban that replaces it, work as
        for any player)."""
        player = Player(uuid4(), "hu", False, int(time.time() * 1000), None, "", None, app_id, app_name, external_id)
        token = await self._insert(player)
        return replace(player, token_hash=token_hash(token))

    async def discard(self, player_id: UUID) -> None:
        """Delete a player no one was given (an app player that lost the race to be bound first)."""
        await self.redis.delete(player_key(player_id), auth_key(player_id))

    async def load(self, player_id: UUID, *, remembered: bool = False) -> Player | None:
        """The player ``player_id`` for a request authenticated otherwise (an app's key, a session), with the hash
        of its current token as :attr:`Player.token_hash`; renews its idle time like :meth:`authenticate`.
        ``remembered``: as for :meth:`authenticate`."""
        cache_key = f"id:{player_id}"
        known = self._known.get(cache_key)
        now = time.monotonic()
        if remembered and known is not None and now - known[0] < AUTH_CACHE_S:
            return known[1]
        fields = await self._touch(player_id)
        if not fields.get(b"token_hash"):
            return None
        player = _player(player_id, fields)
        if len(self._known) >= AUTH_CACHE_SIZE:
            self._known.clear()
        self._known[cache_key] = (now, player)
        return player

    async def get(self, player_id: UUID) -> Player | None:
        fields = await self.redis.hgetall(player_key(player_id))
        return _player(player_id, fields) if fields else None

    async def _touch(self, player_id: UUID) -> dict[bytes, bytes]:
        """The player's hash, its idle time renewed (with the keys that follow it) in the same script; while Redis is
        full, read only (the idle time is not renewed)."""
        keys = [player_key(player_id), *stats_keys(player_id), audit_key(player_id), auth_key(player_id)]
        try:
            flat = await self._authenticate_script(keys=keys, args=[self.settings.player_idle_ttl_s * 1000])
            return dict(zip(flat[::2], flat[1::2], strict=True))
        except ResponseError as error:
            if not storage_full(error):
                raise
            return await self.redis.hgetall(keys[0])

    async def authenticate(self, token: str, *, remembered: bool = False) -> Player | None:
        """The token's player, or ``None`` for a missing, malformed or wrong token (compared in constant time).
        With ``remembered``, a player this process authenticated in the last ``AUTH_CACHE_S`` seconds is taken as
        it was: only for routes whose store checks the token itself on every access (see :func:`auth_key`)."""
        cache_key = _hash(token)
        known = self._known.get(cache_key)
        now = time.monotonic()
        if remembered and known is not None and now - known[0] < AUTH_CACHE_S:
            return known[1]
        player = await self._authenticate(token)
        if player is not None:
            if len(self._known) >= AUTH_CACHE_SIZE:
                self._known.clear()
            self._known[cache_key] = (now, player)
        return player

    async def _authenticate(self, token: str) -> Player | None:
        """Reads the player and, for one that has not finished a game, starts its idle time afresh."""
        player_text, _, secret = token.partition(".")
        try:
            player_id = UUID(player_text)
        except ValueError:
            return None
        fields = await self._touch(player_id)
        expected = fields.get(b"token_hash", b"").decode()
        if not expected or not secret or not hmac.compare_digest(expected, _hash(secret)):
            return None
        return _player(player_id, fields)

    async def rotate(self, old_token: str, idempotency_key: str | None, fingerprint: str) -> str:
        """A new token for the player of ``old_token``, which stops working at once (401 ``unauthorized`` for a
        token that does not work). With an Idempotency-Key, the answer is kept, sealed, for a retry that holds
        both the old token and the key (409 ``idempotency_key_reused`` for another request)."""
        sealed = None if idempotency_key is None else SealedCreate.rotation(old_token, idempotency_key)
        if sealed is not None:
            kept = raw(await self.redis.get(sealed.key))
            if kept is not None:
                return sealed.open(kept, fingerprint)[1]
        player = await self._authenticate(old_token)
        if player is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        if player.banned:
            raise DomainError(ErrorCode.PLAYER_BANNED)
        token = f"{player.id}.{secrets.token_urlsafe(32)}"
        record = b"" if sealed is None else sealed.seal(fingerprint, player, token)
        unused = f"pyr:{{p:{player.id}}}:sealed:-"  # no record to keep, but a key in the player's slot
        keys = [player_key(player.id), auth_key(player.id), unused if sealed is None else sealed.key]
        args: list[str | bytes | int] = [
            token_hash(old_token),
            token_hash(token),
            record,
            self.settings.idempotency_ttl_s * 1000,
        ]
        if not await self._rotate_script(keys=keys, args=args):
            kept = None if sealed is None else raw(await self.redis.get(sealed.key))
            if kept is None or sealed is None:
                raise DomainError(ErrorCode.UNAUTHORIZED)  # another rotation replaced this token first
            return sealed.open(kept, fingerprint)[1]
        self.forget(player.id)
        return token

    async def _change(self, player_id: UUID, fields: dict[str, str]) -> bool:
        """Set ``fields`` of the player's hash if it still exists; whether it did."""
        args = [item for pair in fields.items() for item in pair]
        return bool(await self._change_script(keys=[player_key(player_id)], args=args))

    async def ban(self, player_id: UUID, at_ms: int, actor: str, *, by_operator: bool) -> str | None:
        """Ban the player in every process at once (see :data:`BANNED`) on behalf of ``actor`` (``operator`` or
        ``app:<id>``); who owns the ban now, ``None`` when there is no such player (or it is being erased). Banning
        again changes nothing but the moment (and the owner, when the operator bans)."""
        keys = [player_key(player_id), auth_key(player_id), tombstone_key(player_id)]
        args: list[str | bytes | int] = [at_ms, BANNED, actor, "1" if by_operator else "0"]
        owner = await self._ban_script(keys=keys, args=args)
        self.forget(player_id)
        return None if owner == 0 else (raw(owner) or b"operator").decode()

    async def unban(self, player_id: UUID, actor: str, *, by_operator: bool) -> bool | None:
        """Lift the player's ban: true when it was banned, false when it was not, ``None`` when there is no such
        player; 403 ``forbidden`` when ``actor`` is an app that did not impose it. Its current token works again at
        once in every process."""
        keys = [player_key(player_id), auth_key(player_id)]
        answer = int(await self._unban_script(keys=keys, args=[actor, "1" if by_operator else "0"]))
        self.forget(player_id)
        if answer == 3:
            raise DomainError(ErrorCode.FORBIDDEN)
        return None if answer == 0 else answer == 2

    def forget(self, player_id: UUID) -> None:
        """Drop what this process remembers of the player (its settings changed, or it is gone)."""
        self._known = {k: v for k, v in self._known.items() if v[1].id != player_id}

    async def update(
        self, player: Player, locale: Locale | None, explain_errors: bool | None, name: str | None = None
    ) -> Player:
        changes: dict[str, str] = {}
        if name is not None:
            changes["name"] = name
        if locale is not None:
            changes["locale"] = locale
        if explain_errors is not None:
            changes["explain_errors"] = "1" if explain_errors else "0"
        if changes:
            changed = await self._change(player.id, changes)
            self.forget(player.id)
            if not changed:
                raise DomainError(ErrorCode.UNAUTHORIZED)  # erased (or expired) since it authenticated
        return Player(
            player.id,
            locale or player.locale,
            player.explain_errors if explain_errors is None else explain_errors,
            player.created_ms,
            name or player.name,
            player.token_hash,
            player.create_record,
            player.app_id,
            player.app_name,
            player.external_id,
        )
