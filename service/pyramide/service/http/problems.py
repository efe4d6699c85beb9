"""Errors as RFC 9457 problem details: a stable ``code`` and its text in the caller's language.

Every error the service answers with goes through :func:`problem_response`, framework errors (malformed JSON, 404,
405 with its ``Allow`` header) included, so clients only ever parse one error shape.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Final

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pyramide.engine import InvalidInputError, PyramideError
from pyramide.engine.codes import Code
from pyramide.engine.messages import CATALOGUE, Locale, render, section
from pyramide.service.errors import DomainError, ErrorCode, MoveRefusedError
from pyramide.service.http.locale import locale_for
from pyramide.service.http.validation import parameter_error, summary
from pyramide.service.infra.meters import process_meters
from pyramide.service.infra.metrics import STORAGE_FULL
from pyramide.service.infra.outage import RefusalLog
from pyramide.service.infra.ratelimit import QuotaExceededError, RateLimitedError
from pyramide.service.infra.redis import storage_full, writes_unavailable

PROBLEM_JSON: Final = "application/problem+json"
RETRY_AFTER_S: Final = 1
log = logging.getLogger("pyramide.service")
_REDIS_REFUSALS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RefusalLog] = weakref.WeakKeyDictionary()
"""Per event loop (one per server, in a test's threads too): its requests refused while Redis is out of reach, one
warning a run, not one a request."""


class HttpCode(StrEnum):
    """The codes of refusals that only HTTP knows: a request that cannot be read, a connection or storage
    failure, a framework error; the domain's are :class:`ErrorCode`."""

    METHOD_NOT_ALLOWED = "method_not_allowed"
    BAD_REQUEST = "bad_request"
    INVALID_IDEMPOTENCY_KEY = "invalid_idempotency_key"
    BODY_TOO_LARGE = "body_too_large"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    INTERNAL_ERROR = "internal_error"
    INVALID_IF_MATCH = "invalid_if_match"
    INVALID_IF_NONE_MATCH = "invalid_if_none_match"
    WEAK_IDEMPOTENCY_KEY = "weak_idempotency_key"
    REQUEST_TIMEOUT = "request_timeout"
    BODY_TIMEOUT = "body_timeout"
    HEADERS_TOO_LARGE = "headers_too_large"
    STORAGE_FULL = "storage_full"
    STORAGE_UNCONFIRMED = "storage_unconfirmed"
    CORS_ORIGIN_NOT_ALLOWED = "cors_origin_not_allowed"
    INVALID_CLIENT_IP = "invalid_client_ip"
    SERVICE_UNAVAILABLE = "service_unavailable"
    DRAINING = "draining"


MESSAGES: Final = {**CATALOGUE, **section("problems")}
"""Every code's text: the engine's and the service's."""
TITLES: Final = section("titles")
"""Titles of the codes whose message ends in a value that only the detail carries: a title is a whole sentence."""
WORDS: Final = section("words")
MOVE_NOT_EXPLAINED: Final = WORDS["move_not_explained"]
"""What a refused move says when the game's error explanations are off (the ``code`` still says why)."""

_STATUS_CODES: Final = {
    400: HttpCode.BAD_REQUEST,
    401: ErrorCode.UNAUTHORIZED,
    404: ErrorCode.NOT_FOUND,
    405: HttpCode.METHOD_NOT_ALLOWED,
    412: ErrorCode.PRECONDITION_FAILED,
    413: HttpCode.BODY_TOO_LARGE,
    415: HttpCode.UNSUPPORTED_MEDIA_TYPE,
    422: ErrorCode.VALIDATION_FAILED,
    429: ErrorCode.RATE_LIMITED,
    503: HttpCode.SERVICE_UNAVAILABLE,
    507: HttpCode.STORAGE_FULL,
}
"""The code of a framework error (routing, Litestar's own validation) by its status."""

DOMAIN_STATUS: Final[dict[ErrorCode, int]] = {
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.PLAYER_BANNED: 403,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.INVALID_PLAYER_HEADER: 400,
    ErrorCode.PLAYER_HEADER_REQUIRED: 401,  # the app's key alone names no player: credentials incomplete
    ErrorCode.PLAYER_HEADER_NOT_ALLOWED: 403,
    ErrorCode.APP_PLAYER_REQUIRED: 403,
    ErrorCode.OPERATOR_ONLY: 403,
    ErrorCode.GAME_NOT_FOUND: 404,
    ErrorCode.STEP_NOT_FOUND: 404,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.PRECONDITION_FAILED: 412,
    ErrorCode.VALIDATION_FAILED: 422,
    ErrorCode.VERSION_CONFLICT: 409,
    ErrorCode.IDEMPOTENCY_KEY_REUSED: 409,
    ErrorCode.IDEMPOTENCY_KEY_IN_USE: 409,
    ErrorCode.IDEMPOTENCY_KEY_EXPIRED: 409,
    ErrorCode.WINNABLE_DEAL_NOT_FOUND: 409,
    ErrorCode.CHALLENGE_NOT_FOUND: 404,
    ErrorCode.CHALLENGE_ALREADY_PLAYED: 409,
    ErrorCode.CHALLENGE_CLOSED: 409,
    ErrorCode.HINTS_NOT_ALLOWED: 409,
    ErrorCode.GAME_NOT_FINISHED: 409,
    ErrorCode.REVIEW_NOT_FOUND: 404,
    ErrorCode.REVIEW_ALREADY_DECIDED: 409,
    ErrorCode.GAME_NOT_WON: 409,
    ErrorCode.CERTIFICATE_SEALED: 409,
    ErrorCode.WEBHOOK_URL_REFUSED: 422,
    ErrorCode.TOO_MANY_WEBHOOKS: 409,
    ErrorCode.WEBHOOK_NOT_FOUND: 404,
    ErrorCode.DELIVERY_NOT_FOUND: 404,
    ErrorCode.CHALLENGE_NOT_READY: 503,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.QUOTA_EXCEEDED: 429,
    ErrorCode.TOO_MANY_STREAMS: 429,
    ErrorCode.TOO_MANY_UNFINISHED_GAMES: 409,
    ErrorCode.GAME_TOO_LONG: 409,
    ErrorCode.SOLVER_IN_PROGRESS: 429,
    ErrorCode.SOLVER_BUSY: 503,
}
"""The status of each domain error: the one place where the domain's refusals become HTTP."""
HTTP_STATUS: Final[dict[HttpCode, int]] = {
    HttpCode.METHOD_NOT_ALLOWED: 405,
    HttpCode.BAD_REQUEST: 400,
    HttpCode.INVALID_IDEMPOTENCY_KEY: 400,
    HttpCode.BODY_TOO_LARGE: 413,
    HttpCode.UNSUPPORTED_MEDIA_TYPE: 415,
    HttpCode.INTERNAL_ERROR: 500,
    HttpCode.INVALID_IF_MATCH: 400,
    HttpCode.INVALID_IF_NONE_MATCH: 400,
    HttpCode.WEAK_IDEMPOTENCY_KEY: 400,
    HttpCode.REQUEST_TIMEOUT: 408,
    HttpCode.BODY_TIMEOUT: 408,
    HttpCode.HEADERS_TOO_LARGE: 431,
    HttpCode.STORAGE_FULL: 507,
    HttpCode.STORAGE_UNCONFIRMED: 503,
    HttpCode.CORS_ORIGIN_NOT_ALLOWED: 403,
    HttpCode.INVALID_CLIENT_IP: 400,
    HttpCode.SERVICE_UNAVAILABLE: 503,
    HttpCode.DRAINING: 503,
}
"""The status each code of the HTTP layer is sent with."""
_MOVE_REFUSALS: Final = (
    Code.CARD_COVERED, Code.SUM_MUST_BE_13, Code.NO_MORE_MOVES, Code.CARD_REMOVED, Code.NOT_FREE, Code.NOT_A_KING,
    Code.SAME_CARD, Code.STOCK_EMPTY, Code.STOCK_NOT_EMPTY, Code.WASTE_EMPTY, Code.NO_RECYCLES_LEFT, Code.GAME_OVER,
    Code.NOTHING_TO_UNDO, Code.INVALID_CARD, Code.INVALID_RULES, Code.INVALID_LAYOUT, Code.INVALID_MOVE,
)  # fmt: skip
ENGINE_STATUS: Final[dict[Code, int]] = {**dict.fromkeys(_MOVE_REFUSALS, 409), Code.INVALID_DEAL_CODE: 422}
"""The engine's codes a problem carries (a refused move, input the rules refuse): 409, but a deal code that names
no deal, 422. Its feedback codes (``drawn``, ``won``, …) are no problems, and ``invalid_state`` (a damaged stored
game) is sent as ``internal_error``."""
PROBLEM_STATUS: Final[dict[str, int]] = {
    str(code): status for table in (ENGINE_STATUS, DOMAIN_STATUS, HTTP_STATUS) for code, status in table.items()
}
"""Every code a problem can carry, with its status: the error catalogue (``Problem.code``'s enum, the pages at
each ``type``, the list in docs/api.md)."""
ALSO_SENT_WITH: Final[dict[str, tuple[int, ...]]] = {str(Code.INVALID_DEAL_CODE): (409,)}
"""The codes that come with another status too: a deal code is 422 when malformed (in a body or a path) and 409
when well-formed but past the last deal (52!), which the engine refuses."""
PROBLEM_STATUSES: Final[dict[str, tuple[int, ...]]] = {
    code: tuple(sorted({status, *ALSO_SENT_WITH.get(code, ())})) for code, status in PROBLEM_STATUS.items()
}
"""Every status each code comes with: what its page and docs/api.md's list name."""
PROBLEM_PAGES: Final = "/problems"


def problem_type(code: str) -> str:
    """A problem's ``type``: the page that explains its code, served by the service itself (``/problems/<code>``),
    a URI reference resolved against the request's URI."""
    return f"{PROBLEM_PAGES}/{code}"


AUTHENTICATE: Final = {"WWW-Authenticate": 'Bearer realm="pyramide"'}


Entries = Callable[[Locale], list[dict[str, str]]]
"""What was wrong, entry by entry, in a given language (see :mod:`pyramide.service.http.validation`)."""


class ProblemError(HTTPException):
    """An error of the HTTP layer itself (a header, a body, a query that cannot be read), with a stable code and
    parameters for its localised text. The domain raises :class:`DomainError` instead."""

    def __init__(
        self,
        status_code: int,
        code: ErrorCode | HttpCode | Code,
        *,
        headers: dict[str, str] | None = None,
        errors: Entries | None = None,
        **params: str,
    ) -> None:
        super().__init__(status_code=status_code, detail=code, headers=headers)
        self.code = code
        self.params = params
        self.errors = errors


def localised(code: str, locale: str, params: dict[str, str]) -> str:
    return render(MESSAGES[code], locale, params)


def title(code: str, locale: str) -> str:
    """The title of ``code``: a whole sentence, with no value in it."""
    return render(TITLES.get(code, MESSAGES[code]), locale, {})


def problem_response(
    request: Request,  # type: ignore[type-arg]
    status: int,
    code: str,
    *,
    params: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    errors: Entries | None = None,
    explained: bool = True,
) -> Response[dict[str, object]]:
    """A problem+json response: ``title`` a whole sentence for the code, ``detail`` the message with its values
    (or, for a mistake in the request, what was wrong), ``errors`` one entry per mistake."""
    locale = locale_for(request)
    texts = MESSAGES[code] if explained else MOVE_NOT_EXPLAINED
    body: dict[str, object] = {
        "type": problem_type(code),
        "title": title(code, locale) if explained else render(texts, locale, {}),
        "status": status,
        "detail": render(texts, locale, params or {}),
        "code": code,
    }
    if errors is not None:
        entries = errors(locale)
        body["errors"] = entries
        body["detail"] = f"{body['title']}: {summary(entries, locale)}" if entries else body["detail"]
    return Response(
        body,
        status_code=status,
        media_type=PROBLEM_JSON,
        headers={"Content-Language": locale, "Vary": "Accept-Language", **(headers or {})},
    )


def handle_domain_error(request: Request, error: DomainError) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    """A domain refusal as problem+json: its status from :data:`DOMAIN_STATUS`, ``Retry-After`` when the error says
    when to retry, the IETF RateLimit headers for a rate limit, the bearer challenge for 401."""
    headers: dict[str, str] = {}
    if error.retry_after_s is not None:
        headers["Retry-After"] = str(error.retry_after_s)
    if isinstance(error, RateLimitedError):
        headers.update(error.limit.headers(error.wait_s))
    if error.code is ErrorCode.UNAUTHORIZED:
        headers.update(AUTHENTICATE)
    if error.code is ErrorCode.PRECONDITION_FAILED and "version" in error.params:
        headers["ETag"] = f'"{error.params["version"]}"'  # the current version's, to act on it next (issue 59)
    status = DOMAIN_STATUS[error.code]
    if status == 429:
        process_meters().refusals.labels(refused_by(error)).inc()
    params = error.params
    if params.get("reason") in WORDS:  # a reason the domain names by its key: said in the request's language
        params = {**params, "reason": render(WORDS[params["reason"]], locale_for(request), {})}
    return problem_response(request, status, error.code, params=params, headers=headers)


def handle_move_refused(request: Request, error: MoveRefusedError) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    """409 with the engine's code; its explanation only when the game shows explanations (the rules document)."""
    refused = error.refusal
    return problem_response(request, 409, refused.code, params=dict(refused.params), explained=error.explained)


def handle_engine_error(request: Request, error: PyramideError) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    """Engine errors reach here only for input that fit the schema: an illegal move, or a well-formed code or
    layout that names no possible deal, are 409 (the request was well-formed; the rules refuse it). A stored game
    the engine cannot read is the service's fault: 500, logged."""
    if isinstance(error, InvalidInputError) and error.code == "invalid_state":
        log.error("stored game is damaged: %s", error.detail)
        return problem_response(request, 500, HttpCode.INTERNAL_ERROR)
    return problem_response(request, 409, error.code, params=dict(error.params))


def handle_http_error(request: Request, error: HTTPException) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    if isinstance(error, ProblemError):
        return problem_response(
            request,
            error.status_code,
            error.code,
            params=error.params,
            headers=dict(error.headers or {}),
            errors=error.errors,
        )
    status = error.status_code
    code = _STATUS_CODES.get(status, HttpCode.BAD_REQUEST if status < 500 else HttpCode.INTERNAL_ERROR)
    entries = _framework_entries(error, request) if isinstance(error, ValidationException) else None
    headers = dict(error.headers or {})
    if status == 405 and "allow" in headers:  # HEAD is answered wherever GET is (``options.MethodAnswers``)
        headers["allow"] = allow_with_head(headers["allow"].split(","))
    return problem_response(request, status, code, headers=headers, errors=entries)


def allow_with_head(methods: Iterable[str]) -> str:
    """An ``Allow`` value: ``methods``, with ``HEAD`` wherever ``GET`` is, sorted (405 and ``OPTIONS`` alike)."""
    names = {m.strip().upper() for m in methods if m.strip()}
    if "GET" in names:
        names.add("HEAD")
    return ", ".join(sorted(names))


def _framework_entries(error: HTTPException, request: Request) -> Entries | None:  # type: ignore[type-arg]
    """Litestar's own validation of query and path parameters, as entries naming the parameter as the client sent
    it (``from``, not the handler's ``start``)."""
    extra = error.extra
    if not isinstance(extra, list) or not extra:
        return None
    names = [
        (_source(i.get("source")), _sent_name(request, str(i.get("key", "")))) for i in extra[:5] if isinstance(i, dict)
    ]
    return lambda locale: [parameter_error(where, name, locale) for where, name in names]


def _sent_name(request: Request, key: str) -> str:  # type: ignore[type-arg]
    """The name a client sends the handler's parameter ``key`` under: its alias (``QueryParameter(name=...)``)."""
    try:
        definition = request.route_handler.parsed_fn_signature.parameters[key].kwarg_definition
    except (AttributeError, KeyError):
        return key
    return str(getattr(definition, "query", None) or getattr(definition, "header", None) or key)


def _source(source: object) -> str:
    """Where Litestar found the parameter (``query``, ``path``, ``header``), as an entry's key."""
    name = str(getattr(source, "value", source or "query"))
    return name if name in ("query", "header") else "query" if name != "path" else "pointer"


def handle_redis_down(request: Request, error: Exception) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    loop = asyncio.get_running_loop()
    refusals = _REDIS_REFUSALS.get(loop)
    if refusals is None:
        refusals = _REDIS_REFUSALS[loop] = RefusalLog("redis", log)
    refusals.refused(error, loop.time())
    return problem_response(request, 503, HttpCode.SERVICE_UNAVAILABLE, headers={"Retry-After": str(RETRY_AFTER_S)})


def handle_redis_error(request: Request, error: ResponseError) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    """Redis refused a write for lack of memory (``maxmemory`` with ``noeviction``) or of disk (``MISCONF``: its
    append-only file cannot be written): 507, counted and logged; Redis refuses such a command before it runs and
    the scripts refuse before their first write, so nothing was changed. A Redis that takes no writes for now (a
    master short of replicas, a replica) is as unavailable as one down: 503. Any other Redis error is unexpected."""
    if writes_unavailable(error):
        return handle_redis_down(request, error)
    if not storage_full(error):
        return handle_unexpected(request, error)
    STORAGE_FULL.inc()
    log.error("redis storage is full: a write was refused (%s %s): %s", request.method, request.url.path, error)
    return problem_response(request, 507, HttpCode.STORAGE_FULL)


def refused_by(error: DomainError) -> str:
    """The ``limit`` label of a 429 in ``pyramide_refusals_total``: a rate limit's name (``moves``), a daily quota's
    with ``quota_`` before it, else the refusal's code (``too_many_streams``, ``solver_in_progress``)."""
    if isinstance(error, RateLimitedError):
        return error.limit.name
    if isinstance(error, QuotaExceededError):
        return f"quota_{error.quota.name}"
    return error.code.value


def handle_unexpected(request: Request, error: Exception) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    log.exception("unexpected error", exc_info=error)
    return problem_response(request, HTTP_500_INTERNAL_SERVER_ERROR, HttpCode.INTERNAL_ERROR)


EXCEPTION_HANDLERS: Final = {
    DomainError: handle_domain_error,
    MoveRefusedError: handle_move_refused,
    PyramideError: handle_engine_error,
    HTTPException: handle_http_error,
    RedisConnectionError: handle_redis_down,
    RedisTimeoutError: handle_redis_down,
    ResponseError: handle_redis_error,
    Exception: handle_unexpected,
}
