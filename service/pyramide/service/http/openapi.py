"""The OpenAPI document: Litestar's paths and operations, with request and response bodies described by pydantic
itself, so that every pattern, length and ``additionalProperties: false`` that the service enforces is in the
schema (Litestar drops some of them, and cannot describe bodies that handlers validate themselves)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin
from pydantic import TypeAdapter
from pydantic.json_schema import JsonSchemaMode

from pyramide.service.http.problems import PROBLEM_JSON
from pyramide.service.http.schemas import (
    CREATE_PLAYER_KEY_PATTERN,
    IDEMPOTENCY_KEY_PATTERN,
    CreatedPlayer,
    CreateGameBody,
    CreatePlayerBody,
    DealAnalysis,
    DealLayout,
    GameRecord,
    Health,
    Hint,
    Leaderboard,
    MoveBody,
    Player,
    PlayerSettingsBody,
    PlayerStats,
    Problem,
    RulesCatalogue,
    Snapshot,
    TapBody,
    WonGamesPage,
)

COMMITTED: Final = Path(__file__).resolve().parents[4] / "openapi" / "openapi.json"
REQUEST_BODIES: Final[dict[str, Any]] = {
    "createPlayer": CreatePlayerBody,
    "updateCurrentPlayer": PlayerSettingsBody,
    "createGame": CreateGameBody,
    "playMove": MoveBody,
    "tap": TapBody,
}
PUBLIC_OPERATIONS: Final = frozenset(
    {"createPlayer", "getDeal", "analyseDeal", "getLeaderboard", "listRules", "getLiveness", "getReadiness"}
)
RESPONSE_MODELS: Final = (
    Hint,
    DealAnalysis,
    Snapshot,
    CreatedPlayer,
    Player,
    GameRecord,
    DealLayout,
    RulesCatalogue,
    Problem,
    Health,
    PlayerStats,
    WonGamesPage,
    Leaderboard,
)
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


def _pydantic_schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    """JSON schemas of the request bodies by operation id, and every model's definition."""
    inputs: list[tuple[str, JsonSchemaMode, TypeAdapter[Any]]] = [
        (op, "validation", TypeAdapter(body)) for op, body in REQUEST_BODIES.items()
    ]
    inputs += [(m.__name__, "serialization", TypeAdapter(m)) for m in RESPONSE_MODELS]
    schemas, definitions = TypeAdapter.json_schemas(inputs, ref_template=_REF)
    bodies = {op: schema for (op, mode), schema in schemas.items() if op in REQUEST_BODIES and mode == "validation"}
    return bodies, definitions.get("$defs", {})


def build_document(app: Litestar) -> dict[str, Any]:
    document = app.openapi_schema.to_schema()
    bodies, definitions = _pydantic_schemas()
    components = document.setdefault("components", {})
    components["schemas"] = dict(sorted({**components.get("schemas", {}), **definitions}.items()))
    for path in document["paths"].values():
        for method, operation in path.items():
            operation_id = operation.get("operationId")
            if operation_id in PUBLIC_OPERATIONS:
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


def install_document(app: Litestar) -> dict[str, Any]:
    """Serve :func:`build_document` from Litestar's own schema endpoints (``/schema/openapi.json`` and the UI)."""
    document = build_document(app)
    plugin = app.plugins.get(OpenAPIPlugin)
    plugin._openapi_schema = document  # the cache its endpoints serve from
    return document


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
