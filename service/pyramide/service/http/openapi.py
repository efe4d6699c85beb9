"""The OpenAPI document: Litestar's paths and operations, with request and response bodies described by pydantic
itself, so that every pattern, length and ``additionalProperties: false`` that the service enforces is in the
schema (Litestar drops some of them, and cannot describe bodies that handlers validate themselves).

This module assembles it: the bodies (``openapi_schemas``), the headers and the responses the handlers' markers
add (``openapi_headers``), the examples (``examples``), the webhooks, tags, links and the problem catalogue.
``docs_page`` serves it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from litestar import Litestar
from litestar.handlers import HTTPRouteHandler
from litestar.routes import HTTPRoute
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from pyramide.service.http.examples import add_examples
from pyramide.service.http.openapi_components import hoist
from pyramide.service.http.openapi_headers import (
    request_headers,
    response_headers,
    with_not_modified,
    with_precondition_failed,
    with_unsupported_media_type,
)
from pyramide.service.http.openapi_schemas import (
    REF,
    AsSent,
    one_object,
    optional,
    pydantic_schemas,
    without_request_defaults,
)
from pyramide.service.http.problems import PROBLEM_JSON, PROBLEM_STATUS

Webhooks = Mapping[Any, type[BaseModel]]
"""The body of each event an app's webhook endpoints receive, by event type (``events.WEBHOOKS``, passed in by the
wiring: plumbing names no domain)."""

COMMITTED: Final = Path(__file__).resolve().parents[4] / "openapi" / "openapi.json"


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


def build_document(app: Litestar, webhooks: Webhooks) -> dict[str, Any]:
    """The service's document; ``webhooks``: the body of each event an app's endpoints receive (``events``)."""
    document = app.openapi_schema.to_schema()
    operations = _operations(app)
    bodies, definitions = pydantic_schemas(operations)
    components = document.setdefault("components", {})
    components["schemas"] = dict(sorted({**components.get("schemas", {}), **definitions}.items()))
    without_request_defaults(bodies, components["schemas"])
    for route, path in document["paths"].items():
        for method, operation in path.items():
            handler = operations[operation["operationId"]]
            if handler.opt.get("exclude_from_auth") and not handler.security:
                operation["security"] = []  # public, and no token is read
            for status, response in operation.get("responses", {}).items():
                if int(status) >= 400:  # every error is problem+json, also the 400 Litestar adds by itself
                    response["content"] = {PROBLEM_JSON: {"schema": {"$ref": REF.format(model="Problem")}}}
                response["headers"] = response_headers(handler, int(status))
                if status == "204":
                    response.pop("content", None)  # no body
            if handler.opt.get("if_none_match"):
                operation["responses"] = with_not_modified(operation["responses"], handler)
            if handler.opt.get("if_match"):
                operation["responses"] = with_precondition_failed(operation["responses"], handler)
            operation["parameters"] = [*operation.get("parameters", []), *request_headers(route, method, handler)]
            body = bodies.get(operation["operationId"])
            if body is not None:
                required = not optional(handler.opt["request_body"])
                if not required and "oneOf" in body:
                    body = one_object(f"{operation['operationId'][0].upper()}{operation['operationId'][1:]}Body",
                                       body, components["schemas"])  # fmt: skip
                operation["requestBody"] = {"required": required, "content": {"application/json": {"schema": body}}}
                operation["responses"] = with_unsupported_media_type(operation["responses"], handler)
    document["webhooks"] = _webhooks(webhooks, components["schemas"])
    document["tags"] = _tags(document)
    _add_links(document, operations)
    _catalogue(components["schemas"]["Problem"])
    add_examples(document)
    hoist(document)
    used = json.dumps(document)
    components["schemas"] = {
        k: v for k, v in sorted(components["schemas"].items()) if f'"{REF.format(model=k)}"' in used
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
    bodies, definitions = TypeAdapter.json_schemas(inputs, ref_template=REF, schema_generator=AsSent)
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


def _catalogue(problem: dict[str, Any]) -> None:
    """``Problem.code`` as the enum of every code the service can send; its ``type`` the page that explains it."""
    problem["properties"]["code"]["enum"] = sorted(PROBLEM_STATUS)
    problem["properties"]["type"]["description"] = (
        "The page of the code (`/problems/<code>`, served by the service: title, status, when it happens, what"
        " to do), a URI reference resolved against the request's URI."
    )


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


def render(document: dict[str, Any]) -> str:
    """The committed file: one key a line (readable diffs), indented by one space, no space after a colon."""
    return json.dumps(document, indent=1, ensure_ascii=False, sort_keys=False, separators=(",", ":")) + "\n"
