"""One outbox's delivery, in order: per endpoint and outbox, events go in entry order.

While an event is retrying, the later ones wait for that endpoint only (its cursor in ``keyspace.delivery_cursors``);
the others go on. A failed attempt is tried again after the next wait of ``webhook_retry_schedule_s``; after the last,
the delivery is ``failed`` and the endpoint moves on. A failing endpoint is probed by one attempt at a time, whatever
the outboxes waiting for it (``WebhookStore.gate``, at the schedule's pace); one that has failed without a success
for ``webhook_disable_after_s`` is disabled: its events are ``skipped`` (noted in its log, not sent) and its cursors
move past them until the app enables it. An entry leaves the outbox once every endpoint is past it. An attempt that
finds its app's slots all held (``sending.BUSY``) is not an attempt: nothing counted against the event or the
endpoint's health, its outbox due again ``BUSY_WAIT_MS`` later."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Final

from pyramide.service.events.sending import BUSY, Sender, body_of
from pyramide.service.events.store import Delivery, Endpoint, WebhookStore
from pyramide.service.infra import keyspace, outbox
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.meters import Meters
from pyramide.service.infra.outbox import OutboxEvent
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.infra.settings import Webhooks

BUSY_WAIT_MS: Final = 1000
"""How long an outbox whose delivery was ``busy`` waits before it is claimed again."""
PAGE: Final = 100
"""Outbox entries read per claim."""
PER_CLAIM: Final = 10
"""Deliveries to one endpoint per claim at most (then the outbox is due again at once): bounds a claim's time."""


def entry_key(entry: str) -> tuple[int, int]:
    """A stream entry id in its order."""
    ms, _, seq = entry.partition("-")
    return int(ms), int(seq or 0)


def wants(endpoint: Endpoint, event: OutboxEvent) -> bool:
    """Whether ``endpoint`` gets ``event``: its app's (or every app's), a type it subscribed to, emitted after it
    was registered."""
    return event.app in ("*", endpoint.app) and event.type in endpoint.events and event.at_ms >= endpoint.created_ms


@dataclass(slots=True)
class Cursor:
    """Where one endpoint stands in one outbox: the last entry done, the attempts made at the next, when it is
    tried again (ms; 0: now)."""

    done: str = ""
    attempts: int = 0
    next_ms: int = 0

    def past(self, entry: str) -> bool:
        return bool(self.done) and entry_key(entry) <= entry_key(self.done)

    @classmethod
    def from_json(cls, text: bytes | str | None) -> Cursor:
        return cls() if text is None else cls(**json.loads(text))

    def to_json(self) -> str:
        return json.dumps({"done": self.done, "attempts": self.attempts, "next_ms": self.next_ms})


