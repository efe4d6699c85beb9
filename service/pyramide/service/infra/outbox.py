"""Outboxes: the events the service's changes cause, kept in Redis until they are delivered.

A script that makes a change appends the event it causes to an outbox stream in its own slot, in the same script
(``lua/emit_event.lua``): the change and its event are written together or not at all, so no event is lost when a
process dies after the change. An outbox lives in the slot of what changed (a player's, a challenge's; see
``keyspace.player_outbox``), so under Redis Cluster no single script can also note it in one index; the caller does
that right after (:func:`mark_due`), and should the process die in between, :func:`sweep` (run at start and now and
then) finds every outbox by its name and marks it due. Entries leave an outbox once delivered or given up, and an
outbox left empty is deleted with its delivery cursors (:func:`settle`), so Redis keeps no key for a player (a board,
an app) with nothing to deliver, and the sweep walks only outboxes with events.

An event's id is derived from its outbox, its stream entry id and the microsecond it was written, so every attempt at
delivering it, by any process, names it the same (receivers drop repeats by it).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import weakref
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from pyramide.service.infra import keyspace
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.scripts import Loaded, Result, Script

SWEEP_BATCH: Final = 500
"""Keys a sweep asks Redis for at a time: a sweep walks the keyspace without holding Redis up."""


class SettleKeys(NamedTuple):
    outbox: str
    cursors: str


class SettleArgs(NamedTuple):
    cursors: str
    """JSON: endpoint id → its cursor's JSON, to write."""
    gone: str
    """JSON: the ids of endpoints gone, whose cursors are dropped."""
    finished: str
    """JSON: the entries every endpoint is past, which leave the outbox."""


SETTLE: Final = Script("outbox_settle", SettleKeys, SettleArgs)


def event_id(outbox: str, entry: str, written_us: str = "") -> str:
    """The event's id: ``evt_`` and 26 characters of base32 over its outbox, stream entry id and the microsecond
    Redis wrote it (``emit_event.lua``: an entry id may come again in an outbox deleted and written afresh after a
    clock step back), stable across retries and processes."""
    named = f"{outbox}\n{entry}" + (f"\n{written_us}" if written_us else "")
    digest = hashlib.sha256(named.encode()).digest()
    return "evt_" + base64.b32encode(digest).decode().rstrip("=").lower()[:26]


@dataclass(frozen=True, slots=True)
class OutboxEvent:
    """One event as an outbox holds it."""

    id: str
    outbox: str
    entry: str
    """The stream entry id: events of one outbox are in the order of their entries."""
    type: str
    app: str
    """The app whose endpoints may receive it; ``*`` for every app."""
    player: str
    """The player it concerns; empty for none."""
    at_ms: int
    data: dict[str, Any]


def parse(outbox: str, entry: bytes | str, fields: dict[Any, Any]) -> OutboxEvent:
    """An outbox stream entry (as XRANGE gives it, bytes or text) as an event."""
    text = {_text(name): _text(value) for name, value in fields.items()}
    entry_id = _text(entry)
    return OutboxEvent(
        text.get("id") or event_id(outbox, entry_id, text.get("us", "")),
        outbox,
        entry_id,
        text["type"],
        text["app"],
        text["player"],
        int(text["at"]),
        json.loads(text["data"]),
    )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def hand_over(redis: RedisClient, source: str, target: str, now_ms: int) -> int:
    """Copies every event still in ``source`` to the end of ``target``, each with its id, and marks ``target`` due;
    how many. For an outbox about to be deleted with its slot (an erased player's): its events outlive it, in their
    order, before what ``target`` gets next. Should the process die before the source is deleted, a retry copies
    them again: a receiver gets an event twice at most, under one id, as at-least-once delivery allows."""
    entries = await redis.xrange(source)
    for entry, fields in entries:
        event = parse(source, entry, fields)
        copied = {"id": event.id, "type": event.type, "app": event.app, "player": event.player}
        await redis.xadd(target, {**copied, "at": str(event.at_ms), "data": json.dumps(event.data)})
    if entries:
        await mark_due(redis, target, now_ms)
    return len(entries)


_WAKE: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Event] = weakref.WeakKeyDictionary()
"""Per event loop, the event its delivery task waits on between polls (``wake_on_due``)."""


def wake_on_due() -> asyncio.Event:
    """The event set whenever this process (its running event loop) marks an outbox due: the delivery task waits on
    it between polls, so an event of this process leaves at once rather than at the next poll."""
    return _WAKE.setdefault(asyncio.get_running_loop(), asyncio.Event())


async def mark_due(redis: RedisClient, outbox: str, at_ms: int) -> None:
    """Notes that ``outbox`` has events to deliver from ``at_ms`` (the caller's now, or later), and wakes this
    process's delivery task."""
    await redis.zadd(keyspace.EVENTS_DUE, {outbox: at_ms})
    wake = _WAKE.get(asyncio.get_running_loop())
    if wake is not None:
        wake.set()


async def sweep(redis: RedisClient, now_ms: int) -> int:
    """Marks every outbox due (those whose events are noted already are due again at once, which is harmless: a
    delivery worker takes each event once); how many there were. Only streams: other keys whose names end so (the
    delivery's cursors, named after their outbox) are not outboxes."""
    found = 0
    async for key in redis.scan_iter(match=keyspace.OUTBOX_PATTERN, count=SWEEP_BATCH, _type="stream"):
        await mark_due(redis, _text(key), now_ms)
        found += 1
    return found


@dataclass(frozen=True, slots=True)
class Settled:
    """What :func:`settle` left: whether the outbox is still there, and how many entries it holds."""

    exists: bool
    left: int


async def settle(
    script: Loaded[SettleKeys, SettleArgs], outbox: str, cursors: dict[str, str], gone: list[str], finished: list[str]
) -> Settled:
    """Ends a delivery pass over ``outbox`` in one script in its slot (``lua/outbox_settle.lua``): writes the
    endpoints' ``cursors``, drops those ``gone`` and the ``finished`` entries, and deletes the outbox with its cursors
    once it is empty, so an event emitted meanwhile is never lost. An outbox deleted meanwhile (its player erased)
    gets nothing written: no cursor outlives it. ``script`` is :data:`SETTLE` loaded on the caller's client."""
    answer = await script(
        SettleKeys(outbox, keyspace.delivery_cursors(outbox)),
        SettleArgs(json.dumps(cursors), json.dumps(gone), json.dumps(finished)),
    )
    status, left, deleted = (int(part) for part in answer)
    return Settled(status == Result.OK and not deleted, left)
