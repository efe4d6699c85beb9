"""The headers the OpenAPI document declares: what a request may carry (an Idempotency-Key, If-Match,
If-None-Match, an app's Pyramide-Player and Pyramide-Client-IP, the language, the request id) and what each response
carries, both read from the markers on a handler's decorator (``snapshot``, ``if_match``, ``rate_limited``, ...),
never from a list of operations; and the 304 and 412 responses those markers add."""

from __future__ import annotations

from typing import Any, Final

from litestar.handlers import HTTPRouteHandler

from pyramide.service.http.openapi_schemas import REF
from pyramide.service.http.problems import PROBLEM_JSON
from pyramide.service.http.responses import PRECONDITION_FAILED
from pyramide.service.http.schemas import CREATE_PLAYER_KEY_PATTERN, IDEMPOTENCY_KEY_PATTERN

IDEMPOTENCY_KEY_HEADER: Final = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "A retried request with the same key gets the identical response and is applied once."
    " 1-200 visible ASCII characters (400 `invalid_idempotency_key` otherwise).",
    "schema": {"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN},
}


SECRET_IDEMPOTENCY_KEY_HEADER: Final = {
    **IDEMPOTENCY_KEY_HEADER,
    "description": "A retried request with the same key gets the identical response (the same secret) and is"
    " applied once. The key is what proves a retry is yours: 32-200 visible ASCII characters, such as a UUID"
    " (400 `weak_idempotency_key` if shorter).",
    "schema": {"type": "string", "pattern": CREATE_PLAYER_KEY_PATTERN},
}


ACCEPT_LANGUAGE_HEADER: Final = {
    "name": "Accept-Language",
    "in": "header",
    "required": False,
    "description": "`hu` or `en` (q-values honoured); without it, the player's setting, else Hungarian. Every text"
    " of the response, problems included, is in that language (see Content-Language).",
    "schema": {"type": "string"},
}


REQUEST_ID_HEADER: Final = {
    "name": "X-Request-ID",
    "in": "header",
    "required": False,
    "description": "The request's id in the service's logs and in the response's X-Request-ID: yours when it is"
    " 1-200 visible ASCII characters, else a new one.",
    "schema": {"type": "string"},
}


_TAG: Final = r'(W/)?"[!#-~]*"'


IF_MATCH_HEADER: Final = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": 'Act only on this version of the game (its ETag, e.g. `"7"`; a list matches any of them,'
    " `*` any): 412 `precondition_failed` when the game has moved on. Compared strongly: a weak tag matches"
    " nothing. A header that is not a list of entity tags is 400 `invalid_if_match`.",
    "schema": {"type": "string", "pattern": rf"^[ \t]*(\*|[0-9]{{1,19}}|{_TAG}([ \t]*,[ \t]*{_TAG})*)[ \t]*$"},
}


LAST_EVENT_ID_HEADER: Final = {
    "name": "Last-Event-ID",
    "in": "header",
    "required": False,
    "description": "The id of the last event received, when a stream is resumed (an EventSource sends it by itself):"
    " a state is sent at once only if it differs from that one. One that is not a whole number counts as none.",
    "schema": {"type": "string"},
}


IF_NONE_MATCH_HEADER: Final = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "description": "The ETag of the copy you hold (a list: any of them; `*`: any copy): 304 with that ETag and no"
    ' body while it is current. Compared weakly: `W/"7"` matches `"7"`. A header that is neither `*` nor a'
    " list of entity tags is 400 `invalid_if_none_match`.",
    "schema": {"type": "string", "pattern": rf"^[ \t]*(\*|{_TAG}([ \t]*,[ \t]*{_TAG})*)[ \t]*$"},
}


PLAYER_HEADER: Final = {
    "name": "Pyramide-Player",
    "in": "header",
    "required": False,
    "description": "With an app's key (`Authorization: Bearer pyrapp_…`, scope `players`): act as the app's user of"
    " this id (1-128 visible ASCII characters, `/` excluded), whose player is created on first use (400"
    " `invalid_player_header` for another id; 403 `forbidden` without the scope). With a player's token or a"
    " session: 403 `player_header_not_allowed`.",
    "schema": {"type": "string", "pattern": r"^[\x21-\x2e\x30-\x7e]{1,128}$"},
}


