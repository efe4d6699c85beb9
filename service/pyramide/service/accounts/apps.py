"""Apps and their server keys, in Redis.

An app's key is ``pyrapp_<app id, 32 hex>_<secret>``: the prefix tells it from a player's token (``<uuid>.<secret>``)
at a glance and in code, so neither is ever taken for the other. Redis keeps only the SHA-256 of the secret, in the
app's hash ``pyr:{app:<id>}:app``; a request with an app key reads that hash every time (but a move's, which a process
may take from memory while it hears every revocation: ``accounts.app_cache``), so a revoked key (its hash deleted)
is refused at once by every process. The set of apps, ``pyr:apps``, is ordered by creation.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final
from uuid import UUID, uuid4

from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.redis import RedisClient, raw

APP_KEY_PREFIX: Final = "pyrapp_"
SCOPES: Final = ("players", "moderation")
"""``players``: act for the app's own users (``Pyramide-Player``) and issue them sessions; ``moderation``: ban,
unban and annul the entries of the app's own players."""
_KEY: Final = re.compile(r"^pyrapp_([0-9a-f]{32})_([A-Za-z0-9_-]{40,64})$")


def is_app_key(token: str) -> bool:
    """Whether a bearer token has the shape of an app key (not whether it is valid)."""
    return token.startswith(APP_KEY_PREFIX)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class App:
    id: UUID
    name: str
    scopes: frozenset[str]
    created_ms: int
    limits: dict[str, int] = field(default_factory=dict)
    """Its own rate limits and quotas set at creation, by name (``players``, ``address_moves``, …, ``quota_games``);
    the others are the settings' ``app_limit_*`` and ``app_quota_*``."""

    bucket: str = field(init=False, compare=False)
    """The address its requests that name no ``Pyramide-Client-IP`` count under (not an IP address): worked out once,
    since every request of the app reads it several times."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "bucket", f"app:{self.id.hex}")

    def bucket_of(self, address: str) -> str:
        """The address its requests that name ``address`` in ``Pyramide-Client-IP`` count under: its own bucket of
        that end user's address, never the bucket of the clients that connect from it, nor another app's."""
        return keyspace.app_client_bucket(self.bucket, address)


def _app(app_id: UUID, fields: dict[bytes, bytes]) -> App:
    scopes = frozenset(s for s in fields.get(b"scopes", b"").decode().split(" ") if s)
    limits = {k[6:].decode(): int(v) for k, v in fields.items() if k.startswith(b"limit:")}
    return App(app_id, fields.get(b"name", b"").decode(), scopes, int(fields.get(b"created_ms", b"0")), limits)


class AppStore:
    def __init__(self, redis: RedisClient, *, clock: Clock, forget: Callable[[UUID], None] | None = None) -> None:
        """``forget``: drops what this process remembers of an app it revokes (``accounts.app_cache``)."""
        self.redis = redis
        self.clock = clock
        self.forget = forget

    async def create(self, name: str, scopes: frozenset[str], limits: dict[str, int] | None = None) -> tuple[App, str]:
        """A new app and its key, which is returned this once: only its hash is kept."""
        app = App(uuid4(), name, scopes, now_ms(self.clock), dict(limits or {}))
        secret = secrets.token_urlsafe(32)
        fields = {
            "name": app.name,
            "scopes": " ".join(sorted(app.scopes)),
            "created_ms": str(app.created_ms),
            "key_hash": _hash(secret),
            **{f"limit:{name}": str(value) for name, value in app.limits.items()},
        }
        await self.redis.hset(keyspace.app(app.id), mapping=fields)
        await self.redis.zadd(keyspace.APPS, {str(app.id): app.created_ms})
        return app, f"{APP_KEY_PREFIX}{app.id.hex}_{secret}"

    async def get(self, app_id: UUID) -> App | None:
        fields = await self.redis.hgetall(keyspace.app(app_id))
        return _app(app_id, fields) if fields else None

    async def list(self) -> list[App]:
        """Every app, the oldest first (an operator creates a handful; there is no paging)."""
        ids = [UUID((raw(m) or b"").decode()) for m in await self.redis.zrange(keyspace.APPS, 0, -1)]
        found = [await self.get(app_id) for app_id in ids]
        return [app for app in found if app is not None]

    async def revoke(self, app_id: UUID) -> bool:
        """Delete the app's key: from the next request on, every process refuses it; and its webhook endpoints with
        their logs, so that no event goes to them any more (a revoked key cannot delete them). ``False``: no such
        app."""
        deleted = await self.redis.delete(keyspace.app(app_id))
        if self.forget is not None:
            self.forget(app_id)
        await self.redis.publish(keyspace.APP_CHANGES, str(app_id))  # every process forgets the key it remembers
        await self.redis.zrem(keyspace.APPS, str(app_id))
        endpoints = [(raw(k) or b"").decode() for k in await self.redis.hgetall(keyspace.webhooks(app_id))]
        logs = [k for e in endpoints for k in keyspace.webhook_keys(app_id, e)]
        await self.redis.delete(keyspace.webhooks(app_id), *logs)  # all in the app's slot
        await self.redis.srem(keyspace.WEBHOOK_APPS, str(app_id))
        return bool(deleted)

    async def rotate_key(self, app_id: UUID, grace_s: int) -> tuple[App, str, int] | None:
        """A new key for the app (returned this once), the one it replaces still valid for ``grace_s`` seconds (0:
        refused at once), and when that ends (ms). ``None``: no such app. Every process forgets the keys it remembers
        (a notice, as for a revocation); a key taken in its grace is never remembered (``is_current``)."""
        fields = await self.redis.hgetall(keyspace.app(app_id))
        if not fields:
            return None
        secret, until = secrets.token_urlsafe(32), now_ms(self.clock) + grace_s * 1000
        previous = (raw(fields.get(b"key_hash")) or b"").decode()
        rotated = {"key_hash": _hash(secret), "old_key_hash": previous, "old_key_until_ms": str(until)}
        await self.redis.hset(keyspace.app(app_id), mapping=rotated)
        if self.forget is not None:
            self.forget(app_id)
        await self.redis.publish(keyspace.APP_CHANGES, str(app_id))
        return _app(app_id, fields), f"{APP_KEY_PREFIX}{app_id.hex}_{secret}", until

    async def authenticate(self, key: str) -> App | None:
        """The app of a server key, or ``None`` for a key that is malformed, unknown, revoked, or replaced and past
        its grace."""
        app_id = key_app_id(key)
        if app_id is None:
            return None
        return checked(key, app_id, await self.redis.hgetall(keyspace.app(app_id)), now_ms(self.clock))


def key_app_id(key: str) -> UUID | None:
    """The app a key names, if it has an app key's shape."""
    match = _KEY.match(key)
    return None if match is None else UUID(hex=match.group(1))


def checked(key: str, app_id: UUID, fields: dict[bytes, bytes], now: int) -> App | None:
    """The app whose hash holds ``fields``, if ``key`` is its key, or the key it replaced while that key's grace
    lasts at ``now`` (ms) (compared in constant time); ``None`` else."""
    if is_current(key, fields):
        return _app(app_id, fields)
    match = _KEY.match(key)
    old = fields.get(b"old_key_hash", b"").decode()
    if match is None or not old or now >= int(fields.get(b"old_key_until_ms", b"0")):
        return None
    return _app(app_id, fields) if hmac.compare_digest(old, _hash(match.group(2))) else None


def is_current(key: str, fields: dict[bytes, bytes]) -> bool:
    """Whether ``key`` is the app's current key (not one it replaced, in its grace)."""
    kept = fields.get(b"key_hash", b"").decode()
    match = _KEY.match(key)
    return match is not None and bool(kept) and hmac.compare_digest(kept, _hash(match.group(2)))
