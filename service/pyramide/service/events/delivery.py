"""Delivering events to webhook endpoints: a background task in every process.

It claims a due outbox from ``EVENTS_DUE`` (``lua/events_claim.lua``: the outbox's score moves to now + a lease,
noted in ``EVENTS_CLAIMS``, so two processes, or two tasks of one, never work one outbox at once, even when a new event
marks it due meanwhile, and a dead process's claim runs out), reads its entries in order, and
sends each to the endpoints of its app (``*``: every app) subscribed to its type. Per endpoint and outbox, events go
in entry order: while one is retrying, the later ones wait for that endpoint only (its cursor in
``keyspace.delivery_cursors``); the others go on. A failed attempt is tried again after the next wait of
``webhook_retry_schedule_s``; after the last, the delivery is ``failed`` and the endpoint moves on. A failing
endpoint is probed by one attempt at a time, whatever the outboxes waiting for it (``WebhookStore.gate``, at the
schedule's pace); one that has failed without a success for ``webhook_disable_after_s`` is disabled: its events are
``skipped`` (noted in its log, not sent) and its cursors move past them until the app enables it. An entry leaves the
outbox once every endpoint is past it; an empty outbox leaves ``EVENTS_DUE`` (``lua/events_release.lua``) unless an
event was marked due while it was claimed.

Each delivery resolves and checks the endpoint's address again (``guard``), connects to that address, follows no
redirect, reads at most ``READ_LIMIT`` bytes of the answer and ends after ``webhook_timeout_s``; at most
``CONCURRENCY`` run at once per process, and endpoints are served side by side, so a slow one holds no other. At most
``PER_APP`` of them go to one app's endpoints at once, so one slow app cannot take every slot, nor every outbox in
work: a delivery that finds its app's slots all held is ``busy`` at once: not an attempt (nothing sent, nothing
counted against the event or the endpoint's health), its outbox let go and due again ``BUSY_WAIT_MS`` later. Host
lookups run in the delivery's own few threads (``limits.Lookups``), so a silent name server holds no other app's
lookups.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, NamedTuple
from uuid import UUID

import httpx
from redis.exceptions import RedisError
from standardwebhooks import Webhook

from pyramide.service.events.guard import Refusal, UrlRefusedError, resolve
from pyramide.service.events.limits import KeyedLimit, Lookups
from pyramide.service.events.store import Delivery, Endpoint, WebhookStore
from pyramide.service.infra import keyspace, outbox
from pyramide.service.infra.clock import SystemClock, now_ms, utc_now
from pyramide.service.infra.outbox import OutboxEvent
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.infra.scripts import Script
from pyramide.service.infra.settings import Settings

log = logging.getLogger("pyramide.service")

READ_LIMIT: Final = 4096
"""Bytes of an endpoint's answer read at most (its status is what counts)."""
CONCURRENCY: Final = 64
"""Deliveries one process has in flight at most."""
PER_APP: Final = 16
"""Deliveries one process has in flight to one app's endpoints (and so to one endpoint) at most (16 at a 100 ms round
trip: 160 a second): a slow app holds a quarter of the slots and of the outboxes in work (``OUTBOXES``)."""
BUSY: Final = "busy"
"""What :meth:`Deliverer.send` answers when the app has no slot free: nothing was sent."""
BUSY_WAIT_MS: Final = 1000
"""How long an outbox whose delivery was ``busy`` waits before it is claimed again."""
LOOKUP_THREADS: Final = 32
"""Host lookups one process's deliveries run at once at most (each in a thread of its own)."""
LOOKUPS_PER_APP: Final = 2
"""Host lookups of one app's endpoints running at once at most (a lookup of a host already running is shared)."""
OUTBOXES: Final = 64
"""Outboxes one process works on at once at most."""
PAGE: Final = 100
"""Outbox entries read per claim."""
PER_CLAIM: Final = 10
"""Deliveries to one endpoint per claim at most (then the outbox is due again at once): bounds a claim's time."""
LEASE_MS: Final = 10_000
"""How long a claim on an outbox lasts unless renewed: a process killed while working on one holds it that long."""
RENEW_S: Final = 3.0
"""How often a process renews the claims it works under (well within ``LEASE_MS``)."""
POLL_S: Final = 0.2
"""How often a process looks for due outboxes at least (it looks at once when it marks one due itself, and when an
outbox's work ends)."""
FAULT_WAIT_MS: Final = 60_000
"""How long an outbox whose delivery failed unexpectedly waits before it is tried again."""
SWEEP_S: Final = 300
"""How often a process sweeps for outboxes whose due mark was lost (a process died between its save and it)."""


