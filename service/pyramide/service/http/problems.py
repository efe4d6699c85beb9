"""Errors as RFC 9457 problem details: a stable ``code`` and its text in the caller's language.

Every error the service answers with goes through :func:`problem_response`, framework errors (malformed JSON, 404,
405 with its ``Allow`` header) included, so clients only ever parse one error shape.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Final

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR
from prometheus_client import Counter
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pyramide.engine import InvalidInputError, PyramideError
from pyramide.engine.codes import Code
from pyramide.engine.messages import CATALOGUE, DEFAULT_LOCALE, Locale, render
from pyramide.service.errors import DomainError, ErrorCode, MoveRefusedError
from pyramide.service.http.validation import parameter_error, summary
from pyramide.service.infra.ratelimit import RateLimitedError
from pyramide.service.infra.redis import storage_full

PROBLEM_JSON: Final = "application/problem+json"
RETRY_AFTER_S: Final = 1
log = logging.getLogger("pyramide.service")
STORAGE_FULL: Final = Counter(
    "pyramide_storage_full_total", "Writes refused because Redis's memory (maxmemory) or its disk is full"
)

SERVICE_MESSAGES: Final[dict[str, dict[Locale, str]]] = {
    ErrorCode.UNAUTHORIZED: {
        "hu": "Hiányzó vagy érvénytelen hozzáférési token",
        "en": "Missing or invalid access token",
    },
    ErrorCode.GAME_NOT_FOUND: {"hu": "Nincs ilyen játszma", "en": "No such game"},
    ErrorCode.NOT_FOUND: {"hu": "Nincs ilyen erőforrás", "en": "No such resource"},
    ErrorCode.METHOD_NOT_ALLOWED: {"hu": "Ez a metódus itt nem használható", "en": "Method not allowed here"},
    ErrorCode.BAD_REQUEST: {"hu": "Hibás kérés", "en": "Malformed request"},
    ErrorCode.VALIDATION_FAILED: {"hu": "A kérés adatai érvénytelenek", "en": "The request data is invalid"},
    ErrorCode.PRECONDITION_FAILED: {
        "hu": "A játszma közben megváltozott; a jelenlegi verzió: {version}",
        "en": "The game has changed meanwhile; its current version is {version}",
    },
    ErrorCode.VERSION_CONFLICT: {
        "hu": "A játszmát közben más is módosította, próbáld újra",
        "en": "The game was changed by another request meanwhile; try again",
    },
    ErrorCode.IDEMPOTENCY_KEY_REUSED: {
        "hu": "Ezt az Idempotency-Key kulcsot már egy másik kéréshez használták",
        "en": "This Idempotency-Key was already used for a different request",
    },
    ErrorCode.INVALID_IDEMPOTENCY_KEY: {
        "hu": "Az Idempotency-Key fejléc 1–200 látható ASCII karakter lehet",
        "en": "The Idempotency-Key header must be 1 to 200 visible ASCII characters",
    },
    ErrorCode.BODY_TOO_LARGE: {
        "hu": "A kérés törzse hosszabb a megengedettnél; a határ bájtban: {limit}",
        "en": "The request body is longer than allowed; the limit in bytes: {limit}",
    },
    ErrorCode.SERVICE_UNAVAILABLE: {
        "hu": "A szolgáltatás átmenetileg nem érhető el, próbáld újra később",
        "en": "The service is temporarily unavailable; try again later",
    },
    ErrorCode.INTERNAL_ERROR: {"hu": "Váratlan belső hiba", "en": "Unexpected internal error"},
    ErrorCode.INVALID_IF_MATCH: {
        "hu": 'Az If-Match fejléc nem ETag-ek listája (például "7")',
        "en": 'The If-Match header is not a list of entity tags (such as "7")',
    },
    ErrorCode.WEAK_IDEMPOTENCY_KEY: {
        "hu": "Játékos létrehozásakor az Idempotency-Key legalább 32 karakter legyen (például egy UUID)",
        "en": "When creating a player, the Idempotency-Key must be at least 32 characters (a UUID, say)",
    },
    ErrorCode.RATE_LIMITED: {
        "hu": "Túl sok kérés érkezett; próbáld újra ennyi másodperc múlva: {seconds}",
        "en": "Too many requests; try again in this many seconds: {seconds}",
    },
    ErrorCode.QUOTA_EXCEEDED: {
        "hu": "Erről a címről elfogyott a napi keret (legfeljebb {limit});"
        " próbáld újra ennyi másodperc múlva: {seconds}",
        "en": "This address has used up its daily quota (at most {limit}); try again in this many seconds: {seconds}",
    },
    ErrorCode.TOO_MANY_UNFINISHED_GAMES: {
        "hu": "Túl sok befejezetlen játszmád van (legfeljebb {limit}); fejezz be vagy adj fel egyet,"
        " mielőtt újat kezdesz",
        "en": "You have too many unfinished games (at most {limit}); finish or abandon one before starting another",
    },
    ErrorCode.GAME_TOO_LONG: {
        "hu": "Ez a játszma elérte a lépések felső határát ({limit}); add fel, és kezdj újat",
        "en": "This game has reached its limit of operations ({limit}); abandon it and start another",
    },
    ErrorCode.SOLVER_BUSY: {
        "hu": "A megoldó most túlterhelt; próbáld újra kicsit később",
        "en": "The solver is at capacity right now; try again a little later",
    },
    ErrorCode.SOLVER_IN_PROGRESS: {
        "hu": "Egy korábbi megoldókérésed még fut; várd meg a válaszát",
        "en": "An earlier solver request of yours is still running; wait for its answer",
    },
    ErrorCode.REQUEST_TIMEOUT: {
        "hu": "A kérés fejlécei nem érkeztek meg időben; a kapcsolat lezárul",
        "en": "The request headers did not arrive in time; the connection is closed",
    },
    ErrorCode.BODY_TIMEOUT: {
        "hu": "A kérés törzse nem érkezett meg időben; a kapcsolat lezárul",
        "en": "The request body did not arrive in time; the connection is closed",
    },
    ErrorCode.HEADERS_TOO_LARGE: {
        "hu": "A kérés fejlécei hosszabbak a megengedettnél; a kapcsolat lezárul",
        "en": "The request headers are longer than allowed; the connection is closed",
    },
    ErrorCode.STORAGE_FULL: {
        "hu": "A tárhely megtelt, a változtatás nem menthető; semmi sem módosult",
        "en": "The storage is full and the change cannot be saved; nothing was changed",
    },
    ErrorCode.STORAGE_UNCONFIRMED: {
        "hu": "A tárhely megtelt: lehet, hogy ez a változtatás nem marad meg; töltsd újra, mielőtt folytatod",
        "en": "The storage is full: this change may not be kept; reload before going on",
    },
    ErrorCode.CORS_ORIGIN_NOT_ALLOWED: {
        "hu": "Erről az eredetről (origin) böngészőből nem hívható a szolgáltatás",
        "en": "Pages from this origin may not call the service from a browser",
    },
    ErrorCode.WINNABLE_DEAL_NOT_FOUND: {
        "hu": "A megoldó nem talált időben bizonyítottan nyerhető leosztást ezekkel a szabályokkal; próbáld újra",
        "en": "The solver proved no deal winnable under these rules in time; try again",
    },
    ErrorCode.CHALLENGE_NOT_FOUND: {
        "hu": "Nincs ilyen napi kihívás (csak a mai és a korábbiak léteznek)",
        "en": "No such daily challenge (only today's and earlier ones exist)",
    },
    ErrorCode.CHALLENGE_ALREADY_PLAYED: {
        "hu": "Ezt a napi kihívást már elkezdted; egy játékos egyszer játszhatja",
        "en": "You have already started this daily challenge; each player plays it once",
    },
    ErrorCode.CHALLENGE_CLOSED: {
        "hu": "Ez a napi kihívás már lezárult; a leosztás kódjával rangsor nélkül játszható",
        "en": "This daily challenge has closed; its deal code plays it unranked",
    },
    ErrorCode.CHALLENGE_NOT_READY: {
        "hu": "A napi kihívás leosztását még keresi a megoldó; próbáld újra kicsit később",
        "en": "The solver is still choosing the daily challenge's deal; try again a little later",
    },
    ErrorCode.HINTS_NOT_ALLOWED: {
        "hu": "A napi kihívásban a zárásig nincs tipp és elemzés",
        "en": "A daily challenge allows no hints or analysis until it closes",
    },
    ErrorCode.REVIEW_NOT_FOUND: {
        "hu": "Nincs ilyen felülvizsgálandó győzelem",
        "en": "No such review",
    },
    ErrorCode.REVIEW_ALREADY_DECIDED: {
        "hu": "Erről a győzelemről egy moderátor már másként döntött",
        "en": "A moderator has already decided this review the other way",
    },
    ErrorCode.FORBIDDEN: {
        "hu": "Ehhez a kulcsodnak nincs joga",
        "en": "Your key is not allowed to do this",
    },
    ErrorCode.PLAYER_BANNED: {
        "hu": "Ezt a játékost egy moderátor kitiltotta; csak az adatai kikérése és törlése érhető el",
        "en": "A moderator has banned this player; only exporting and erasing its data remain open",
    },
    ErrorCode.INVALID_PLAYER_HEADER: {
        "hu": "A Pyramide-Player fejléc 1–128 látható ASCII karakter lehet, perjel (/) nélkül",
        "en": "The Pyramide-Player header must be 1 to 128 visible ASCII characters other than /",
    },
    ErrorCode.PLAYER_HEADER_NOT_ALLOWED: {
        "hu": "A Pyramide-Player fejléc csak egy alkalmazás kulcsával küldhető",
        "en": "The Pyramide-Player header may only be sent with an app's key",
    },
    ErrorCode.INVALID_CLIENT_IP: {
        "hu": "A Pyramide-Client-IP fejléc nem IP-cím",
        "en": "The Pyramide-Client-IP header is not an IP address",
    },
}
MESSAGES: Final = {**CATALOGUE, **SERVICE_MESSAGES}
TITLES: Final[dict[str, dict[Locale, str]]] = {
    ErrorCode.PRECONDITION_FAILED: {"hu": "A játszma közben megváltozott", "en": "The game has changed meanwhile"},
    ErrorCode.BODY_TOO_LARGE: {"hu": "A kérés törzse túl hosszú", "en": "The request body is too long"},
    ErrorCode.RATE_LIMITED: {"hu": "Túl sok kérés érkezett", "en": "Too many requests"},
    ErrorCode.QUOTA_EXCEEDED: {"hu": "Elfogyott a napi keret", "en": "The daily quota is used up"},
    ErrorCode.TOO_MANY_UNFINISHED_GAMES: {
        "hu": "Túl sok a befejezetlen játszmád",
        "en": "You have too many unfinished games",
    },
}
"""Titles of the codes whose message ends in a value that only the detail carries: a title is a whole sentence."""
MOVE_NOT_EXPLAINED: Final[dict[Locale, str]] = {
    "hu": "Ez a lépés most nem szabályos",
    "en": "This move is not allowed now",
}
"""What a refused move says when the game's error explanations are off (the ``code`` still says why)."""

