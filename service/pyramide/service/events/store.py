"""Webhook endpoints and their delivery logs, in the app's slot (``pyr:{app:<id>}:…``).

An endpoint is one field of the app's hash ``keyspace.webhooks`` (its JSON: URL, event types, secrets); its log keeps
each delivery's state and body (``webhook_deliveries``) in the order of ``webhook_log``, the newest ``LOG_KEPT``; its
health (``webhook_health``: failing since when, the last success, the next probe, disabled or not) decides whether
deliveries try it: an endpoint that has failed without a single success for ``webhook_disable_after_s`` is disabled
(its events are ``skipped``) until the app enables it again."""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from typing import Final, NamedTuple
from uuid import UUID

from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.events.types import EventType
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock, now_ms
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.infra.scripts import Result, Script

MAX_WEBHOOKS: Final = 10
"""Endpoints one app may have (409 ``too_many_webhooks`` past it)."""
LOG_KEPT: Final = 1000
"""Deliveries each endpoint's log keeps: the newest."""
ROTATION_GRACE_MS: Final = 24 * 3600 * 1000
"""How long a replaced secret keeps signing beside the new one."""
PROBE_RECHECK_MS: Final = 1000
"""While an attempt probes a failing endpoint, how soon the other outboxes waiting for it look again (its success
lets them go)."""


class AddKeys(NamedTuple):
    webhooks: str


class AddArgs(NamedTuple):
    id: str
    endpoint: str


class NoteKeys(NamedTuple):
    webhooks: str
    log: str
    deliveries: str


class NoteArgs(NamedTuple):
    endpoint: str
    event: str
    created: int
    delivery: str


ADD: Final = Script("webhook_add", AddKeys, AddArgs, constants=("MAX",))
NOTE: Final = Script("webhook_note", NoteKeys, NoteArgs, constants=("KEPT",))


class HealthKeys(NamedTuple):
    health: str


class GateArgs(NamedTuple):
    now: int
    hold_ms: int
    recheck_ms: int


class OutcomeKeys(NamedTuple):
    webhooks: str
    health: str


class OutcomeArgs(NamedTuple):
    endpoint: str
    now: int
    ok: int
    probe: int
    """1 when the attempt was the probe of a failing endpoint (``Gate.probe``)."""
    disable_after_ms: int
    waits: str
    """The retry schedule's waits (ms), comma-separated: the wait after n failures in a row is the n-th (0-based),
    the last for more."""


GATE: Final = Script("webhook_gate", HealthKeys, GateArgs)
OUTCOME: Final = Script("webhook_outcome", OutcomeKeys, OutcomeArgs)
HEALTH_FIELDS: Final = ("disabled_at", "disabled_reason", "failing_since", "failures", "next_probe", "probing_until")
"""The health fields enabling an endpoint clears (``last_success`` stays)."""


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()


def new_id() -> str:
    """An endpoint id: ``wh_`` and 26 lowercase base32 characters (130 random bits)."""
    return "wh_" + base64.b32encode(secrets.token_bytes(20)).decode().lower()[:26]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One webhook endpoint of an app."""

    id: str
    app: str
    url: str
    events: list[str]
    description: str | None
    created_ms: int
    secret: str
    old_secret: str | None = None
    """The secret replaced last, which keeps signing beside ``secret`` until ``old_until_ms``."""
    old_until_ms: int = 0

    def secrets(self, at_ms: int) -> list[str]:
        """The secrets a delivery at ``at_ms`` is signed with: the current one, and the replaced one in its grace."""
        return [self.secret] + ([self.old_secret] if self.old_secret and at_ms < self.old_until_ms else [])

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: bytes | str) -> Endpoint:
        return cls(**json.loads(text))


@dataclass(frozen=True, slots=True)
class Health:
    """Whether deliveries try an endpoint (ms; None: never): failing since when (no success since), the last
    success, and since when it is disabled (and why: ``failing``)."""

    failing_since_ms: int | None = None
    last_success_ms: int | None = None
    disabled_ms: int | None = None
    disabled_reason: str | None = None

    @classmethod
    def from_hash(cls, fields: dict[bytes, bytes]) -> Health:
        def number(name: str) -> int | None:
            value = fields.get(name.encode())
            return None if value is None else int(value)

        reason = fields.get(b"disabled_reason")
        reason_text = None if reason is None else reason.decode()
        return cls(number("failing_since"), number("last_success"), number("disabled_at"), reason_text)


class Gate(NamedTuple):
    """Whether a delivery may try an endpoint now: ``go``, or, when it is failing, ``wait_until`` (ms) its next
    probe; ``disabled``: not at all."""

    go: bool
    disabled: bool = False
    wait_until: int = 0
    probe: bool = False
    """The attempt let through is the probe of a failing endpoint: only its failure counts as one more in a row."""


@dataclass(slots=True)
class Delivery:
    """One event's delivery to one endpoint, as its log keeps it."""

    event_id: str
    type: str
    body: str
    """The JSON body sent (the same on every attempt and redelivery)."""
    created_ms: int
    status: str = "pending"
    """``pending`` | ``delivered`` | ``retrying`` | ``failed`` | ``skipped`` (not tried: the endpoint was
    disabled)."""
    attempts: int = 0
    last_status: int | None = None
    last_error: str | None = None
    next_attempt_ms: int | None = None
    delivered_ms: int | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: bytes | str) -> Delivery:
        return cls(**json.loads(text))


