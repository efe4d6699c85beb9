"""One attempt at delivering an event: the POST to an endpoint's checked address, signed, within the bounds that keep
one app's endpoints from holding the others'.

Each attempt resolves and checks the endpoint's address again (``guard``), connects to that address, follows no
redirect, reads at most ``READ_LIMIT`` bytes of the answer and ends after ``webhook_timeout_s``; at most
``CONCURRENCY`` run at once per process, and at most ``PER_APP`` to one app's endpoints: an attempt that finds its
app's slots all held is ``busy`` at once (nothing sent). Host lookups run in the delivery's own few threads
(``limits.Lookups``), so a silent name server holds no other app's lookups."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Final
from uuid import UUID

import httpx
from standardwebhooks import Webhook

from pyramide.service.events.guard import Refusal, UrlRefusedError, resolve
from pyramide.service.events.limits import KeyedLimit, Lookups
from pyramide.service.events.store import Endpoint, rfc3339
from pyramide.service.infra import tracing
from pyramide.service.infra.clock import SystemClock, utc_now
from pyramide.service.infra.meters import Meters
from pyramide.service.infra.outbox import OutboxEvent

READ_LIMIT: Final = 4096
"""Bytes of an endpoint's answer read at most (its status is what counts)."""
CONCURRENCY: Final = 64
"""Deliveries one process has in flight at most."""
PER_APP: Final = 16
"""Deliveries one process has in flight to one app's endpoints (and so to one endpoint) at most (16 at a 100 ms round
trip: 160 a second): a slow app holds a quarter of the slots and of the outboxes in work (``delivery.OUTBOXES``)."""
BUSY: Final = "busy"
"""What :meth:`Sender.send` answers when the app has no slot free: nothing was sent."""
LOOKUP_THREADS: Final = 32
"""Host lookups one process's deliveries run at once at most (each in a thread of its own)."""
LOOKUPS_PER_APP: Final = 2
"""Host lookups of one app's endpoints running at once at most (a lookup of a host already running is shared)."""

_MACHINE = SystemClock()
"""What signs a delivery's ``webhook-timestamp``: a wire-level freshness stamp that the receiver holds against its
own clock (Standard Webhooks allow five minutes), so the machine's time, whatever clock the service runs on."""


def body_of(event: OutboxEvent) -> str:
    """The JSON body every attempt at delivering ``event`` sends."""
    return json.dumps(
        {"id": event.id, "type": event.type, "timestamp": rfc3339(event.at_ms), "data": event.data},
        separators=(",", ":"),
    )


def sign(endpoint: Endpoint, event_id: str, body: str, at: datetime) -> str:
    """The ``webhook-signature`` header: one ``v1,<base64>`` per secret in force, space-separated."""
    return " ".join(Webhook(s).sign(event_id, at, body) for s in endpoint.secrets(int(at.timestamp() * 1000)))


@dataclass(frozen=True, slots=True)
class Sent:
    """What one attempt got: the answer's status, or why there was none."""

    status: int | None
    error: str | None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def outcome(self) -> str:
        """The attempt in one word, for ``pyramide_webhook_attempts_total``: ``delivered``, ``rejected`` (another
        status), ``timeout``, ``refused`` (the address may not be called) or ``unreachable``."""
        if self.status is not None:
            return "delivered" if self.ok else "rejected"
        if self.error in ("timeout", "refused"):
            return self.error
        return "refused" if (self.error or "").startswith("refused") else "unreachable"


class Sender:
    """The POSTs of one process's deliveries, over one connection pool (see the module)."""

    def __init__(self, timeout_s: float, allow_loopback: bool, meters: Meters) -> None:
        self.timeout_s = timeout_s
        self.meters = meters
        self.allow_loopback = allow_loopback
        self._sending = asyncio.Semaphore(CONCURRENCY)
        self._per_app = KeyedLimit(PER_APP)
        self._lookups = Lookups(LOOKUP_THREADS, LOOKUPS_PER_APP)
        self._client = httpx.AsyncClient(
            follow_redirects=False,
            trust_env=False,
            timeout=httpx.Timeout(self.timeout_s, connect=min(self.timeout_s, 5.0)),
            limits=httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=0),
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def send(self, endpoint: Endpoint, event_id: str, body: str) -> Sent:
        """POSTs ``body`` to the endpoint's checked address, signed now, in a slot of its app (``busy`` at once if
        none is free) once the process has one; a span ``webhook delivery`` while tracing is on."""
        app = str(endpoint.app)
        if self._per_app.full(app):
            return Sent(None, BUSY)
        with tracing.span("webhook delivery", app=app, webhook=endpoint.id, event=event_id):
            async with self._per_app.held(app), self._sending:
                started = time.perf_counter()
                sent = await self._post(endpoint, event_id, body)
        self.meters.webhook_attempt_seconds.observe(time.perf_counter() - started)
        self.meters.webhook_attempts.labels(sent.outcome).inc()
        return sent

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