_STATUS_CODES: Final = {
    400: ErrorCode.BAD_REQUEST,
    401: ErrorCode.UNAUTHORIZED,
    404: ErrorCode.NOT_FOUND,
    405: ErrorCode.METHOD_NOT_ALLOWED,
    412: ErrorCode.PRECONDITION_FAILED,
    413: ErrorCode.BODY_TOO_LARGE,
    422: ErrorCode.VALIDATION_FAILED,
    429: ErrorCode.RATE_LIMITED,
    503: ErrorCode.SERVICE_UNAVAILABLE,
    507: ErrorCode.STORAGE_FULL,
}
"""The code of a framework error (routing, Litestar's own validation) by its status."""

DOMAIN_STATUS: Final[dict[ErrorCode, int]] = {
    ErrorCode.UNAUTHORIZED: 401,
    ErrorCode.PLAYER_BANNED: 403,
    ErrorCode.FORBIDDEN: 403,
    ErrorCode.INVALID_PLAYER_HEADER: 400,
    ErrorCode.PLAYER_HEADER_NOT_ALLOWED: 403,
    ErrorCode.INVALID_CLIENT_IP: 400,
    ErrorCode.GAME_NOT_FOUND: 404,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.PRECONDITION_FAILED: 412,
    ErrorCode.VERSION_CONFLICT: 409,
    ErrorCode.IDEMPOTENCY_KEY_REUSED: 409,
    ErrorCode.WINNABLE_DEAL_NOT_FOUND: 409,
    ErrorCode.CHALLENGE_NOT_FOUND: 404,
    ErrorCode.CHALLENGE_ALREADY_PLAYED: 409,
    ErrorCode.CHALLENGE_CLOSED: 409,
    ErrorCode.HINTS_NOT_ALLOWED: 409,
    ErrorCode.REVIEW_NOT_FOUND: 404,
    ErrorCode.REVIEW_ALREADY_DECIDED: 409,
    ErrorCode.CHALLENGE_NOT_READY: 503,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.QUOTA_EXCEEDED: 429,
    ErrorCode.TOO_MANY_UNFINISHED_GAMES: 409,
    ErrorCode.GAME_TOO_LONG: 409,
    ErrorCode.SOLVER_IN_PROGRESS: 429,
    ErrorCode.SOLVER_BUSY: 503,
    ErrorCode.SERVICE_UNAVAILABLE: 503,
}
"""The status of each domain error: the one place where the domain's refusals become HTTP."""
AUTHENTICATE: Final = {"WWW-Authenticate": 'Bearer realm="pyramide"'}


