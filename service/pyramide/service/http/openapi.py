"""The OpenAPI document: Litestar's paths and operations, with request and response bodies described by pydantic
itself, so that every pattern, length and ``additionalProperties: false`` that the service enforces is in the
schema (Litestar drops some of them, and cannot describe bodies that handlers validate themselves)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import combinations
from pathlib import Path
from typing import Any, Final, get_args, get_origin

import swagger_ui  # type: ignore[import-untyped]
from litestar import Litestar, Request, Response, Router, get
from litestar.datastructures import CacheControlHeader
from litestar.exceptions import NotFoundException
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, SwaggerRenderPlugin, YamlRenderPlugin
from litestar.params import FromPath
from litestar.response import File
from litestar.routes import HTTPRoute
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode

from pyramide.service.http.examples import EXAMPLES, problem_example
from pyramide.service.http.problems import PROBLEM_JSON, PROBLEM_STATUS
from pyramide.service.http.responses import PRECONDITION_FAILED
from pyramide.service.http.schemas import CREATE_PLAYER_KEY_PATTERN, IDEMPOTENCY_KEY_PATTERN, Problem

Webhooks = Mapping[Any, type[BaseModel]]
"""The body of each event an app's webhook endpoints receive, by event type (``events.WEBHOOKS``, passed in by the
wiring: plumbing names no domain)."""

COMMITTED: Final = Path(__file__).resolve().parents[4] / "openapi" / "openapi.json"
_REF: Final = "#/components/schemas/{model}"
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
    "description": "A retried request with the same key gets the identical response (the same token) and is"
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
    "description": "With a valid app key only: the end user's IP address, against which the per-address limits and"
    " quotas count (400 `invalid_client_ip` for one that is not an address); without it the app's requests"
    " count against the app's own limits. Ignored with any other credential.",
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


TAGS: Final = {
    "players": "A player: created with its token, its settings, a new token, its data exported or erased.",
    "games": "Deal, play by explicit moves or by taps, undo, hints, the record, abandon.",
    "statistics": "A player's statistics and won games, and the leaderboards of deals.",
    "challenges": "The sealed daily challenge of each rule preset and its leaderboard.",
    "deals": "Deal codes: their cards, the solver's analysis, the rules catalogue.",
    "apps": "An app's own routes, with its key: sessions for its users.",
    "admin": "The operator's routes (`/v1/admin`): apps, bans, annulments, reviews, the audit log.",
    "health": "Liveness and readiness, for orchestrators.",
    "events": "The signed requests an app's webhook endpoints receive (`webhooks`; `docs/events.md`).",
}
"""Each tag the controllers give their operations, described once: the document's global ``tags``."""


def _tags(document: dict[str, Any]) -> list[dict[str, str]]:
    """The document's ``tags``: the ones its operations use, in :data:`TAGS`'s order (a tag missing there is a
    ``KeyError`` when the document is built)."""
    paths = [*document["paths"].values(), *document.get("webhooks", {}).values()]
    used = {tag for path in paths for operation in path.values() for tag in operation.get("tags", ())}
    described = [{"name": name, "description": TAGS[name]} for name in used]
    return sorted(described, key=lambda tag: list(TAGS).index(tag["name"]))


def _response_headers(handler: HTTPRouteHandler, status: int) -> dict[str, Any]:
    """The headers a response of ``handler`` with ``status`` carries: what every answer carries, and what the
    handler declares (``snapshot``: a game's snapshot, with its ETag, in the caller's language; ``localised``:
    texts in the caller's language; ``location``: a created resource; ``if_none_match``: an ETag on the 200 and
    the 304, a hash of the body where the answer is no snapshot; ``rate_limited``: the RateLimit headers on
    success too; ``deprecation``: ``http.deprecation``'s Deprecation and Sunset). A POST that keeps its answer
    for an Idempotency-Key (a snapshot's, or one with a ``secret_idempotency_key``) declares
    ``Idempotent-Replayed``."""
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
    if status < 300 and "POST" in handler.http_methods and (opt.get("snapshot") or opt.get("secret_idempotency_key")):
        headers["Idempotent-Replayed"] = REPLAYED
    if status in (429, 503):
        headers["Retry-After"] = RETRY_AFTER
    if status == 429:
        headers |= {"RateLimit-Policy": RATE_LIMIT_POLICY, "RateLimit": RATE_LIMIT}
    return headers