CLIENT_IP_HEADER: Final = {
    "name": "Pyramide-Client-IP",
    "in": "header",
    "required": False,
    "description": "With a valid app key only: the end user's IP address (400 `invalid_client_ip` for one that is"
    " not an address). The per-address limits, quotas and stream caps then count per app and address: in the"
    " app's own bucket of that address, never shared with the clients that connect from it directly nor with"
    " another app's; the app's own limits count too. Without it the app's requests count against the app's own"
    " limits alone. Ignored with any other credential.",
    "schema": {"type": "string"},
}


APP_PLAYER_PATHS: Final = ("/v1/players/me", "/v1/games")
"""The player routes an app may call for its users (``Pyramide-Player``); a handler's ``app_player`` says
otherwise for itself."""


def _app_headers(route: str, handler: HTTPRouteHandler) -> list[dict[str, Any]]:
    """``Pyramide-Player`` where an app may act for its user; ``Pyramide-Client-IP`` where the app's key is
    authenticated before the handler's limits (not on the public routes), or where the handler says it reads it
    (``client_ip``)."""
    if not handler.opt.get("app_player", route.startswith(APP_PLAYER_PATHS)):
        return [CLIENT_IP_HEADER] if handler.opt.get("client_ip") else []
    return [PLAYER_HEADER] if handler.opt.get("exclude_from_auth") else [PLAYER_HEADER, CLIENT_IP_HEADER]


def request_headers(route: str, method: str, handler: HTTPRouteHandler) -> list[dict[str, Any]]:
    """The headers a request may carry: an Idempotency-Key on every POST (a stronger one where the answer holds a
    secret, ``secret_idempotency_key``), If-Match where the handler acts on a version (``if_match``),
    If-None-Match where it answers 304 (``if_none_match``), Last-Event-ID on a stream (``stream``), an app's
    headers, the language and the request id."""
    headers: list[dict[str, Any]] = []
    if method == "post":  # every POST takes one; handlers read it with `headers.idempotency_key`
        secret = handler.opt.get("secret_idempotency_key")
        headers.append(SECRET_IDEMPOTENCY_KEY_HEADER if secret else IDEMPOTENCY_KEY_HEADER)
    if handler.opt.get("if_match"):
        headers.append(IF_MATCH_HEADER)
    if handler.opt.get("if_none_match"):
        headers.append(IF_NONE_MATCH_HEADER)
    if handler.opt.get("stream"):
        headers.append(LAST_EVENT_ID_HEADER)
    return [*headers, *_app_headers(route, handler), ACCEPT_LANGUAGE_HEADER, REQUEST_ID_HEADER]


