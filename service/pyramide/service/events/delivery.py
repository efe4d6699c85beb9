"""Delivering events to webhook endpoints: the background jobs of every process.

A periodic job (``webhook delivery``, every ``POLL_S`` and at once when this process marks an outbox due or an
outbox's work ends) claims due outboxes from ``EVENTS_DUE`` (``claims``: the outbox's score moves to now + a lease,
noted in ``EVENTS_CLAIMS``, so two processes, or two tasks of one, never work one outbox at once, even when a new event
marks it due meanwhile, and a dead process's claim runs out) and delivers each in a task of its own (``outboxes``:
per endpoint, in entry order), renewing its claim meanwhile, at most ``OUTBOXES`` at once. An empty outbox leaves
``EVENTS_DUE`` (``lua/events_release.lua``) unless an event was marked due while it was claimed. Another job
(``outbox sweep``, every ``SWEEP_S``) marks due the outboxes whose due mark was lost. The attempts themselves, and
the bounds that keep one slow app from holding the others' deliveries, are ``sending``'s."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Final
from uuid import UUID

from redis.exceptions import RedisError

from pyramide.service.events.claims import (
    CLAIM,
    LEASE_MS,
    RELEASE,
    RENEW,
    RENEW_S,
    ClaimArgs,
    ClaimKeys,
    ReleaseArgs,
    ReleaseKeys,
    RenewArgs,
)
from pyramide.service.events.outboxes import BUSY_WAIT_MS, OutboxDelivery
from pyramide.service.events.sending import BUSY, CONCURRENCY, Sender, Sent
from pyramide.service.events.store import Endpoint, WebhookStore
from pyramide.service.infra import keyspace, outbox
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.meters import Meters
from pyramide.service.infra.outage import OutageLog
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.infra.settings import Webhooks
from pyramide.service.infra.tasks import Periodic, TaskRegistry

__all__ = ["CLAIM", "LEASE_MS", "RELEASE", "RENEW", "Deliverer"]

log = logging.getLogger("pyramide.service")

OUTBOXES: Final = 64
"""Outboxes one process works on at once at most."""
POLL_S: Final = 0.2
"""How often a process looks for due outboxes at least (it looks at once when it marks one due itself, and when an
outbox's work ends)."""
FAULT_WAIT_MS: Final = 60_000
"""How long an outbox whose delivery failed unexpectedly waits before it is tried again."""
SWEEP_S: Final = 300
"""How often a process sweeps for outboxes whose due mark was lost (a process died between its save and it)."""
PENDING_S: Final = 5
"""How often a process reads how many outboxes hold events not yet delivered (``pyramide_webhook_outboxes_pending``)."""


class Deliverer:
    """The delivery jobs of one process (see the module)."""

    def __init__(
        self, redis: RedisClient, store: WebhookStore, settings: Webhooks, tasks: TaskRegistry, meters: Meters
    ) -> None:
        self.redis = redis
        self.meters = meters
        self.store = store
        self.clock = store.clock
        self.tasks = tasks
        self.schedule_ms = [int(wait * 1000) for wait in settings.retry_schedule_s]
        self.disable_after_ms = int(settings.disable_after_s * 1000)
        self.lease_ms = LEASE_MS
        self.sender = Sender(settings.timeout_s, settings.allow_loopback, meters)
        self.outboxes = OutboxDelivery(redis, store, self.sender, settings, meters)
        self._claim = CLAIM.load(redis)
        self._release = RELEASE.load(redis)
        self._renew = RENEW.load(redis)
        self._working: set[asyncio.Task[None]] = set()
        self._poll: Periodic | None = None
        self._outage = OutageLog("Redis, delivering webhooks,", log, self.clock)
        """Every outbox's and redelivery's Redis failures, logged once an outage (the polling job's are the task
        registry's: ``background job webhook delivery``)."""

    def schedule(self) -> None:
        """Registers the delivery's periodic jobs (on the app's event loop, as it starts)."""
        self.tasks.every("outbox sweep", SWEEP_S, self.sweep)
        self.tasks.every("outboxes pending", PENDING_S, self.count_pending)
        self._poll = self.tasks.every("webhook delivery", POLL_S, self.claim_due, wake=outbox.wake_on_due())

    async def sweep(self) -> None:
        """Marks due every outbox (see ``outbox.sweep``)."""
        await outbox.sweep(self.redis, now_ms(self.clock))

    async def count_pending(self) -> None:
        """Reads how many outboxes are due or claimed (``EVENTS_DUE``: an outbox leaves it once emptied) into the
        gauge; every process reads the same Redis, so replicas agree."""
        self.meters.webhook_outboxes.set(await self.redis.zcard(keyspace.EVENTS_DUE))

    async def claim_due(self) -> None:
        """Starts the redeliveries asked for, then claims due outboxes and delivers each in a task of its own."""
        await self._redeliveries()
        while len(self._working) < OUTBOXES:
            claimed = await self._claim(
                ClaimKeys(keyspace.EVENTS_DUE, keyspace.EVENTS_CLAIMS), ClaimArgs(now_ms(self.clock), self.lease_ms)
            )
            if not claimed:
                break
            name, lease = (raw(claimed[0]) or b"").decode(), (raw(claimed[1]) or b"").decode()
            task = self.tasks.spawn("outbox claim", self._work(name, lease))
            self._working.add(task)
            task.add_done_callback(self._done)

    async def close(self) -> None:
        """Stops the outboxes in work (their claims run out) and closes the connections."""
        for task in list(self._working):
            task.cancel()
        for task in list(self._working):
            with contextlib.suppress(BaseException):
                await task
        await self.sender.aclose()

    def _done(self, task: asyncio.Task[None]) -> None:
        self._working.discard(task)
        if self._poll is not None:
            self._poll.wake()

    async def send(self, endpoint: Endpoint, event_id: str, body: str) -> Sent:
        """One attempt (see ``Sender.send``)."""
        return await self.sender.send(endpoint, event_id, body)

    async def check(self, app: UUID, url: str) -> None:
        """Checks a URL to register as a delivery would (see ``Sender.check``)."""
        await self.sender.check(app, url)

    async def deliver_outbox(self, name: str) -> int | None:
        """Delivers what is due in one outbox; when it is due again (ms), or ``None`` when it is empty."""
        return await self.outboxes.deliver_outbox(name)

    async def _work(self, name: str, lease: str) -> None:
        """Delivers one claimed outbox, renewing the claim every ``RENEW_S`` while it works, then lets it go."""
        keys = ReleaseKeys(keyspace.EVENTS_DUE, keyspace.EVENTS_CLAIMS)
        work = self.tasks.spawn("outbox delivery", self.deliver_outbox(name))
        try:
            while not (await asyncio.wait({work}, timeout=RENEW_S))[0]:
                renewed = raw(await self._renew(keys, RenewArgs(name, lease, now_ms(self.clock), self.lease_ms)))
                if renewed is None:
                    log.warning("webhook delivery of %s: its claim ran out; another process has it", name)
                    return
                lease = renewed.decode()
            try:
                next_due = work.result()
            except (RedisError, OSError):
                raise
            except Exception:  # a fault of one outbox must not hold it (nor its other endpoints) for good
                log.exception("webhook delivery of %s failed; tried again in %d s", name, FAULT_WAIT_MS // 1000)
                next_due = now_ms(self.clock) + FAULT_WAIT_MS
            await self._release(
                keys, ReleaseArgs(name, lease, "" if next_due is None else next_due, now_ms(self.clock))
            )
            self._outage.succeeded()
        except (RedisError, OSError) as error:  # the outbox is tried again when its claim runs out
            self._outage.failed(error)
        finally:
            work.cancel()

    async def _redeliveries(self) -> None:
        """Starts the redeliveries asked for (``WebhookStore.redeliver``)."""
        for _ in range(CONCURRENCY):
            item = raw(await self.redis.lpop(keyspace.REDELIVERIES))
            if item is None:
                return
            app, webhook_id, event_id = item.decode().split(" ")
            self.tasks.spawn("webhook redelivery", self._redeliver(UUID(app), webhook_id, event_id))

    async def _redeliver(self, app: UUID, webhook_id: str, event_id: str) -> None:
        try:
            endpoint = await self.store.find(app, webhook_id)
            delivery = None if endpoint is None else await self.store.delivery(endpoint, event_id)
            if endpoint is None or delivery is None:
                return
            result = await self.send(endpoint, event_id, delivery.body)
            if result.error == BUSY:  # no slot free: asked for again a little later
                await asyncio.sleep(BUSY_WAIT_MS / 1000)
                await self.redis.rpush(keyspace.REDELIVERIES, f"{app} {webhook_id} {event_id}")
                return
            delivery.attempts += 1
            delivery.last_status, delivery.last_error, delivery.next_attempt_ms = result.status, result.error, None
            delivery.status = "delivered" if result.ok else "failed"
            if result.ok:  # a success tells the endpoint's health it answers (a failure is no probe: not counted)
                delivery.delivered_ms = now_ms(self.clock)
                await self.store.outcome(endpoint, True, self.disable_after_ms, self.schedule_ms)
            await self.store.note(endpoint, delivery)
            self._outage.succeeded()
        except (RedisError, OSError) as error:
            self._outage.failed(error)
