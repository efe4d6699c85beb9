"""The audit log: every admin action, with who, when and why.

One Redis stream, ``pyr:audit``, holds every action, newest last, capped near ``MAX_ENTRIES``; an action on a player
is also kept in the player's slot (``pyr:{p:<id>}:audit``), so the player's export shows what was done to them and
their erasure takes it along. An entry names the player by id only, never by name.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Final
from uuid import UUID

from pyramide.service.apps import Principal
from pyramide.service.infra.redis import RedisClient, raw

AUDIT_KEY: Final = "pyr:audit"
MAX_ENTRIES: Final = 100_000
"""About how many actions the log keeps (Redis trims the oldest, in whole blocks)."""
MAX_PLAYER_ENTRIES: Final = 200
PLAYER_PREFIX: Final = "player:"


def player_audit_key(player_id: UUID) -> str:
    return f"pyr:{{p:{player_id}}}:audit"


def player_target(player_id: UUID) -> str:
    """How an entry names the player it was about."""
    return f"{PLAYER_PREFIX}{player_id}"


def _decoded(fields: Mapping[bytes, bytes]) -> dict[str, Any]:
    entry = json.loads(fields[b"entry"])
    assert isinstance(entry, dict)
    return entry


class AuditLog:
    def __init__(self, redis: RedisClient) -> None:
        self.redis = redis

    async def record(
        self,
        actor: Principal,
        action: str,
        target: str,
        reason: str = "",
        detail: Mapping[str, str] | None = None,
    ) -> None:
        """Keep one action: ``actor`` did ``action`` to ``target`` (``player:<id>``, ``app:<id>``, a board) for
        ``reason``."""
        entry = {
            "at_ms": int(time.time() * 1000),
            "actor": actor.actor,
            "actor_name": actor.name,
            "action": action,
            "target": target,
            "reason": reason,
            "detail": dict(detail or {}),
        }
        stream_id = raw(await self.redis.xadd(AUDIT_KEY, {"entry": json.dumps(entry)}, maxlen=MAX_ENTRIES))
        if target.startswith(PLAYER_PREFIX):
            kept = json.dumps({"id": (stream_id or b"").decode(), **entry})
            key = player_audit_key(UUID(target.removeprefix(PLAYER_PREFIX)))
            await self.redis.lpush(key, kept)
            await self.redis.ltrim(key, 0, MAX_PLAYER_ENTRIES - 1)

    async def page(self, cursor: str | None, limit: int, actor: str | None = None) -> tuple[list[dict[str, Any]], str]:
        """Up to ``limit`` entries, newest first, older than ``cursor`` (an entry's id); only ``actor``'s when
        given (an app sees its own actions). The next cursor, or ``""`` at the end."""
        entries: list[dict[str, Any]] = []
        top = f"({cursor}" if cursor else "+"
        while len(entries) < limit:
            batch = await self.redis.xrevrange(AUDIT_KEY, max=top, min="-", count=limit * 4)
            if not batch:
                return entries, ""
            for stream_id, fields in batch:
                entry = {"id": (raw(stream_id) or b"").decode(), **_decoded(fields)}
                top = f"({entry['id']}"
                if actor is None or entry["actor"] == actor:
                    entries.append(entry)
                    if len(entries) == limit:
                        return entries, entry["id"]
        return entries, ""

    async def of_player(self, player_id: UUID) -> list[dict[str, Any]]:
        """What was done to the player, newest first (the latest ``MAX_PLAYER_ENTRIES``)."""
        kept = await self.redis.lrange(player_audit_key(player_id), 0, -1)
        return [json.loads(raw(item) or b"{}") for item in kept]