Entries = Callable[[Locale], list[dict[str, str]]]
"""What was wrong, entry by entry, in a given language (see :mod:`pyramide.service.http.validation`)."""


class ProblemError(HTTPException):
    """An error of the HTTP layer itself (a header, a body, a query that cannot be read), with a stable code and
    parameters for its localised text. The domain raises :class:`DomainError` instead."""

    def __init__(
        self,
        status_code: int,
        code: ErrorCode | Code,
        *,
        headers: dict[str, str] | None = None,
        errors: Entries | None = None,
        **params: str,
    ) -> None:
        super().__init__(status_code=status_code, detail=code, headers=headers)
        self.code = code
        self.params = params
        self.errors = errors


def negotiate_locale(header: str | None, fallback: Locale = DEFAULT_LOCALE) -> Locale:
    """The best of ``hu``/``en`` for an ``Accept-Language`` header (q-values honoured), else ``fallback``."""
    best: tuple[float, Locale] | None = None
    for part in (header or "").split(","):
        tag, _, params = part.strip().partition(";")
        language = tag.strip().lower().split("-")[0]
        if language not in ("hu", "en"):
            continue
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if quality > 0 and (best is None or quality > best[0]):
            best = (quality, "hu" if language == "hu" else "en")
    return fallback if best is None else best[1]


