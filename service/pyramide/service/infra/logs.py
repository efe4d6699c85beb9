"""Logs an operator can use: one JSON object per line, a request id on every request, one line per request.

The request id is the client's ``X-Request-ID`` when it sends a usable one (1-200 visible ASCII characters), else a
new random one; it is returned in ``X-Request-ID`` on every response and named in every line logged while the
request runs. Stack traces are written only for 5xx (the exception handlers log those; nothing logs a 4xx's).
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import sys
import time
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Final

import msgspec
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

from pyramide.service.infra import tracing
from pyramide.service.infra.clock import SystemClock
from pyramide.service.infra.response_span import SPAN, ResponseSpan
from pyramide.service.infra.settings import Logs

REQUEST_ID: Final = contextvars.ContextVar[str | None]("request_id", default=None)
_USABLE_ID: Final = re.compile(rb"[\x21-\x7e]{1,200}")
_HEADER: Final = b"x-request-id"
_STANDARD: Final = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "color_message"}


_MACHINE = SystemClock()


class JsonFormatter(logging.Formatter):
    """A log record as one line of JSON: time, level, logger, message, the request id, the trace and span ids
    (while tracing is on, inside a span), any ``extra`` fields, and the stack trace when one was logged."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _timestamp(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = REQUEST_ID.get()
        if request_id is not None:
            line["request_id"] = request_id
        ids = tracing.current_ids()
        if ids is not None:
            line["trace_id"], line["span_id"] = ids
        line.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD})
        if record.exc_info:
            line["trace"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


def configure_logging(logs: Logs) -> None:
    """JSON lines on standard error at ``logs.log_level``, for the service's loggers and uvicorn's."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logs.log_level)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    logging.getLogger("uvicorn.access").disabled = True


class RequestLog:
    """The ASGI wrapper that gives each request its id and logs it once it is answered.

    The request line is the one hand-written hot path of logging: it is encoded with msgspec and written straight to
    the stream of the root handler (standard error) when ``pyramide.request`` is enabled for its level, instead of
    going through a ``LogRecord`` and the JSON formatter, which cost 17 % of a move request's instructions
    (``benchmarks/service_instructions.py``, measured on 2416135). The line has the same fields as
    :class:`JsonFormatter` writes, and the request's own: ``method``, ``route`` (the route's template, such as
    ``/v1/games/{game_id}/moves``: never the path, whose ids would leak into the logs and make every line a series
    of its own; ``null`` when no route matched), ``status``, ``app`` (the calling app's id, when an app's key or session
    made the request), ``duration_ms``. With ``traced`` (tracing is on and its middleware wraps this one), the line also
    names the request's ``trace_id`` and ``span_id``."""

    def __init__(self, logs: Logs, *, traced: bool = False) -> None:
        self.log = logging.getLogger("pyramide.request")
        self.level = logging.getLevelName(logs.request_log_level)
        self.level_name = logs.request_log_level
        self.traced = traced

    def wrap(self, app: ASGIApp) -> ASGIApp:
        log, level, write_line = self.log, self.level, self._line

        async def logged(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != ScopeType.HTTP:
                await app(scope, receive, send)
                return
            request_id = _request_id(scope["headers"])
            token = REQUEST_ID.set(request_id)
            started = time.perf_counter()
            span = scope[SPAN] = ResponseSpan()  # type: ignore[typeddict-unknown-key]
            header = (_HEADER, request_id.encode())

            async def identified(message: Message) -> None:  # the service's one wrapper of send (response_span)
                if message["type"] == "http.response.start":
                    span.status = message["status"]
                    message["headers"] = [*message.get("headers", ()), header]
                elif message["type"] == "http.response.body":
                    span.body_at = time.perf_counter()
                await send(message)

            try:
                await app(scope, receive, identified)
            finally:
                span.finish()
                if log.isEnabledFor(level):
                    write_line(scope, span.status, request_id, time.perf_counter() - started)
                REQUEST_ID.reset(token)

        return logged

    def _line(self, scope: Scope, status: int, request_id: str, duration_s: float) -> None:
        now = _MACHINE.time()  # stamped like every other log record: the machine's time, not the service's clock
        method, route = scope["method"], scope.get("path_template")  # type: ignore[typeddict-item]
        line = {
            "time": _timestamp(now),
            "level": self.level_name,
            "logger": "pyramide.request",
            "message": f"{method} {route} {status}",
            "request_id": request_id,
            "method": method,
            "route": route,
            "status": status,
            "app": _app(scope),
            "duration_ms": round(duration_s * 1000, 2),
        }
        if self.traced and (ids := tracing.current_ids()) is not None:
            line["trace_id"], line["span_id"] = ids
        stream = _stream()
        stream.write(_ENCODE(line) + b"\n")
        stream.flush()


def _app(scope: Scope) -> str | None:
    """The id of the app whose key or session made the request: the app the authentication put in ``scope["auth"]``
    (a player route or an app route), else the app of the caller (an admin route's principal, an app's player
    come with its session); ``None`` for an anonymous player and for the operator."""
    app_id = getattr(scope.get("auth"), "id", None) or getattr(scope.get("user"), "app_id", None)
    return None if app_id is None else str(app_id)


_ENCODE: Final = msgspec.json.Encoder().encode


def _stream() -> Any:
    """Where the root handler writes (standard error unless configured otherwise), as bytes; a text stream with no
    binary buffer under it (a ``StringIO`` a test or an embedding program set) through :class:`_Text`, since a
    request's log line must never fail the request."""
    for handler in logging.getLogger().handlers:
        stream = getattr(handler, "stream", None)
        if stream is not None:
            binary = getattr(stream, "buffer", None)
            return binary if binary is not None else _Text(stream)
    return sys.stderr.buffer


class _Text:
    """A text stream written with bytes (UTF-8)."""

    __slots__ = ("stream",)

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def write(self, data: bytes) -> None:
        self.stream.write(data.decode())


@lru_cache(maxsize=4)
def _second(second: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))


def _timestamp(now: float) -> str:
    return f"{_second(int(now))}.{int(now * 1000) % 1000:03d}Z"


def request_id(headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The client's ``X-Request-ID`` among ``headers`` when it is usable, else a new random one."""
    for name, value in headers:
        if name == _HEADER:
            return value.decode() if _USABLE_ID.fullmatch(value) else os.urandom(8).hex()
    return os.urandom(8).hex()


_request_id: Final = request_id
