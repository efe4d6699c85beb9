"""The OpenAPI document: Litestar's paths and operations, with request and response bodies described by pydantic
itself, so that every pattern, length and ``additionalProperties: false`` that the service enforces is in the
schema (Litestar drops some of them, and cannot describe bodies that handlers validate themselves)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final, get_args, get_origin

from litestar import Litestar, Request, Response
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin, SwaggerRenderPlugin, YamlRenderPlugin
from litestar.routes import HTTPRoute
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from pyramide.service.http.problems import PROBLEM_JSON
from pyramide.service.http.schemas import CREATE_PLAYER_KEY_PATTERN, IDEMPOTENCY_KEY_PATTERN, Problem

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
    "description": "A retried request with the same key gets the identical response (the same player and token)"
    " and creates one player. The key is what proves a retry is yours: 32-200 visible ASCII characters, such as"
    " a UUID (400 `weak_idempotency_key` if shorter).",
    "schema": {"type": "string", "pattern": CREATE_PLAYER_KEY_PATTERN},
}


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
    schemas, definitions = TypeAdapter.json_schemas(inputs, ref_template=_REF)
    bodies = {op: schema for (op, mode), schema in schemas.items() if op in requests and mode == "validation"}
    return bodies, definitions.get("$defs", {})


def build_document(app: Litestar) -> dict[str, Any]:
    document = app.openapi_schema.to_schema()
    operations = _operations(app)
    bodies, definitions = _pydantic_schemas(operations)
    components = document.setdefault("components", {})
    components["schemas"] = dict(sorted({**components.get("schemas", {}), **definitions}.items()))
    for path in document["paths"].values():
        for method, operation in path.items():
            operation_id = operation.get("operationId")
            if operation_id in operations and operations[operation_id].opt.get("exclude_from_auth"):
                operation["security"] = []
            for status, response in operation.get("responses", {}).items():
                if int(status) >= 400:  # every error is problem+json, also the 400 Litestar adds by itself
                    response["content"] = {PROBLEM_JSON: {"schema": {"$ref": _REF.format(model="Problem")}}}
            if method == "post":  # every POST takes one; handlers read it with `requests.idempotency_key`
                header = SECRET_IDEMPOTENCY_KEY_HEADER if operation_id == "createPlayer" else IDEMPOTENCY_KEY_HEADER
                operation.setdefault("parameters", []).append(header)
            body = bodies.get(operation_id)
            if body is not None:
                operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    _add_links(document)
    used = json.dumps(document)
    components["schemas"] = {k: v for k, v in components["schemas"].items() if f'"{_REF.format(model=k)}"' in used}
    return document


GAME_OPERATIONS: Final = ("getGame", "playMove", "tap", "getHint", "getGameRecord", "abandonGame")


def _add_links(document: dict[str, Any]) -> None:
    """A created game links to everything done with it: clients and stateful fuzzing follow the id."""
    created = document["paths"]["/v1/games"]["post"]["responses"]["201"]
    created["links"] = {
        operation[0].upper() + operation[1:]: {
            "operationId": operation,
            "parameters": {"game_id": "$response.body#/id"},
        }
        for operation in GAME_OPERATIONS
    }


class ServiceDocument:
    """:func:`build_document` of the app serving it, built on its first request and kept."""

    def __init__(self) -> None:
        self._document: dict[str, Any] | None = None

    def of(self, app: Litestar) -> dict[str, Any]:
        if self._document is None:
            self._document = build_document(app)
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


def render_plugins() -> list[OpenAPIRenderPlugin]:
    """The schema's endpoints: the document as JSON and YAML, and the interactive page at ``/schema``."""
    source = ServiceDocument()
    return [DocumentJson(source), DocumentYaml(source), SwaggerRenderPlugin(path=["/", "/swagger"])]


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
