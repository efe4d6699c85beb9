"""Idempotency-Key on the POST routes whose domain keeps no answers of its own (a route's ``kept_answer`` opt).

The game routes and ``createPlayer`` keep their answers in their own scripts, in the same step as the change. The
others (creating an app, a webhook or a session, rotating a webhook's secret, bans, reviews, re-deliveries) ignored
the header, so a retry after a lost answer made a second app or a second webhook with another secret (issue 59). Here,
a request with a key first claims it (``SET NX`` with a short lease), runs, and keeps a 2xx answer (status, headers,
body) for ``idempotency_ttl_s``; a retry with the same key and request gets that answer again with
``Idempotent-Replayed: true``, one with another request 409 ``idempotency_key_reused``, and one that arrives while the
first still runs 409 ``idempotency_key_in_use`` with ``Retry-After``. A 4xx answer is not kept: the key is freed and a
retry runs again (the request was refused, nothing changed). A 5xx or an exception may come after a write, so the key
stays claimed until its lease ends: a retry is refused ``idempotency_key_in_use`` until then, never run twice at
once. The claim holds a random owner token and is settled only while it is still the owner's (a compare-and-set,
``lua/kept_answer_settle.lua``), so a first request slower than the lease cannot overwrite a later one's answer. The
middleware is the innermost (app.py): it keeps what the handler answered (a 503 ``storage_unconfirmed`` put in its
place outside is the durability check's, about a change that was made), and its writes run inside the memory reserve
``WhileFull`` gives the operator's requests. The kept answer is sealed with AES-GCM
under a key derived from the Idempotency-Key (routes whose answer holds a secret require keys of at least 32
characters, ``secret_idempotency_key``), and found under a hash of the caller and the key, so neither Redis's
contents nor another caller's key can open it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
from collections.abc import Callable
from typing import Any, Final, NamedTuple

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from litestar import Request
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.body import fingerprint
from pyramide.service.http.headers import idempotency_key, secret_idempotency_key
from pyramide.service.infra import keyspace
from pyramide.service.infra.redis import RedisClient, raw
from pyramide.service.infra.scripts import Loaded, Script

PENDING: Final = b"pending"
LEASE_S: Final = 60
"""How long a claimed key waits for its first request's answer before a retry may run it again (a process that died
mid-request)."""
_NONCE_BYTES: Final = 12
_KEPT_HEADERS: Final = frozenset(
    {b"content-type", b"content-language", b"vary", b"location", b"etag", b"cache-control"}
)
"""What a replay sends again: the body's description and the created thing's place; not the request id, nor the
RateLimit headers of a moment that has passed (a replay spends nothing)."""


class AnswerSeal:
    """Where one caller's answer for one Idempotency-Key is kept, and how it is sealed."""

    def __init__(self, caller: str, idempotency_key: str) -> None:
        secret = idempotency_key.encode()
        lookup = hashlib.sha256(b"pyramide:kept-answer\x1f" + caller.encode() + b"\x1f" + secret).hexdigest()
        self.slot = keyspace.kept_answer(lookup)
        self._aad = lookup.encode()
        derive = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"pyramide", info=b"kept-answer response")
        self._aead = AESGCM(derive.derive(secret))

    def seal(self, print_: str, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> bytes:
        kept = [[k.decode("latin-1"), v.decode("latin-1")] for k, v in headers if k.lower() in _KEPT_HEADERS]
        plain = json.dumps({"fp": print_, "status": status, "headers": kept, "body": base64.b64encode(body).decode()})
        nonce = os.urandom(_NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plain.encode(), self._aad)

    def open(self, sealed: bytes, print_: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        """The kept answer; 409 ``idempotency_key_reused`` when it answered another request."""
        try:
            plain = self._aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], self._aad)
        except InvalidTag:
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED) from None
        kept = json.loads(plain)
        if not hmac.compare_digest(kept["fp"], print_):
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED)
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in kept["headers"]]
        return kept["status"], headers, base64.b64decode(kept["body"])


def caller_of(scope: Scope) -> str:
    """Whom a key belongs to: the authenticated user's kind and id (the operator, an app, a player)."""
    user = scope.get("user")
    return f"{type(user).__name__}:{getattr(user, 'kind', '')}:{getattr(user, 'id', '')}"


class SettleKeys(NamedTuple):
    slot: str


class SettleArgs(NamedTuple):
    owner: bytes
    answer: bytes
    """The sealed answer to keep; empty: free the key."""
    ttl_ms: int


SETTLE: Final = Script("kept_answer_settle", SettleKeys, SettleArgs)


class KeptAnswers:
    """ASGI middleware, the innermost (see the module's docstring)."""

    def __init__(self, app: ASGIApp, redis: Callable[[], RedisClient], ttl_s: int) -> None:
        self.app = app
        self._redis = redis
        self._ttl_ms = ttl_s * 1000
        self._settle: Loaded[SettleKeys, SettleArgs] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        handler: Any = scope.get("route_handler")
        if scope["type"] != ScopeType.HTTP or scope["method"] != "POST" or not _keeps(handler):
            await self.app(scope, receive, send)
            return
        request: Request[Any, Any, Any] = Request(scope, receive)
        secret = handler.opt.get("secret_idempotency_key")
        key = secret_idempotency_key(request) if secret else idempotency_key(request)
        if key is None:
            await self.app(scope, receive, send)
            return
        seal, print_ = AnswerSeal(caller_of(scope), key), await fingerprint(request)
        redis, owner = self._redis(), PENDING + os.urandom(16).hex().encode()
        if await redis.set(seal.slot, owner, nx=True, px=LEASE_S * 1000):
            await self._first(scope, receive, send, seal, print_=print_, owner=owner)
            return
        kept = raw(await redis.get(seal.slot))
        if kept is None or kept.startswith(PENDING):  # the first request still runs (or failed: wait for its lease)
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_IN_USE, retry_after_s=1)
        status, headers, body = seal.open(kept, print_)
        await send({"type": "http.response.start", "status": status, "headers": [*headers, _REPLAYED]})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _first(
        self, scope: Scope, receive: Receive, send: Send, seal: AnswerSeal, *, print_: str, owner: bytes
    ) -> None:
        """Run the request; keep a 2xx answer, free the key after a 4xx, leave it claimed after a 5xx."""
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def kept(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
            await send(message)

        await self.app(scope, receive, kept)  # an exception leaves the key claimed until its lease ends
        status = start.get("status", 500)
        if status >= 500:
            return  # the change may have been made: a retry waits for the lease rather than run it again
        answer = seal.seal(print_, status, list(start.get("headers", ())), b"".join(chunks)) if status < 300 else b""
        if self._settle is None:
            self._settle = SETTLE.load(self._redis())
        await self._settle(SettleKeys(seal.slot), SettleArgs(owner, answer, self._ttl_ms))


_REPLAYED: Final = (b"idempotent-replayed", b"true")


def _keeps(handler: Any) -> bool:
    return handler is not None and bool(handler.opt.get("kept_answer"))
