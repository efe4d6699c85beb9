"""Anonymous players and their bearer tokens.

A token is ``<player id>.<secret>``: both random, neither derived from anything a client sends. Redis keeps only the
SHA-256 of the secret, in the player's hash ``pyr:{p:<id>}:player``. A player that has never finished a game expires
``player_idle_ttl_s`` after its last request (its statistics with it); finishing a game keeps it for good.

Creating a player with an ``Idempotency-Key`` keeps the response for retries, and the response holds the token, so it
is kept sealed (:mod:`accounts.sealed`) under ``pyr:{ip:<SHA-256 of the key>}``. That is also why the key must carry
at least 128 bits (see ``accounts.schemas``): it is the only secret between a retry and the token. The record expires
with the idempotency window. A ban is :mod:`accounts.bans`'s.
"""

from __future__ import annotations

import hmac
import json
import secrets
from dataclasses import replace
from typing import Final, NamedTuple
from uuid import UUID, uuid4

from redis.exceptions import ResponseError

from pyramide.engine.messages import Locale
from pyramide.service.accounts.player import Player, player_of
from pyramide.service.accounts.sealed import SealedCreate
from pyramide.service.accounts.tokens import secret_hash, token_hash
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.redis import RedisClient, raw, storage_full
from pyramide.service.infra.scripts import Result, Script
from pyramide.service.infra.settings import Retention


class AuthenticateKeys(NamedTuple):
    """The player's hash and every key that lives as long as the player."""

    player: str
    counters: str
    games: str
    wins: str
    win: str
    pending: str
    audit: str
    auth: str


class IdleArgs(NamedTuple):
    idle_ms: int
    """How long an idle player that never finished a game is kept."""


AUTHENTICATE: Final = Script("player_authenticate", AuthenticateKeys, IdleArgs)
"""The player's hash, its idle time renewed (with the keys that follow it) in the same step."""


class PlayerKeys(NamedTuple):
    player: str
    auth: str


class InsertArgs(NamedTuple):
    idle_ms: int
    token_hash: str
    fields: str
    """The player's hash (a JSON object of text)."""


INSERT: Final = Script("player_insert", PlayerKeys, InsertArgs)


class RotateKeys(NamedTuple):
    player: str
    auth: str
    sealed: str
    """Where the sealed answer is kept (in the player's slot)."""


class RotateArgs(NamedTuple):
    old_hash: str
    new_hash: str
    record: bytes
    """The sealed answer (b'' for none)."""
    kept_ms: int


ROTATE: Final = Script("player_rotate", RotateKeys, RotateArgs)
"""Replaces the token's hash only if it is still the one the request authenticated with (else
:attr:`Result.CONFLICT`): of two rotations at once, one wins and the other is refused. Keeps the sealed answer of
the latest rotation only (``rotate_record``, in the player's slot): an earlier one's retry holds a token that no
longer works, and its answer a token replaced since, so keeping it would serve no one, and rotating with fresh keys
in a loop would fill Redis for 24 hours."""


class ChangeKeys(NamedTuple):
    player: str


class FieldsArgs(NamedTuple):
    fields: str
    """A JSON object of text."""


CHANGE: Final = Script("player_change", ChangeKeys, FieldsArgs)
"""Changes fields of a player that still exists (else :attr:`Result.MISSING`)."""


AUTH_CACHE_S = 10.0
AUTH_CACHE_SIZE = 10_000


