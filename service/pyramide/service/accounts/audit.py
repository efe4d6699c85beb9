"""The audit log: every admin action, with who, when and why.

One Redis stream, ``pyr:audit``, holds every action, newest last, capped near ``MAX_ENTRIES``; an app's actions are
also kept in a stream of the app's own, in its slot (``pyr:{app:<id>}:audit``, capped near ``MAX_APP_ENTRIES``), so
that an app reads its own page without walking everyone's. An action on a player is also kept in the player's slot
(``keyspace.audit``): the player's export shows what was done to them. That list is written only while the
player exists, lives as long as the player (``lua/follow_player.lua``), and holds the streams' ids of each of its
entries: the player's erasure deletes them from both streams (:meth:`AuditLog.forget`), so nothing of an erased
player stays in the log. It keeps the latest ``MAX_PLAYER_ENTRIES`` actions on the player; an older one leaves the
streams as it leaves the list, so every entry about a player in the streams is named by its list. An entry names the
player by id only, never by name.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple
from uuid import UUID

from pyramide.service.accounts.principal import Principal
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.infra.scripts import Result, Script

MAX_ENTRIES: Final = 100_000
"""About how many actions the log keeps (Redis trims the oldest, in whole blocks)."""
MAX_APP_ENTRIES: Final = 10_000
"""About how many of its own actions an app's log keeps."""
MAX_PLAYER_ENTRIES: Final = 200
"""How many actions on one player are kept (in the player's list and in the streams)."""
PLAYER_PREFIX: Final = "player:"
APP_PREFIX: Final = "app:"


class NoteKeys(NamedTuple):
    audit: str
    """The player's list of actions on it."""
    player: str
    tombstone: str


class NoteArgs(NamedTuple):
    entry: str
    most: int
    """How many entries the list keeps."""


NOTE: Final = Script("audit_note", NoteKeys, NoteArgs)
"""Notes an action in the player's list while the player exists and is not being erased, with the player's time
to live; answers ``{MISSING}`` when it is gone, else ``{OK, the entries pushed out}``."""


def player_target(player_id: UUID) -> str:
    """How an entry names the player it was about."""
    return f"{PLAYER_PREFIX}{player_id}"


def _decoded(fields: Mapping[bytes, bytes]) -> dict[str, Any]:
    entry = json.loads(fields[b"entry"])
    assert isinstance(entry, dict)
    return entry


def _at_start(cursor: str) -> bool:
    """Whether a cursor names the streams' very first id (``0-0``): nothing is older."""
    ms, _, seq = cursor.partition("-")
    return int(ms) == 0 and int(seq or "0") == 0


class AuditLog:
    def __init__(self, redis: RedisClient, *, clock: Clock) -> None:
        self.redis = redis
        self.clock = clock
        self._note_script = NOTE.load(redis)

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
            "at_ms": now_ms(self.clock),
            "actor": actor.actor,
            "actor_name": actor.name,
            "action": action,
            "target": target,
            "reason": reason,
            "detail": dict(detail or {}),
        }
        text = json.dumps(entry)
        stream_id = _text(await self.redis.xadd(keyspace.AUDIT, {"entry": text}, maxlen=MAX_ENTRIES))
        app_entry = ""
        if actor.app_id is not None:
            app_key = keyspace.app_audit(actor.app_id)
            app_entry = _text(await self.redis.xadd(app_key, {"entry": text}, maxlen=MAX_APP_ENTRIES))
        if target.startswith(PLAYER_PREFIX):
            kept = json.dumps({"id": stream_id, "app_entry": app_entry, **entry})
            await self._note(UUID(target.removeprefix(PLAYER_PREFIX)), kept)

    async def _note(self, player_id: UUID, kept: str) -> None:
        """Keep the entry in the player's list; when the player is gone, or entries fall off the list, those
        entries leave the streams too."""
        keys = NoteKeys(
            audit=keyspace.audit(player_id), player=keyspace.player(player_id), tombstone=keyspace.tombstone(player_id)
        )
        answer = await self._note_script(keys, NoteArgs(entry=kept, most=MAX_PLAYER_ENTRIES))
        if int(answer[0]) == Result.MISSING:
            await self._drop([kept])
        elif len(answer) > 1:
            await self._drop(_text(item) for item in answer[1:])

    async def _drop(self, kept: Iterable[str]) -> None:
        """Delete the entries the player's list kept (as JSON) from the global stream and their app's."""
        for item in kept:
            entry = json.loads(item)
            if entry.get("id"):
                await self.redis.xdel(keyspace.AUDIT, entry["id"])
            actor = str(entry.get("actor", ""))
            if entry.get("app_entry") and actor.startswith(APP_PREFIX):
                await self.redis.xdel(keyspace.app_audit(UUID(actor.removeprefix(APP_PREFIX))), entry["app_entry"])

    async def forget(self, player_id: UUID) -> None:
        """Delete every entry about the player from the streams (its erasure; the list goes with the player's
        keys). Call once nothing can note a new one: after the player's tombstone is set."""
        await self._drop(_text(item) for item in await self.redis.lrange(keyspace.audit(player_id), 0, -1))

    async def page(
        self, cursor: str | None, limit: int, app_id: UUID | None = None
    ) -> tuple[list[dict[str, Any]], str]:
        """Up to ``limit`` entries, newest first, older than ``cursor`` (an entry's id): the whole log's, or only
        the app ``app_id``'s actions, read from its own stream (one read either way). The next cursor, or ``""`` at
        the end."""
        if cursor is not None and _at_start(cursor):
            return [], ""
        key = keyspace.AUDIT if app_id is None else keyspace.app_audit(app_id)
        top = f"({cursor}" if cursor else "+"
        batch = await self.redis.xrevrange(key, max=top, min="-", count=limit + 1)
        entries = [{"id": _text(stream_id), **_decoded(fields)} for stream_id, fields in batch[:limit]]
        return entries, entries[-1]["id"] if len(batch) > limit else ""

    async def of_player(self, player_id: UUID) -> list[dict[str, Any]]:
        """What was done to the player, newest first (the latest ``MAX_PLAYER_ENTRIES``)."""
        kept = [json.loads(_text(item) or "{}") for item in await self.redis.lrange(keyspace.audit(player_id), 0, -1)]
        return [{k: v for k, v in entry.items() if k != "app_entry"} for entry in kept]


def _text(value: Any) -> str:
    return (raw(value) or b"").decode()