class OutboxDelivery:
    """Delivers what is due in one outbox at a time (see the module)."""

    def __init__(
        self, redis: RedisClient, store: WebhookStore, sender: Sender, settings: Webhooks, meters: Meters
    ) -> None:
        self.redis = redis
        self.meters = meters
        self.store = store
        self.clock = store.clock
        self.sender = sender
        self.schedule_ms = [int(wait * 1000) for wait in settings.retry_schedule_s]
        self.disable_after_ms = int(settings.disable_after_s * 1000)
        self.probe_hold_ms = int(settings.timeout_s * 2000) + 1000
        """How long an attempt at a failing endpoint holds its probe (the others wait for its outcome meanwhile): a
        wait for a slot and a POST, each within the timeout."""
        self._settle = outbox.SETTLE.load(redis)

    async def deliver_outbox(self, name: str) -> int | None:
        """Delivers what is due in one outbox; when it is due again (ms), or ``None`` when it is empty."""
        entries = await self.redis.xrange(name, count=PAGE)
        cursors_key = keyspace.delivery_cursors(name)
        if not entries:
            return None if not (await outbox.settle(self._settle, name, {}, [], [])).exists else now_ms(self.clock) + 1
        events = [outbox.parse(name, entry, fields) for entry, fields in entries]
        apps = {event.app for event in events} if keyspace.outbox_of_one_app(name) else {"*"}
        endpoints = await self.store.endpoints_of(apps)
        kept = await self.redis.hgetall(cursors_key)
        cursors = {ep.id: Cursor.from_json(kept.get(ep.id.encode())) for ep in endpoints}
        batches = [await self._next_of(name, events, cursors[ep.id]) for ep in endpoints]
        outcomes = await asyncio.gather(
            *(self._serve(ep, batch, cursors[ep.id]) for ep, batch in zip(endpoints, batches, strict=True))
        )
        gone = [(raw(k) or b"").decode() for k in kept if (raw(k) or b"").decode() not in cursors]
        finished = [e.entry for e in events if all(cursors[ep.id].past(e.entry) for ep in endpoints if wants(ep, e))]
        written = {ep.id: c.to_json() for ep, c in zip(endpoints, cursors.values(), strict=True)}
        settled = await outbox.settle(self._settle, name, written, gone, finished)
        if not settled.exists:  # emptied and deleted, or deleted meanwhile (its player erased)
            return None
        if len(finished) == len(events):
            now = now_ms(self.clock)
            return now if settled.left else now + 1  # kept empty for now: deleted at the next pass
        more = [
            now_ms(self.clock)
            for due, batch in zip(outcomes, batches, strict=True)
            if due is None and len(batch) == PAGE
        ]
        waits = [due for due in outcomes if due is not None] + more  # a whole page sent: there may be more
        return min(waits) if waits else now_ms(self.clock)

    async def _next_of(self, name: str, head: list[OutboxEvent], cursor: Cursor) -> list[OutboxEvent]:
        """The events an endpoint is to get next: the outbox's first page, or, for an endpoint already past it
        (the head held by another endpoint's retries), the page after its own cursor."""
        if not cursor.done or not cursor.past(head[-1].entry):
            return head
        entries = await self.redis.xrange(name, min="(" + cursor.done, count=PAGE)
        return [outbox.parse(name, entry, fields) for entry, fields in entries]

    async def _serve(self, endpoint: Endpoint, events: list[OutboxEvent], cursor: Cursor) -> int | None:
        """Sends one endpoint its next events of an outbox, in order, until one fails or the endpoint's probe is not
        due; a disabled endpoint's events are skipped. When it is due again."""
        sent = 0
        disabled = await self.store.disabled(endpoint)
        for event in events:
            if not wants(endpoint, event) or cursor.past(event.entry):
                continue
            if disabled and await self.store.disabled(endpoint):  # read again: the app may enable it meanwhile
                await self._skip(endpoint, event, cursor)
                continue
            disabled, now = False, now_ms(self.clock)
            if cursor.attempts == 0 and event.at_ms + self.schedule_ms[0] > now:
                return event.at_ms + self.schedule_ms[0]
            if cursor.next_ms > now:
                return cursor.next_ms
            if sent >= PER_CLAIM:
                return now
            gate = await self.store.gate(endpoint, self.probe_hold_ms)
            if gate.disabled:
                disabled = True
                await self._skip(endpoint, event, cursor)
                continue
            if not gate.go:
                return gate.wait_until
            sent += 1
            attempted = await self._attempt(endpoint, event, cursor.attempts, probe=gate.probe)
            if attempted is None:  # no slot free: nothing was sent, nothing is counted
                if gate.probe:
                    await self.store.let_go(endpoint)
                return now_ms(self.clock) + BUSY_WAIT_MS
            delivered, disabled = attempted
            cursor.attempts = 0 if delivered else cursor.attempts + 1
            if delivered or disabled or cursor.attempts >= len(self.schedule_ms):
                cursor.done, cursor.attempts, cursor.next_ms = event.entry, 0, 0
                continue
            cursor.next_ms = now_ms(self.clock) + self.schedule_ms[cursor.attempts]
            return cursor.next_ms
        return None

    async def _logged(self, endpoint: Endpoint, event: OutboxEvent) -> Delivery:
        """The event's delivery as the endpoint's log holds it, or a new one (its body made now, sent ever after)."""
        delivery = await self.store.delivery(endpoint, event.id)
        return delivery or Delivery(event.id, event.type, body_of(event), now_ms(self.clock))

    async def _skip(self, endpoint: Endpoint, event: OutboxEvent, cursor: Cursor) -> None:
        """Notes an event of a disabled endpoint as ``skipped`` (its body kept for a redelivery by hand) and moves
        the endpoint's cursor past it."""
        delivery = await self._logged(endpoint, event)
        delivery.status, delivery.next_attempt_ms = "skipped", None
        await self.store.note(endpoint, delivery)
        cursor.done, cursor.attempts, cursor.next_ms = event.entry, 0, 0

    async def _attempt(
        self, endpoint: Endpoint, event: OutboxEvent, attempts: int, *, probe: bool
    ) -> tuple[bool, bool] | None:
        """One attempt at one event, noted in the endpoint's log and health (``probe``: the failing endpoint's
        probe); whether it was delivered, and whether the endpoint is disabled now (the event is then ``failed``:
        given up); ``None`` when it was ``busy``."""
        delivery = await self._logged(endpoint, event)
        result = await self.sender.send(endpoint, event.id, delivery.body)
        if result.error == BUSY:
            return None
        disabled = await self.store.outcome(endpoint, result.ok, self.disable_after_ms, self.schedule_ms, probe=probe)
        delivery.attempts += 1
        delivery.last_status, delivery.last_error = result.status, result.error
        if result.ok:
            delivery.status, delivery.delivered_ms, delivery.next_attempt_ms = "delivered", now_ms(self.clock), None
            self.meters.webhook_delivery_seconds.observe(max(0, delivery.delivered_ms - event.at_ms) / 1000)
        elif disabled or attempts + 1 >= len(self.schedule_ms):
            delivery.status, delivery.next_attempt_ms = "failed", None
            self.meters.webhook_given_up.inc()
        else:
            delivery.status, delivery.next_attempt_ms = "retrying", now_ms(self.clock) + self.schedule_ms[attempts + 1]
        await self.store.note(endpoint, delivery)
        return result.ok, disabled
