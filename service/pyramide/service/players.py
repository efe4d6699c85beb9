"""Anonymous players and their bearer tokens.

A token is ``<player id>.<secret>``; Redis keeps only the SHA-256 of the secret, in the player's hash
``pyr:{p:<id>}:player``. A create retried with the same Idempotency-Key derives the same player id and the same
secret (an HMAC of the key and a salt kept with the player), so the retry gets the identical token back although
the token itself is never stored.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final
from uuid import UUID, uuid4

from pyramide.engine.messages import Locale
from pyramide.service.store import Redis, derived_id

_CREATE: Final = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""


def player_key(player_id: UUID) -> str:
    return f"pyr:{{p:{player_id}}}:player"


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Player:
    id: UUID
    locale: Locale
    explain_errors: bool
    created_ms: int
    name: str | None = None
    """Shown beside the player's wins on leaderboards; ``None``: none chosen."""

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created_ms / 1000, UTC)


def _player(player_id: UUID, fields: dict[bytes, bytes]) -> Player:
    locale: Locale = "en" if fields.get(b"locale") == b"en" else "hu"
    name = fields.get(b"name")
    return Player(
        player_id,
        locale,
        fields.get(b"explain_errors") == b"1",
        int(fields.get(b"created_ms", b"0")),
        name.decode() if name else None,
    )


AUTH_CACHE_S = 10.0
AUTH_CACHE_SIZE = 10_000


class PlayerStore:
    """Players in Redis. Authenticated players are remembered in this process for ``AUTH_CACHE_S`` seconds, so a
    move costs no extra Redis round trip for its token; a settings change made through another process shows
    here within that time."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._create = redis.register_script(_CREATE)
        self._known: dict[str, tuple[float, Player]] = {}

    async def create(
        self,
        locale: Locale,
        explain_errors: bool,
        idempotency_key: str | None = None,
        fingerprint: str = "",
        name: str | None = None,
    ) -> tuple[Player, str, bool]:
        """A new player and its token; with an Idempotency-Key already used, that player and the same token.
        The flag is false when the key was used before for a different request (``fingerprint``)."""
        if idempotency_key is None:
            player_id, salt = uuid4(), secrets.token_hex(16)
        else:
            player_id = derived_id("player", idempotency_key)
            existing = await self.redis.hget(player_key(player_id), "salt")
            salt = existing.decode() if existing else secrets.token_hex(16)
        secret = (
            secrets.token_urlsafe(32)
            if idempotency_key is None
            else hmac.new(idempotency_key.encode(), f"{player_id}:{salt}".encode(), hashlib.sha256).hexdigest()
        )
        player = Player(player_id, locale, explain_errors, int(time.time() * 1000), name)
        created = await self._create(
            keys=[player_key(player_id)],
            args=[
                "token_hash", _hash(secret), "salt", salt, "locale", locale,
                "explain_errors", "1" if explain_errors else "0", "created_ms", str(player.created_ms),
                "fingerprint", fingerprint, *(("name", name) if name else ()),
            ],
        )  # fmt: skip
        if created:
            return player, f"{player_id}.{secret}", True
        fields = await self.redis.hgetall(player_key(player_id))
        same_request = fields.get(b"fingerprint", b"").decode() == fingerprint
        return _player(player_id, fields), f"{player_id}.{secret}", same_request

    async def get(self, player_id: UUID) -> Player | None:
        fields = await self.redis.hgetall(player_key(player_id))
        return _player(player_id, fields) if fields else None

    async def authenticate(self, token: str) -> Player | None:
        """The token's player, or ``None`` for a missing, malformed or wrong token (compared in constant time)."""
        cache_key = _hash(token)
        known = self._known.get(cache_key)
        now = time.monotonic()
        if known is not None and now - known[0] < AUTH_CACHE_S:
            return known[1]
        player = await self._authenticate(token)
        if player is not None:
            if len(self._known) >= AUTH_CACHE_SIZE:
                self._known.clear()
            self._known[cache_key] = (now, player)
        return player

    async def _authenticate(self, token: str) -> Player | None:
        player_text, _, secret = token.partition(".")
        try:
            player_id = UUID(player_text)
        except ValueError:
            return None
        fields = await self.redis.hgetall(player_key(player_id))
        expected = fields.get(b"token_hash", b"").decode()
        if not expected or not secret or not hmac.compare_digest(expected, _hash(secret)):
            return None
        return _player(player_id, fields)

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
            await self.redis.hset(player_key(player.id), mapping=changes)
            self._known = {k: v for k, v in self._known.items() if v[1].id != player.id}
        return Player(
            player.id,
            locale or player.locale,
            player.explain_errors if explain_errors is None else explain_errors,
            player.created_ms,
            name or player.name,
        )