def localised(code: str, locale: str, params: dict[str, str]) -> str:
    return render(MESSAGES[code], locale, params)


def title(code: str, locale: str) -> str:
    """The title of ``code``: a whole sentence, with no value in it."""
    return render(TITLES.get(code, MESSAGES[code]), locale, {})


def locale_for(request: Request) -> Locale:  # type: ignore[type-arg]
    """The language of a response: ``Accept-Language``, else the authenticated player's setting, else Hungarian."""
    player = request.scope.get("user")
    preferred: Locale = "en" if getattr(player, "locale", "hu") == "en" else "hu"
    return negotiate_locale(request.headers.get("accept-language"), preferred)


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
        "type": f"urn:pyramide:problem:{code}",
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
        headers={"Content-Language": locale, **(headers or {})},
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
    status = DOMAIN_STATUS[error.code]
    return problem_response(request, status, error.code, params=error.params, headers=headers)


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
        return problem_response(request, 500, ErrorCode.INTERNAL_ERROR)
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
    code = _STATUS_CODES.get(status, ErrorCode.BAD_REQUEST if status < 500 else ErrorCode.INTERNAL_ERROR)
    entries = _framework_entries(error) if isinstance(error, ValidationException) else None
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


def _framework_entries(error: HTTPException) -> Entries | None:
    """Litestar's own validation of query and path parameters, as entries naming the parameter."""
    extra = error.extra
    if not isinstance(extra, list) or not extra:
        return None
    names = [(_source(i.get("source")), str(i.get("key", ""))) for i in extra[:5] if isinstance(i, dict)]
    return lambda locale: [parameter_error(where, name, locale) for where, name in names]


def _source(source: object) -> str:
    """Where Litestar found the parameter (``query``, ``path``, ``header``), as an entry's key."""
    name = str(getattr(source, "value", source or "query"))
    return name if name in ("query", "header") else "query" if name != "path" else "pointer"


def handle_redis_down(request: Request, error: Exception) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    log.warning("redis unavailable: %s", error)
    return problem_response(request, 503, ErrorCode.SERVICE_UNAVAILABLE, headers={"Retry-After": str(RETRY_AFTER_S)})


def handle_redis_error(request: Request, error: ResponseError) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    """Redis refused a write for lack of memory (``maxmemory`` with ``noeviction``) or of disk (``MISCONF``: its
    append-only file cannot be written): 507, counted and logged; Redis refuses such a command before it runs and
    the scripts refuse before their first write, so nothing was changed. Any other Redis error is unexpected."""
    if not storage_full(error):
        return handle_unexpected(request, error)
    STORAGE_FULL.inc()
    log.error("redis storage is full: a write was refused (%s %s): %s", request.method, request.url.path, error)
    return problem_response(request, 507, ErrorCode.STORAGE_FULL)


def handle_unexpected(request: Request, error: Exception) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    log.exception("unexpected error", exc_info=error)
    return problem_response(request, HTTP_500_INTERNAL_SERVER_ERROR, ErrorCode.INTERNAL_ERROR)


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