def _optional(model: Any) -> bool:
    """Whether a request without a body is the same as ``{}``: the model takes an empty object."""
    try:
        TypeAdapter(model).validate_python({})
    except ValueError:
        return False
    return True


def _operations(app: Litestar) -> dict[str, HTTPRouteHandler]:
    """The app's documented operations by id. Each declares what the document needs beyond Litestar's view of it:
    ``request_body`` (the model its handler validates the body against) and ``exclude_from_auth`` (public)."""
    return {
        handler.operation_id: handler
        for route in app.routes
        if isinstance(route, HTTPRoute)
        for handler in route.route_handlers
        if handler.include_in_schema and isinstance(handler.operation_id, str)
    }


def _response_model(handler: HTTPRouteHandler) -> type[BaseModel] | None:
    annotation = handler.parsed_fn_signature.return_type.annotation
    if get_origin(annotation) is Response:
        annotation = get_args(annotation)[0]
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _pydantic_schemas(
    operations: dict[str, HTTPRouteHandler],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """JSON schemas of the request bodies by operation id, and every model's definition."""
    requests = {op: h.opt["request_body"] for op, h in operations.items() if "request_body" in h.opt}
    responses = {m for h in operations.values() if (m := _response_model(h)) is not None} | {Problem}
    inputs: list[tuple[str, JsonSchemaMode, TypeAdapter[Any]]] = [
        (op, "validation", TypeAdapter(body)) for op, body in requests.items()
    ]
    inputs += [(m.__name__, "serialization", TypeAdapter(m)) for m in sorted(responses, key=lambda m: m.__name__)]
    schemas, definitions = TypeAdapter.json_schemas(inputs, ref_template=_REF, schema_generator=_AsSent)
    bodies = {op: schema for (op, mode), schema in schemas.items() if op in requests and mode == "validation"}
    return bodies, definitions.get("$defs", {})


class _AsSent(GenerateJsonSchema):
    """Pydantic's schemas, with every field of a response required: the service sends each one, ``null`` included,
    so a generated client should type it as present (pydantic's default leaves a field with a default optional,
    which openapi-typescript types as possibly absent). A field the model leaves out of what it sends says so
    itself (``http.schemas``' problems). A model in requests and responses alike whose fields have defaults comes
    out twice (``-Input``, ``-Output``): give the responses a model of their own, as ``RuleSet`` is."""

    def field_is_required(self, field: Any, total: bool) -> bool:
        if self.mode == "serialization":
            return field.get("serialization_exclude_if") is None
        return super().field_is_required(field, total)


def _without_request_defaults(bodies: dict[str, Any], schemas: dict[str, Any]) -> None:
    """No ``default`` on the properties of what requests send (the bodies and every component they reach): a
    generator with its default options (openapi-typescript's ``defaultNonNullable``) types a property with a
    default as required, so that ``createPlayer({})`` or a partial ``rules`` would not compile, though the service
    takes them. A default other than null stays in the property's description ("Default: false.")."""
    for name in reached_components(list(bodies.values()), schemas):
        for field in schemas[name].get("properties", {}).values():
            if "default" not in field:
                continue
            default = field.pop("default")
            if default is not None:
                said = f"Default: {json.dumps(default, ensure_ascii=False)}."
                field["description"] = f"{field['description']} {said}" if field.get("description") else said


def reached_components(roots: list[Any], schemas: dict[str, Any]) -> set[str]:
    """The names of the components that ``roots`` refer to, directly or through other components (examples are
    data, not schema: not walked)."""
    reached: set[str] = set()
    pending = list(roots)
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending += node
        elif isinstance(node, dict):
            ref = node.get("$ref")
            name = ref.rpartition("/")[2] if isinstance(ref, str) else None
            if name is not None and name not in reached and name in schemas:
                reached.add(name)
                pending.append(schemas[name])
            pending += [value for key, value in node.items() if key != "examples"]
    return reached


def build_document(app: Litestar, webhooks: Webhooks) -> dict[str, Any]:
    """The service's document; ``webhooks``: the body of each event an app's endpoints receive (``events``)."""
    document = app.openapi_schema.to_schema()
    operations = _operations(app)
    bodies, definitions = _pydantic_schemas(operations)
    components = document.setdefault("components", {})
    components["schemas"] = dict(sorted({**components.get("schemas", {}), **definitions}.items()))
    _without_request_defaults(bodies, components["schemas"])
    for route, path in document["paths"].items():
        for method, operation in path.items():
            handler = operations[operation["operationId"]]
            if handler.opt.get("exclude_from_auth") and not handler.security:
                operation["security"] = []  # public, and no token is read
            for status, response in operation.get("responses", {}).items():
                if int(status) >= 400:  # every error is problem+json, also the 400 Litestar adds by itself
                    response["content"] = {PROBLEM_JSON: {"schema": {"$ref": _REF.format(model="Problem")}}}
                response["headers"] = _response_headers(handler, int(status))
                if status == "204":
                    response.pop("content", None)  # no body
            if handler.opt.get("if_none_match"):
                operation["responses"] = _with_not_modified(operation["responses"], handler)
            if handler.opt.get("if_match"):
                operation["responses"] = _with_precondition_failed(operation["responses"], handler)
            operation["parameters"] = [*operation.get("parameters", []), *_request_headers(route, method, handler)]
            body = bodies.get(operation["operationId"])
            if body is not None:
                required = not _optional(handler.opt["request_body"])
                if not required and "oneOf" in body:
                    body = _one_object(f"{operation['operationId'][0].upper()}{operation['operationId'][1:]}Body",
                                       body, components["schemas"])  # fmt: skip
                operation["requestBody"] = {"required": required, "content": {"application/json": {"schema": body}}}
    document["webhooks"] = _webhooks(webhooks, components["schemas"])
    document["tags"] = _tags(document)
    _add_links(document, operations)
    _catalogue(components["schemas"]["Problem"])
    _add_examples(document)
    used = json.dumps(document)
    components["schemas"] = {
        k: v for k, v in sorted(components["schemas"].items()) if f'"{_REF.format(model=k)}"' in used
    }
    return document


_SIGNATURE_HEADERS: Final = (
    ("webhook-id", "The event's id (as the body's `id`): the same on every attempt; drop repeats by it.", r"^evt_"),
    ("webhook-timestamp", "The attempt's time, in unix seconds: refuse one far from your clock.", r"^[0-9]+$"),
    (
        "webhook-signature",
        "`v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under the endpoint's secret;"
        " two, separated by a space, while a secret is rotated (`docs/events.md`).",
        r"^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$",
    ),
)


def _webhooks(webhooks: Webhooks, schemas: dict[str, Any]) -> dict[str, Any]:
    """The ``webhooks`` section (OpenAPI 3.1): for every event type, the signed POST an app's endpoint receives,
    its body's schema added to the components."""
    inputs: list[tuple[str, JsonSchemaMode, TypeAdapter[Any]]] = [
        (str(kind), "serialization", TypeAdapter(model)) for kind, model in webhooks.items()
    ]
    bodies, definitions = TypeAdapter.json_schemas(inputs, ref_template=_REF, schema_generator=_AsSent)
    schemas.update(definitions.get("$defs", {}))
    headers = [
        {"name": name, "in": "header", "required": True, "description": text, "schema": {"type": "string",
                                                                                     "pattern": pattern}}
        for name, text, pattern in _SIGNATURE_HEADERS
    ]  # fmt: skip
    hooks: dict[str, Any] = {}
    for (kind, _), body in sorted(bodies.items()):
        hooks[str(kind)] = {
            "post": {
                "summary": f"The `{kind}` event",
                "description": "Sent to each endpoint of an app subscribed to it, signed as Standard Webhooks"
                " describes (`docs/events.md`).",
                "operationId": "on" + "".join(part.title() for part in str(kind).split(".")),
                "tags": ["events"],
                "parameters": headers,
                "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
                "responses": {
                    "200": {"description": "Received (any 2xx within the timeout will do; anything else is retried)."}
                },
                "security": [],
            }
        }
    return hooks


def _one_object(name: str, union: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """An optional body that is a union of closed objects told apart by their keys (``createGame``: ``{}`` deals at
    random), declared as the one object it is, ``name`` in the components: every member's properties, each
    optional and with no ``default`` (which generated clients send, with any key), and ``not`` the pairs of keys
    that no member takes together. Generators make an optional object an optional argument, but an optional union
    a value they send regardless (openapi-python-client called ``Unset.to_dict()`` on an omitted one: issue 44).
    Exact while one member takes every key the others do not require, as the random deal does."""
    members = [schemas[member["$ref"].rpartition("/")[2]] for member in union["oneOf"]]
    properties: dict[str, Any] = {}
    for member in members:
        for key, declared in member["properties"].items():
            schema = {k: v for k, v in declared.items() if k != "default"}  # a generator would send it
            if properties.setdefault(key, schema) != schema:
                raise ValueError(f"{name}: the members declare {key} differently")
    together = {frozenset((a, b)) for member in members for a, b in combinations(member["properties"], 2)}
    apart = [[a, b] for a, b in combinations(properties, 2) if frozenset((a, b)) not in together]
    ways = [
        f"{', '.join(f'`{k}`' for k in m.get('required', [])) or 'none of those'}: {m['description'].rstrip('.')}"
        for m in members
    ]
    schemas[name] = {
        "additionalProperties": False,
        "description": "One way to deal, chosen by the key the body carries; with " + "; with ".join(ways) + ".",
        "properties": properties,
        "not": {"anyOf": [{"required": pair} for pair in apart]},
        "title": name,
        "type": "object",
        "x-members": [member["title"] for member in members],
    }
    return {"$ref": _REF.format(model=name)}


def _with_not_modified(responses: dict[str, Any], handler: HTTPRouteHandler) -> dict[str, Any]:
    """``responses`` with the 304 of a handler that honours If-None-Match (``if_none_match``): no body, the ETag and
    the headers a cache needs, in order of status."""
    not_modified = {
        "description": "Not Modified: If-None-Match names the current ETag; no body",
        "headers": {**_response_headers(handler, 304), "ETag": ETAG if handler.opt.get("snapshot") else CONTENT_ETAG},
    }
    return dict(sorted({**responses, "304": not_modified}.items()))


def _add_examples(document: dict[str, Any]) -> None:
    """An example for every body: on each schema that has one (``http.examples``), and on each request and response
    that carries it (a union's: one per branch, named by it); a problem's from the catalogue, for its status."""
    schemas = document["components"]["schemas"]
    for name, examples in EXAMPLES.items():
        if name in schemas:
            schemas[name]["examples"] = examples
    for path in [*document["paths"].values(), *document.get("webhooks", {}).values()]:
        for operation in path.values():
            bodies: list[tuple[int | None, dict[str, Any]]] = [(None, operation.get("requestBody", {}))]
            bodies += [(int(status), response) for status, response in operation.get("responses", {}).items()]
            for status, body in bodies:
                for media_type, media in body.get("content", {}).items():
                    example = problem_example(status) if media_type == PROBLEM_JSON and status else None
                    named = _named_examples(media.get("schema", {}), schemas)
                    if example is not None:
                        media["example"] = example
                    elif len(named) == 1:
                        media["example"] = next(iter(named.values()))
                    elif named:
                        media["examples"] = {name: {"summary": name, "value": value} for name, value in named.items()}
    for schema in schemas.values():
        members = schema.pop("x-members", None)  # a note for the examples only, not part of the document
        if members is not None:
            schema["examples"] = [EXAMPLES[member][0] for member in members if member in EXAMPLES]


def _named_examples(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    """The examples of a body's schema by the name of the model they show: a model's first, or each branch's of a
    union."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rpartition("/")[2]
        if name in EXAMPLES:
            return {name: EXAMPLES[name][0]}
        members = schemas.get(name, {}).get("x-members", [])  # one object standing for a union (``_one_object``)
        return {member: EXAMPLES[member][0] for member in members if member in EXAMPLES}
    branches = schema.get("oneOf") or schema.get("anyOf") or []
    return {name: value for branch in branches for name, value in _named_examples(branch, schemas).items()}


def _with_precondition_failed(responses: dict[str, Any], handler: HTTPRouteHandler) -> dict[str, Any]:
    """``responses`` with the 412 of a handler that acts on a version (``if_match``): what a schema-valid If-Match
    naming another version than the game's gets, a problem, in order of status."""
    failed = {
        "description": PRECONDITION_FAILED,
        "content": {PROBLEM_JSON: {"schema": {"$ref": _REF.format(model="Problem")}}},
        "headers": _response_headers(handler, 412),
    }
    return dict(sorted({**responses, "412": failed}.items()))


def _catalogue(problem: dict[str, Any]) -> None:
    """``Problem.code`` as the enum of every code the service can send; its ``type`` the page that explains it."""
    problem["properties"]["code"]["enum"] = sorted(PROBLEM_STATUS)
    problem["properties"]["type"]["description"] = (
        "The page of the code (`/problems/<code>`, served by the service: title, status, when it happens, what"
        " to do), a URI reference resolved against the request's URI."
    )


def _request_headers(route: str, method: str, handler: HTTPRouteHandler) -> list[dict[str, Any]]:
    """The headers a request may carry: an Idempotency-Key on every POST (a stronger one where the answer holds a
    secret, ``secret_idempotency_key``), If-Match where the handler acts on a version (``if_match``),
    If-None-Match where it answers 304 (``if_none_match``), an app's
    headers, the language and the request id."""
    headers: list[dict[str, Any]] = []
    if method == "post":  # every POST takes one; handlers read it with `headers.idempotency_key`
        secret = handler.opt.get("secret_idempotency_key")
        headers.append(SECRET_IDEMPOTENCY_KEY_HEADER if secret else IDEMPOTENCY_KEY_HEADER)
    if handler.opt.get("if_match"):
        headers.append(IF_MATCH_HEADER)
    if handler.opt.get("if_none_match"):
        headers.append(IF_NONE_MATCH_HEADER)
    return [*headers, *_app_headers(route, handler), ACCEPT_LANGUAGE_HEADER, REQUEST_ID_HEADER]


def _add_links(document: dict[str, Any], operations: dict[str, HTTPRouteHandler]) -> None:
    """Every snapshot of a game (the 201 of its creation, the 200 of a read or an action: a handler's
    ``snapshot``) links to everything done with the game (every operation on ``/v1/games/{game_id}``): clients and
    stateful fuzzing follow its id, and its ETag into the If-Match of the operations that take one (``if_match``),
    so that the next action names the version the snapshot shows."""
    targets = [
        operation["operationId"]
        for route, path in document["paths"].items()
        if route.startswith("/v1/games/{game_id}")
        for operation in path.values()
    ]
    for path in document["paths"].values():
        for operation in path.values():
            if not operations[operation["operationId"]].opt.get("snapshot"):
                continue
            for status, response in operation["responses"].items():
                if status in ("200", "201"):
                    response["links"] = {_link_name(target): _link(target, operations) for target in targets}


def _link_name(operation_id: str) -> str:
    return operation_id[0].upper() + operation_id[1:]


def _link(target: str, operations: dict[str, HTTPRouteHandler]) -> dict[str, Any]:
    parameters = {"game_id": "$response.body#/id"}
    if operations[target].opt.get("if_match"):
        parameters["header.If-Match"] = "$response.header.ETag"
    return {"operationId": target, "parameters": parameters}


class ServiceDocument:
    """:func:`build_document` of the app serving it, built on its first request and kept."""

    def __init__(self, webhooks: Webhooks) -> None:
        self._document: dict[str, Any] | None = None
        self._webhooks = webhooks

    def of(self, app: Litestar) -> dict[str, Any]:
        if self._document is None:
            self._document = build_document(app, self._webhooks)
        return self._document


class DocumentJson(JsonRenderPlugin):
    """``/schema/openapi.json``: the service's document, not Litestar's own."""

    def __init__(self, source: ServiceDocument) -> None:
        super().__init__()
        self.source = source

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:  # noqa: ARG002
        return super().render(request, self.source.of(request.app))


class DocumentYaml(YamlRenderPlugin):
    """``/schema/openapi.yaml``: the same document as YAML."""

    def __init__(self, source: ServiceDocument) -> None:
        super().__init__()
        self.source = source

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:  # noqa: ARG002
        return super().render(request, self.source.of(request.app))


PAGE_SECURITY_HEADERS: Final = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none';"
    " frame-ancestors 'none'; object-src 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
"""The headers of the service's own pages (``/play``, ``/schema``): they load and call nothing but this origin, run
no inline script, and are framed by no one; files are taken only as the type they are served as."""
DOCS_ASSETS: Final = "/schema-assets"
"""Where the interactive page's scripts, styles and icon are served from: the service itself, with no network."""
SWAGGER_UI: Final = Path(swagger_ui.__file__).parent / "static"
"""Swagger UI's files, as the ``swagger-ui-py`` package ships them."""
DOCS_FILES: Final = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui-standalone-preset.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon-32x32.png": "image/png",
}


DOCS_SCRIPT: Final = b"""SwaggerUIBundle({
  url: "/schema/openapi.json",
  dom_id: "#swagger-container",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
"""
"""The page's one script of its own, served as a file (``swagger-init.js``) so that the policy needs no inline
script; ``validatorUrl: null``: no badge fetched from swagger.io."""
DOCS_PAGE: Final = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Pyramide API</title>
  <link rel="icon" type="image/png" href="{DOCS_ASSETS}/favicon-32x32.png">
  <link rel="stylesheet" href="{DOCS_ASSETS}/swagger-ui.css">
  <script src="{DOCS_ASSETS}/swagger-ui-bundle.js"></script>
  <script src="{DOCS_ASSETS}/swagger-ui-standalone-preset.js"></script>
</head>
<body>
  <div id="swagger-container"></div>
  <script src="{DOCS_ASSETS}/swagger-init.js"></script>
</body>
</html>
""".encode()


class DocumentPage(SwaggerRenderPlugin):
    """``/schema``: Swagger UI over the service's document (``/schema/openapi.json``), every file served by the
    service itself. Litestar's page inlines its start-up script and the whole document; this one loads both, so
    that its Content-Security-Policy allows no inline script."""

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:  # noqa: ARG002
        return DOCS_PAGE


def render_plugins(webhooks: Webhooks) -> list[OpenAPIRenderPlugin]:
    """The schema's endpoints: the document as JSON and YAML, and the interactive page at ``/schema``."""
    source = ServiceDocument(webhooks)
    return [DocumentJson(source), DocumentYaml(source), DocumentPage(path=["/", "/swagger"])]


def docs_router() -> Router:
    """Where ``render_plugins`` are served, ``/schema``: Litestar's own router for them, with the pages' security
    headers on every answer."""
    return Router(
        "/schema", route_handlers=[], include_in_schema=False, dto=None, return_dto=None,
        response_headers=PAGE_SECURITY_HEADERS,
    )  # fmt: skip


@get(
    f"{DOCS_ASSETS}/{{name:str}}",
    include_in_schema=False,
    exclude_from_auth=True,
    cache_control=CacheControlHeader(max_age=86400, public=True),
    response_headers={"X-Content-Type-Options": "nosniff"},
)
async def docs_asset(name: FromPath[str]) -> File | Response[bytes]:
    """One of :data:`DOCS_FILES`, or the page's own script; 404 for any other name."""
    if name == "swagger-init.js":
        return Response(DOCS_SCRIPT, media_type="text/javascript")
    if name not in DOCS_FILES:
        raise NotFoundException()
    return File(SWAGGER_UI / name, media_type=DOCS_FILES[name], content_disposition_type="inline")


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