_MACHINE = SystemClock()
"""What signs a delivery's ``webhook-timestamp``: a wire-level freshness stamp that the receiver holds against its
own clock (Standard Webhooks allow five minutes), so the machine's time, whatever clock the service runs on."""


class ClaimKeys(NamedTuple):
    due: str
    claims: str


class ClaimArgs(NamedTuple):
    now: int
    lease_ms: int


class ReleaseKeys(NamedTuple):
    due: str
    claims: str


class ReleaseArgs(NamedTuple):
    outbox: str
    lease: str
    next: int | str
    """When the outbox is due again (ms); '' when it is empty."""
    now: int


class RenewArgs(NamedTuple):
    outbox: str
    lease: str
    now: int
    lease_ms: int


CLAIM: Final = Script("events_claim", ClaimKeys, ClaimArgs)
RELEASE: Final = Script("events_release", ReleaseKeys, ReleaseArgs)
RENEW: Final = Script("events_renew", ReleaseKeys, RenewArgs)


def entry_key(entry: str) -> tuple[int, int]:
    """A stream entry id in its order."""
    ms, _, seq = entry.partition("-")
    return int(ms), int(seq or 0)


def rfc3339(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def body_of(event: OutboxEvent) -> str:
    """The JSON body every attempt at delivering ``event`` sends."""
    return json.dumps(
        {"id": event.id, "type": event.type, "timestamp": rfc3339(event.at_ms), "data": event.data},
        separators=(",", ":"),
    )


def wants(endpoint: Endpoint, event: OutboxEvent) -> bool:
    """Whether ``endpoint`` gets ``event``: its app's (or every app's), a type it subscribed to, emitted after it
    was registered."""
    return event.app in ("*", endpoint.app) and event.type in endpoint.events and event.at_ms >= endpoint.created_ms


def sign(endpoint: Endpoint, event_id: str, body: str, at: datetime) -> str:
    """The ``webhook-signature`` header: one ``v1,<base64>`` per secret in force, space-separated."""
    return " ".join(Webhook(s).sign(event_id, at, body) for s in endpoint.secrets(int(at.timestamp() * 1000)))


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


@dataclass(frozen=True, slots=True)
class Sent:
    """What one attempt got: the answer's status, or why there was none."""

    status: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


class Deliverer:
    """The delivery task of one process (see the module)."""

    def __init__(self, redis: RedisClient, store: WebhookStore, settings: Settings) -> None:
        self.redis = redis
        self.store = store
        self.clock = store.clock
        self.schedule_ms = [int(wait * 1000) for wait in settings.webhook_retry_schedule_s]
        self.timeout_s = settings.webhook_timeout_s
        self.disable_after_ms = int(settings.webhook_disable_after_s * 1000)
        self.probe_hold_ms = int(self.timeout_s * 2000) + 1000
        """How long an attempt at a failing endpoint holds its probe (the others wait for its outcome meanwhile): a
        wait for a slot and a POST, each within the timeout."""
        self.allow_loopback = settings.webhook_allow_loopback
        self.lease_ms = LEASE_MS
        self._claim = CLAIM.load(redis)
        self._release = RELEASE.load(redis)
        self._renew = RENEW.load(redis)
        self._settle = outbox.SETTLE.load(redis)
        self._sending = asyncio.Semaphore(CONCURRENCY)
        self._per_app = KeyedLimit(PER_APP)
        self._lookups = Lookups(LOOKUP_THREADS, LOOKUPS_PER_APP)
        self._working: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        """Set when this process marks an outbox due or an outbox's work ends: claim again without waiting for the
        poll."""
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(self.timeout_s, connect=min(self.timeout_s, 5.0)),
            limits=httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=0),
        )

    async def run(self) -> None:
        """Works until cancelled: sweeps at start and every ``SWEEP_S``, and claims due outboxes."""
        next_sweep = 0.0
        self._wake = outbox.wake_on_due()
        while True:
            try:
                if self.clock.monotonic() >= next_sweep:
                    await outbox.sweep(self.redis, now_ms(self.clock))
                    next_sweep = self.clock.monotonic() + SWEEP_S
                await self._redeliveries()
                while len(self._working) < OUTBOXES:
                    claimed = await self._claim(
                        ClaimKeys(keyspace.EVENTS_DUE, keyspace.EVENTS_CLAIMS),
                        ClaimArgs(now_ms(self.clock), self.lease_ms),
                    )
                    if not claimed:
                        break
                    name, lease = (raw(claimed[0]) or b"").decode(), (raw(claimed[1]) or b"").decode()
                    self._spawn(self._work(name, lease))
            except (RedisError, OSError) as error:
                log.warning("webhook delivery: %s", error)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_S)
            self._wake.clear()

    async def close(self) -> None:
        """Stops the outboxes in work (their claims run out) and closes the connections."""
        for task in list(self._working):
            task.cancel()
        for task in list(self._working):
            with contextlib.suppress(BaseException):
                await task
        await self._client.aclose()

    def _spawn(self, work: object) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(work)  # type: ignore[arg-type]
        self._working.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._working.discard(task)
        self._wake.set()

    async def _work(self, name: str, lease: str) -> None:
        """Delivers one claimed outbox, renewing the claim every ``RENEW_S`` while it works, then lets it go."""
        keys = ReleaseKeys(keyspace.EVENTS_DUE, keyspace.EVENTS_CLAIMS)
        work = asyncio.ensure_future(self.deliver_outbox(name))
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
        except (RedisError, OSError) as error:
            log.warning("webhook delivery of %s: %s (tried again when its claim runs out)", name, error)
        finally:
            work.cancel()

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
        result = await self.send(endpoint, event.id, delivery.body)
        if result.error == BUSY:
            return None
        disabled = await self.store.outcome(endpoint, result.ok, self.disable_after_ms, self.schedule_ms, probe=probe)
        delivery.attempts += 1
        delivery.last_status, delivery.last_error = result.status, result.error
        if result.ok:
            delivery.status, delivery.delivered_ms, delivery.next_attempt_ms = "delivered", now_ms(self.clock), None
        elif disabled or attempts + 1 >= len(self.schedule_ms):
            delivery.status, delivery.next_attempt_ms = "failed", None
        else:
            delivery.status, delivery.next_attempt_ms = "retrying", now_ms(self.clock) + self.schedule_ms[attempts + 1]
        await self.store.note(endpoint, delivery)
        return result.ok, disabled

    async def send(self, endpoint: Endpoint, event_id: str, body: str) -> Sent:
        """POSTs ``body`` to the endpoint's checked address, signed now, in a slot of its app (``busy`` at once if
        none is free) once the process has one."""
        app = str(endpoint.app)
        if self._per_app.full(app):
            return Sent(None, BUSY)
        async with self._per_app.held(app), self._sending:
            return await self._post(endpoint, event_id, body)

    async def check(self, app: UUID, url: str) -> None:
        """Checks a URL to register as a delivery would, its host resolved in the delivery's own lookups (a name
        server that never answers holds none of the event loop's executor threads) within ``webhook_timeout_s``:
        :class:`UrlRefusedError` if it may not be called, ``unresolvable`` when no answer came in time."""
        try:
            async with asyncio.timeout(self.timeout_s):
                await resolve(url, self.allow_loopback, lambda host, port: self._lookups.lookup(str(app), host, port))
        except TimeoutError:
            raise UrlRefusedError(Refusal.UNRESOLVABLE) from None

    async def _post(self, endpoint: Endpoint, event_id: str, body: str) -> Sent:
        """One POST, its host resolved in the delivery's own lookups, all within ``webhook_timeout_s``."""
        try:
            async with asyncio.timeout(self.timeout_s):
                app = str(endpoint.app)
                target = await resolve(
                    endpoint.url, self.allow_loopback, lambda host, port: self._lookups.lookup(app, host, port)
                )
                at = utc_now(_MACHINE)  # the receiver checks it against its own clock (docs/time.md)
                headers = {
                    "Host": target.host_header,
                    "Content-Type": "application/json",
                    "User-Agent": "pyramide-webhooks",
                    "webhook-id": event_id,
                    "webhook-timestamp": str(int(at.timestamp())),
                    "webhook-signature": sign(endpoint, event_id, body, at),
                }
                request = self._client.build_request(
                    "POST",
                    target.url,
                    content=body.encode(),
                    headers=headers,
                    extensions={"sni_hostname": target.host},
                )
                response = await self._client.send(request, stream=True)
                try:
                    read = 0
                    async for chunk in response.aiter_raw():
                        read += len(chunk)
                        if read >= READ_LIMIT:
                            break
                finally:
                    await response.aclose()
                return Sent(response.status_code, None)
        except UrlRefusedError as refused:
            return Sent(None, f"refused: {refused.reason.value}")
        except TimeoutError:
            return Sent(None, "timeout")
        except (httpx.HTTPError, httpx.InvalidURL, ValueError) as error:  # UnicodeError is a ValueError
            return Sent(None, type(error).__name__)

    async def _redeliveries(self) -> None:
        """Starts the redeliveries asked for (``WebhookStore.redeliver``)."""
        for _ in range(CONCURRENCY):
            item = raw(await self.redis.lpop(keyspace.REDELIVERIES))
            if item is None:
                return
            app, webhook_id, event_id = item.decode().split(" ")
            self._spawn(self._redeliver(UUID(app), webhook_id, event_id))

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
        except (RedisError, OSError) as error:
            log.warning("webhook redelivery of %s: %s", event_id, error)