class PlayerStore:
    """Players in Redis. Authenticated players are remembered in this process for ``AUTH_CACHE_S`` seconds, so a
    move costs no extra Redis round trip for its token; a settings change made through another process shows
    here within that time."""

    def __init__(self, redis: RedisClient, retention: Retention, *, clock: Clock) -> None:
        self.redis = redis
        self.retention = retention
        self.clock = clock
        self._authenticate_script = AUTHENTICATE.load(redis)
        self._insert_script = INSERT.load(redis)
        self._rotate_script = ROTATE.load(redis)
        self._change_script = CHANGE.load(redis)
        self._known: dict[str | UUID, tuple[float, Player]] = {}
        """By token hash (:meth:`authenticate`) or by id (:meth:`load`)."""

    async def create(
        self,
        locale: Locale,
        explain_errors: bool,
        idempotency_key: str | None = None,
        fingerprint: str = "",
        name: str | None = None,
    ) -> tuple[Player, str, bool]:
        """A new player, its token, and whether that is the answer kept for an Idempotency-Key (replayed); with an
        Idempotency-Key used before for the same request, that player and the same token (409
        ``idempotency_key_reused`` for a different request). Concurrent requests with one key
        all get the one player that was kept first: each creates a player, only one keeps its record, and the
        others delete theirs (settings and token hash) before answering with the kept one, so every token answered
        works and no key of a player no one holds a token of is left behind."""
        player = Player(uuid4(), locale, explain_errors, now_ms(self.clock), name)
        if idempotency_key is None:
            return player, await self._insert(player), False
        sealed = SealedCreate(idempotency_key)
        kept = raw(await self.redis.get(sealed.key))
        if kept is not None:
            return *sealed.open(kept, fingerprint), True
        token = await self._insert(player)
        ttl_ms = self.retention.idempotency_ttl_s * 1000
        if await self.redis.set(sealed.key, sealed.seal(fingerprint, player, token), nx=True, px=ttl_ms):
            await self._change(player.id, {"create_record": sealed.key})
            return player, token, False
        await self.redis.delete(keyspace.player(player.id), keyspace.auth(player.id))
        kept = raw(await self.redis.get(sealed.key))
        if kept is None:  # kept and expired in between: not seen in practice, but never answer a deleted player
            raise DomainError(ErrorCode.VERSION_CONFLICT)
        return *sealed.open(kept, fingerprint), True

    async def _insert(self, player: Player) -> str:
        """Store ``player`` with a fresh token's hash; the token."""
        token = f"{player.id}.{secrets.token_urlsafe(32)}"
        fields = {"token_hash": token_hash(token), **{k: str(v) for k, v in player.fields().items()}}
        args = InsertArgs(
            idle_ms=self.retention.player_idle_ttl_s * 1000, token_hash=fields["token_hash"], fields=json.dumps(fields)
        )
        await self._insert_script(PlayerKeys(player=keyspace.player(player.id), auth=keyspace.auth(player.id)), args)
        return token

    async def insert_bound(self, app_id: UUID, app_name: str, external_id: str) -> Player:
        """A new player bound to an app's user, with createPlayer's defaults and a random token no one is given:
        its hash sits at ``keyspace.auth``, which the game scripts compare with the request's on every change, and
        the app's requests carry it as :attr:`Player.token_hash` (so erasure, and a ban that replaces it, work as
        for any player)."""
        player = Player(uuid4(), "hu", False, now_ms(self.clock), None, "", None, app_id, app_name, external_id)
        token = await self._insert(player)
        return replace(player, token_hash=token_hash(token))

    async def discard(self, player_id: UUID) -> None:
        """Delete a player no one was given (an app player that lost the race to be bound first)."""
        await self.redis.delete(keyspace.player(player_id), keyspace.auth(player_id))

    async def load(self, player_id: UUID, *, remembered: bool = False) -> Player | None:
        """The player ``player_id`` for a request authenticated otherwise (an app's key, a session), with the hash
        of its current token as :attr:`Player.token_hash`; renews its idle time like :meth:`authenticate`.
        ``remembered``: as for :meth:`authenticate`."""
        known = self._known.get(player_id)
        now = self.clock.monotonic()
        if remembered and known is not None and now - known[0] < AUTH_CACHE_S:
            return known[1]
        fields = await self._touch(player_id)
        if not fields.get(b"token_hash"):
            return None
        player = player_of(player_id, fields)
        if len(self._known) >= AUTH_CACHE_SIZE:
            self._known.clear()
        self._known[player_id] = (now, player)
        return player

    async def get(self, player_id: UUID) -> Player | None:
        fields = await self.redis.hgetall(keyspace.player(player_id))
        return player_of(player_id, fields) if fields else None

    async def _touch(self, player_id: UUID) -> dict[bytes, bytes]:
        """The player's hash, its idle time renewed (with the keys that follow it) in the same script; while Redis is
        full, read only (the idle time is not renewed)."""
        stats = keyspace.statistics(player_id)
        keys = AuthenticateKeys(
            player=keyspace.player(player_id),
            counters=stats.counters,
            games=stats.games,
            wins=stats.wins,
            win=stats.win,
            pending=stats.pending,
            audit=keyspace.audit(player_id),
            auth=keyspace.auth(player_id),
        )
        try:
            flat = await self._authenticate_script(keys, IdleArgs(idle_ms=self.retention.player_idle_ttl_s * 1000))
            return dict(zip(flat[::2], flat[1::2], strict=True))
        except ResponseError as error:
            if not storage_full(error):
                raise
            return await self.redis.hgetall(keys.player)

    async def authenticate(self, token: str, *, remembered: bool = False) -> Player | None:
        """The token's player, or ``None`` for a missing, malformed or wrong token (compared in constant time).
        With ``remembered``, a player this process authenticated in the last ``AUTH_CACHE_S`` seconds is taken as
        it was: only for routes whose store checks the token itself on every access (see ``keyspace.auth``)."""
        cache_key = secret_hash(token)
        known = self._known.get(cache_key)
        now = self.clock.monotonic()
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
        if not expected or not secret or not hmac.compare_digest(expected, secret_hash(secret)):
            return None
        return player_of(player_id, fields)

    async def rotate(self, old_token: str, idempotency_key: str | None, fingerprint: str) -> tuple[str, bool]:
        """A new token for the player of ``old_token``, which stops working at once (401 ``unauthorized`` for a
        token that does not work), and whether that is the answer kept for an Idempotency-Key (replayed). With an
        Idempotency-Key, the answer is kept, sealed, for a retry that holds both the old token and the key (409
        ``idempotency_key_reused`` for another request)."""
        sealed = None if idempotency_key is None else SealedCreate.rotation(old_token, idempotency_key)
        if sealed is not None:
            kept = raw(await self.redis.get(sealed.key))
            if kept is not None:
                return sealed.open(kept, fingerprint)[1], True
        player = await self._authenticate(old_token)
        if player is None:
            raise DomainError(ErrorCode.UNAUTHORIZED)
        if player.banned:
            raise DomainError(ErrorCode.PLAYER_BANNED)
        token = f"{player.id}.{secrets.token_urlsafe(32)}"
        record = b"" if sealed is None else sealed.seal(fingerprint, player, token)
        unused = keyspace.player_sealed(player.id, "-")  # no record to keep, but a key in the player's slot
        keys = RotateKeys(
            player=keyspace.player(player.id),
            auth=keyspace.auth(player.id),
            sealed=unused if sealed is None else sealed.key,
        )
        args = RotateArgs(
            old_hash=token_hash(old_token),
            new_hash=token_hash(token),
            record=record,
            kept_ms=self.retention.idempotency_ttl_s * 1000,
        )
        if await self._rotate_script(keys, args) != Result.OK:
            kept = None if sealed is None else raw(await self.redis.get(sealed.key))
            if kept is None or sealed is None:
                raise DomainError(ErrorCode.UNAUTHORIZED)  # another rotation replaced this token first
            return sealed.open(kept, fingerprint)[1], True
        self.forget(player.id)
        return token, False

    async def _change(self, player_id: UUID, fields: dict[str, str]) -> bool:
        """Set ``fields`` of the player's hash if it still exists; whether it did."""
        changed = await self._change_script(
            ChangeKeys(player=keyspace.player(player_id)), FieldsArgs(json.dumps(fields))
        )
        return bool(changed == Result.OK)

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