class WebhookStore:
    """The endpoints of every app and their logs."""

    def __init__(self, redis: RedisClient, *, clock: Clock) -> None:
        self.redis = redis
        self.clock = clock
        self._add = ADD.load(redis, MAX=MAX_WEBHOOKS)
        self._note = NOTE.load(redis, KEPT=LOG_KEPT)
        self._gate = GATE.load(redis)
        self._outcome = OUTCOME.load(redis)

    async def add(self, app: UUID, url: str, events: list[str], description: str | None) -> Endpoint:
        """A new endpoint (its secret shown once by the caller); 409 ``too_many_webhooks`` past ``MAX_WEBHOOKS``."""
        endpoint = Endpoint(new_id(), str(app), url, events, description, now_ms(self.clock), new_secret())
        answer = Result(int(await self._add(AddKeys(keyspace.webhooks(app)), AddArgs(endpoint.id, endpoint.to_json()))))
        if answer is Result.FULL:
            raise DomainError(ErrorCode.TOO_MANY_WEBHOOKS, limit=str(MAX_WEBHOOKS))
        await self.redis.sadd(keyspace.WEBHOOK_APPS, str(app))  # after the endpoint: see forget_if_none
        return endpoint

    async def endpoints(self, app: UUID) -> list[Endpoint]:
        """The app's endpoints, the oldest first."""
        found = await self.redis.hgetall(keyspace.webhooks(app))
        return sorted((Endpoint.from_json(v) for v in found.values()), key=lambda e: (e.created_ms, e.id))

    async def find(self, app: UUID, webhook_id: str) -> Endpoint | None:
        text = raw(await self.redis.hget(keyspace.webhooks(app), webhook_id))
        return None if text is None else Endpoint.from_json(text)

    async def get(self, app: UUID, webhook_id: str) -> Endpoint:
        """One endpoint; 404 ``webhook_not_found``."""
        endpoint = await self.find(app, webhook_id)
        if endpoint is None:
            raise DomainError(ErrorCode.WEBHOOK_NOT_FOUND)
        return endpoint

    async def delete(self, app: UUID, webhook_id: str) -> None:
        """Removes an endpoint and its log; 404 ``webhook_not_found``."""
        if not await self.redis.hdel(keyspace.webhooks(app), webhook_id):
            raise DomainError(ErrorCode.WEBHOOK_NOT_FOUND)
        await self.redis.delete(*keyspace.webhook_keys(app, webhook_id))
        await forget_if_none(self.redis, app)

    async def rotate(self, app: UUID, webhook_id: str) -> Endpoint:
        """A new secret; the current one keeps signing beside it for ``ROTATION_GRACE_MS``."""
        endpoint = await self.get(app, webhook_id)
        rotated = replace(
            endpoint,
            secret=new_secret(),
            old_secret=endpoint.secret,
            old_until_ms=now_ms(self.clock) + ROTATION_GRACE_MS,
        )
        await self.redis.hset(keyspace.webhooks(app), mapping={webhook_id: rotated.to_json()})
        return rotated

    async def endpoints_of(self, apps: set[str]) -> list[Endpoint]:
        """The endpoints of ``apps`` (``*``: of every app with any)."""
        if "*" in apps:
            apps = {(raw(m) or b"").decode() for m in await self.redis.smembers(keyspace.WEBHOOK_APPS)}
        found: list[Endpoint] = []
        for app in sorted(apps):
            try:
                found.extend(await self.endpoints(UUID(app)))
            except ValueError:
                continue
        return found

    async def note(self, endpoint: Endpoint, delivery: Delivery) -> None:
        """Writes a delivery's state to its endpoint's log (the newest ``LOG_KEPT`` are kept), in one script in the
        app's slot and only while the endpoint exists: a delivery that was in flight when its endpoint was deleted
        (or its app revoked) leaves no log behind (``lua/webhook_note.lua``)."""
        app = UUID(endpoint.app)
        keys = NoteKeys(
            keyspace.webhooks(app),
            keyspace.webhook_log(app, endpoint.id),
            keyspace.webhook_deliveries(app, endpoint.id),
        )
        await self._note(keys, NoteArgs(endpoint.id, delivery.event_id, delivery.created_ms, delivery.to_json()))

    async def delivery(self, endpoint: Endpoint, event_id: str) -> Delivery | None:
        text = raw(await self.redis.hget(keyspace.webhook_deliveries(UUID(endpoint.app), endpoint.id), event_id))
        return None if text is None else Delivery.from_json(text)

    async def deliveries(self, endpoint: Endpoint, offset: int, limit: int) -> tuple[list[Delivery], int]:
        """A page of the endpoint's log, the newest first, and how many it holds."""
        app = UUID(endpoint.app)
        log = keyspace.webhook_log(app, endpoint.id)
        ids = [(raw(m) or b"").decode() for m in await self.redis.zrevrange(log, offset, offset + limit - 1)]
        total = int(await self.redis.zcard(log))
        if not ids:
            return [], total
        texts = await self.redis.hmget(keyspace.webhook_deliveries(app, endpoint.id), ids)
        return [Delivery.from_json(t) for t in texts if t is not None], total

    async def redeliver(self, endpoint: Endpoint, event_id: str) -> None:
        """Queues the event's delivery again (same id and body, a new timestamp and signature); 404
        ``delivery_not_found`` for an event not in the endpoint's log."""
        delivery = await self.delivery(endpoint, event_id)
        if delivery is None:
            raise DomainError(ErrorCode.DELIVERY_NOT_FOUND)
        await self.redis.rpush(keyspace.REDELIVERIES, f"{endpoint.app} {endpoint.id} {event_id}")

    async def send_test(self, endpoint: Endpoint) -> str:
        """Queues a ``webhook.test`` event for ``endpoint`` alone (written to its log, then delivered as a
        redelivery is: signed, once, its outcome in the log); its id."""
        now = now_ms(self.clock)
        event_id = "evt_" + base64.b32encode(secrets.token_bytes(20)).decode().lower()[:26]
        data = {"webhook_id": endpoint.id, "message": "A test event: nothing happened in the service."}
        body = json.dumps(
            {"id": event_id, "type": EventType.WEBHOOK_TEST.value, "timestamp": rfc3339(now), "data": data},
            separators=(",", ":"),
        )
        await self.note(endpoint, Delivery(event_id, EventType.WEBHOOK_TEST.value, body, now))
        await self.redis.rpush(keyspace.REDELIVERIES, f"{endpoint.app} {endpoint.id} {event_id}")
        return event_id

    async def health(self, endpoint: Endpoint) -> Health:
        """The endpoint's health, as its JSON shows it."""
        return Health.from_hash(await self.redis.hgetall(_health_key(endpoint)))

    async def disabled(self, endpoint: Endpoint) -> bool:
        health = _health_key(endpoint)
        return raw(await self.redis.hget(health, "disabled_at")) is not None

    async def enable(self, app: UUID, webhook_id: str) -> Endpoint:
        """Enables an endpoint again, afresh (not failing, no probe waited for); 404 ``webhook_not_found``."""
        endpoint = await self.get(app, webhook_id)
        await self.redis.hdel(keyspace.webhook_health(app, webhook_id), *HEALTH_FIELDS)
        return endpoint

    async def gate(self, endpoint: Endpoint, hold_ms: int) -> Gate:
        """Whether a delivery may try the endpoint now (``lua/webhook_gate.lua``): a failing endpoint is probed by
        one attempt at a time, at the pace of the retry schedule, whatever the outboxes waiting for it."""
        answer = await self._gate(
            HealthKeys(_health_key(endpoint)),
            GateArgs(now_ms(self.clock), hold_ms, PROBE_RECHECK_MS),
        )
        result = Result(int(answer[0]))
        if result is Result.FORBIDDEN:
            return Gate(go=False, disabled=True)
        if result is Result.LIMITED:
            return Gate(go=False, wait_until=int(answer[1]))
        return Gate(go=True, probe=len(answer) > 1)

    async def let_go(self, endpoint: Endpoint) -> None:
        """Lets go of the probe a gate let through when no attempt was made (no slot was free)."""
        await self.redis.hdel(_health_key(endpoint), "probing_until")

    async def outcome(
        self, endpoint: Endpoint, ok: bool, disable_after_ms: int, waits_ms: list[int], *, probe: bool = False
    ) -> bool:
        """Notes an attempt's outcome in the endpoint's health (``lua/webhook_outcome.lua``); whether the endpoint
        is disabled now."""
        answer = await self._outcome(
            OutcomeKeys(keyspace.webhooks(UUID(endpoint.app)), _health_key(endpoint)),
            OutcomeArgs(
                endpoint.id, now_ms(self.clock), int(ok), int(probe), disable_after_ms, ",".join(map(str, waits_ms))
            ),
        )
        return Result(int(answer[0])) is Result.FORBIDDEN


def _health_key(endpoint: Endpoint) -> str:
    return keyspace.webhook_health(UUID(endpoint.app), endpoint.id)


async def forget_if_none(redis: RedisClient, app: UUID) -> None:
    """Takes ``app`` out of ``WEBHOOK_APPS`` (which every event for every app reads) once it has no endpoint. The set
    and the app's hash are in different slots, so no script holds both: it is taken out, then the hash is read again
    and the app put back if an endpoint appeared meanwhile (an adder writes its endpoint before it adds the app to
    the set, so one of the two sees the other's write)."""
    if await redis.hlen(keyspace.webhooks(app)):
        return
    await redis.srem(keyspace.WEBHOOK_APPS, str(app))
    if await redis.hlen(keyspace.webhooks(app)):
        await redis.sadd(keyspace.WEBHOOK_APPS, str(app))


def rfc3339(ms: int) -> str:
    """An event's time as its body writes it: UTC, milliseconds, ``Z`` (``sending.body_of`` and :meth:`send_test`)."""
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
