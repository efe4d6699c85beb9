"""Answers to ``HEAD`` and ``OPTIONS``: ``HEAD`` wherever ``GET`` is, every method of its path in ``Allow``, and a
refused CORS preflight as problem+json.

``HEAD`` is run as ``GET`` and its body dropped: the same status and headers (``Content-Length`` of the GET's body,
``ETag``, the security headers), no body (RFC 9110 9.3.2). Litestar answers ``HEAD`` 405 on routes declared for
``GET`` alone, and its own ``HEAD`` handlers may return no body, so the method is handled here, once, for every
route (monitors probing ``/health/live`` with ``HEAD`` among them); ``Allow`` lists it beside ``GET``.

Litestar 2 keeps the automatic ``OPTIONS`` handler of the first handler registered on a path, which lists only that
handler's method: ``OPTIONS /v1/players/me`` answered ``Allow: GET, OPTIONS`` though PATCH is there too
(litestar-org/litestar#4169, fixed in Litestar 3). This wrapper puts the methods of every route on the path into the
``Allow`` of such an answer. Litestar's CORS middleware refuses a preflight from an origin not configured with a
plain-text 400; this answers it as every other refusal, problem+json (403 ``cors_origin_not_allowed``). Every other
request passes untouched (one comparison of its method)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Final

from litestar import Litestar
from litestar.routes import HTTPRoute
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from pyramide.service.http.locale import negotiate_locale
from pyramide.service.http.problems import PROBLEM_JSON, HttpCode, allow_with_head, localised, problem_type

_FOUND: Final = ("path_template", "auth", "user")
"""What the layers below put in a ``HEAD`` request's scope (a copy) that the outer layers read."""


def methods_by_path(app: Litestar) -> dict[str, str]:
    """For each path template of ``app``, its ``Allow`` value: every method of every route on it."""
    methods: defaultdict[str, set[str]] = defaultdict(set)
    for route in app.routes:
        if isinstance(route, HTTPRoute):
            methods[route.path_format] |= set(route.methods)
    return {path: allow_with_head(names) for path, names in methods.items()}


class MethodAnswers:
    """The ASGI wrapper for ``HEAD`` and ``OPTIONS`` requests (see the module's docstring)."""

    def __init__(self, app: Litestar, inner: ASGIApp) -> None:
        self.allow = methods_by_path(app)
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method")
        if method == "HEAD":
            await self._head(scope, receive, send)
        elif method == "OPTIONS":
            await self._options(scope, receive, send)
        else:
            await self.inner(scope, receive, send)

    async def _head(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ``GET`` of the same request, every body message emptied (the server still sees ``HEAD``). What
        routing and authentication found (the route's template, the app) is told to the outer layers too: the
        request's log line and span name them."""
        as_get: Any = {**scope, "method": "GET"}

        async def bodiless(message: Message) -> None:
            if message["type"] == "http.response.start":
                scope.update({k: as_get[k] for k in _FOUND if k in as_get})  # type: ignore[typeddict-item]
            if message["type"] == "http.response.body":
                message = {"type": "http.response.body", "body": b"", "more_body": message.get("more_body", False)}
            await send(message)

        await self.inner(as_get, receive, bodiless)

    async def _options(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", ()))
        preflight = b"origin" in headers and b"access-control-request-method" in headers
        refused = False

        async def answered(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start":
                if preflight and message["status"] == 400:
                    refused = True
                    await _refuse(send, headers.get(b"accept-language"))
                    return
                message["headers"] = self._allow(scope, list(message.get("headers", ())))
            if not refused:
                await send(message)

        await self.inner(scope, receive, answered)

    def _allow(self, scope: Scope, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        allow = self.allow.get(str(scope.get("path_template", "")))
        kept = [(k, v) for k, v in headers if k.lower() != b"allow"]
        if allow is None or len(kept) == len(headers):
            return headers
        return [*kept, (b"allow", allow.encode())]


async def _refuse(send: Send, accept_language: bytes | None) -> None:
    """403 ``cors_origin_not_allowed`` as problem+json, in place of Litestar's plain-text answer."""
    locale = negotiate_locale(accept_language.decode("latin-1") if accept_language else None)
    code = HttpCode.CORS_ORIGIN_NOT_ALLOWED
    text = localised(code, locale, {})
    body = json.dumps(
        {"type": problem_type(code), "title": text, "status": 403, "detail": text, "code": code},
        ensure_ascii=False,
    ).encode()
    head = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-language", locale.encode()),
        (b"vary", b"Accept-Language"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 403, "headers": head})
    await send({"type": "http.response.body", "body": body, "more_body": False})