def _header(description: str, *, required: bool = True, pattern: str | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"} if pattern is None else {"type": "string", "pattern": pattern}
    return {"description": description, "required": required, "schema": schema}


REQUEST_ID: Final = _header("The request's id, as the logs name it (the client's own X-Request-ID when usable).")


CONTENT_LANGUAGE: Final = _header("The language of the response's texts: `hu` or `en`.", pattern="^(hu|en)$")


ETAG: Final = _header("The game's version as a strong entity tag, for If-Match.", pattern='^"[0-9]+"$')


CONTENT_ETAG: Final = _header(
    "A hash of the body as a strong entity tag, for If-None-Match: it changes when the body does.",
    pattern='^"[0-9a-f]{32}"$',
)


LOCATION: Final = _header("Where the new resource is read.")


RETRY_AFTER: Final = _header("Seconds to wait before trying again.", pattern="^[0-9]+$")


RATE_LIMIT_POLICY: Final = _header(
    "The limit that was reached (IETF RateLimit-Policy, structured field), when a rate limit refused it.",
    required=False,
)


RATE_LIMIT: Final = _header(
    "What is left of that limit and when it resets (IETF RateLimit), when a rate limit refused it.", required=False
)


POLICY_ON_SUCCESS: Final = _header(
    'The tightest limit the request counted against (IETF RateLimit-Policy: `"name";q=<quota>;w=<window s>`);'
    " absent when the limit is switched off.",
    required=False,
    pattern='^"[a-z_]+";q=[0-9]+;w=[0-9]+$',
)


STATE_ON_SUCCESS: Final = _header(
    'What is left of that limit (IETF RateLimit: `"name";r=<remaining>;t=<seconds until all of it is back>`);'
    " absent when the limit is switched off.",
    required=False,
    pattern='^"[a-z_]+";r=[0-9]+;t=[0-9]+$',
)


REPLAYED: Final = _header(
    "`true` when this is the answer kept for the request's Idempotency-Key, sent again: the change was made once,"
    " by an earlier request with that key; absent on a fresh answer.",
    required=False,
    pattern="^true$",
)


DEPRECATION: Final = _header(
    "When this operation was deprecated (RFC 9745, `@<epoch seconds>`): it is to be removed, see Sunset.",
    pattern="^@[0-9]+$",
)


SUNSET: Final = _header("From when this deprecated operation may stop working (RFC 8594, an HTTP date).")


VARY: Final = _header("`Accept-Language` (and `Origin` under CORS): the body is in the caller's language.")


def response_headers(handler: HTTPRouteHandler, status: int) -> dict[str, Any]:
    """The headers a response of ``handler`` with ``status`` carries: what every answer carries, and what the
    handler declares (``snapshot``: a game's snapshot, with its ETag, in the caller's language; ``localised``:
    texts in the caller's language; ``location``: a created resource; ``if_none_match``: an ETag on the 200 and
    the 304, a hash of the body where the answer is no snapshot; ``rate_limited``: the RateLimit headers on
    success too; ``deprecation``: ``http.deprecation``'s Deprecation and Sunset). A POST that keeps its answer
    for an Idempotency-Key (a snapshot's, one with a ``secret_idempotency_key``, or one ``http.kept_answers`` keeps)
    declares ``Idempotent-Replayed``."""
    opt = handler.opt
    headers: dict[str, Any] = {"X-Request-ID": REQUEST_ID}
    if status >= 400 or opt.get("snapshot") or opt.get("localised"):
        headers["Content-Language"] = CONTENT_LANGUAGE
        headers["Vary"] = VARY
    if status < 300 and opt.get("snapshot"):
        headers["ETag"] = ETAG
    elif (status < 300 or status == 304) and opt.get("if_none_match"):
        headers["ETag"] = CONTENT_ETAG
    if status == 201 and opt.get("location"):
        headers["Location"] = LOCATION
    if status < 400 and opt.get("deprecation"):
        headers |= {"Deprecation": DEPRECATION, "Sunset": SUNSET}
    if status < 300 and opt.get("rate_limited"):
        headers |= {"RateLimit-Policy": POLICY_ON_SUCCESS, "RateLimit": STATE_ON_SUCCESS}
    keeps = opt.get("snapshot") or opt.get("secret_idempotency_key") or opt.get("kept_answer")
    if status < 300 and "POST" in handler.http_methods and keeps:
        headers["Idempotent-Replayed"] = REPLAYED
    if status in (429, 503):
        headers["Retry-After"] = RETRY_AFTER
    if status == 429:
        headers |= {"RateLimit-Policy": RATE_LIMIT_POLICY, "RateLimit": RATE_LIMIT}
    return headers


def with_not_modified(responses: dict[str, Any], handler: HTTPRouteHandler) -> dict[str, Any]:
    """``responses`` with the 304 of a handler that honours If-None-Match (``if_none_match``): no body, the ETag and
    the headers a cache needs, in order of status."""
    not_modified = {
        "description": "Not Modified: If-None-Match names the current ETag; no body",
        "headers": {**response_headers(handler, 304), "ETag": ETAG if handler.opt.get("snapshot") else CONTENT_ETAG},
    }
    return dict(sorted({**responses, "304": not_modified}.items()))


def with_precondition_failed(responses: dict[str, Any], handler: HTTPRouteHandler) -> dict[str, Any]:
    """``responses`` with the 412 of a handler that acts on a version (``if_match``): what a schema-valid If-Match
    naming another version than the game's gets, a problem, in order of status."""
    failed = {
        "description": PRECONDITION_FAILED,
        "content": {PROBLEM_JSON: {"schema": {"$ref": REF.format(model="Problem")}}},
        "headers": {**response_headers(handler, 412), "ETag": ETAG},
    }
    return dict(sorted({**responses, "412": failed}.items()))


def with_unsupported_media_type(responses: dict[str, Any], handler: HTTPRouteHandler) -> dict[str, Any]:
    """``responses`` with the 415 of a handler that reads a JSON body: what a body of another type (a form) gets,
    a problem (``unsupported_media_type``), in order of status."""
    unsupported = {
        "description": "Unsupported Media Type: the body is not JSON (`unsupported_media_type`)",
        "content": {PROBLEM_JSON: {"schema": {"$ref": REF.format(model="Problem")}}},
        "headers": response_headers(handler, 415),
    }
    return dict(sorted({**responses, "415": unsupported}.items()))
