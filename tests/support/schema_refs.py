"""The served OpenAPI document with its shared pieces put back in place, for tests that read it operation by
operation: ``http/openapi_components.hoist`` moves repeated responses, headers and parameters (and large property
schemas, ``…Text``) into ``components`` behind ``$ref``s, which these tests would otherwise have to follow one by
one."""

from __future__ import annotations

import copy
from typing import Any

_PLACED = ("#/components/responses/", "#/components/headers/", "#/components/parameters/")


def resolved(document: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``document`` with every reference to a shared response, header or parameter, or to a hoisted
    property schema, replaced by what it names (with the reference's own sibling words kept)."""
    components = document.get("components", {})

    def target(ref: str) -> Any:
        kind, _, name = ref.removeprefix("#/components/").partition("/")
        return components[kind][name]

    def follows(ref: object) -> bool:
        if not isinstance(ref, str):
            return False
        return ref.startswith(_PLACED) or (ref.startswith("#/components/schemas/") and ref.endswith("Text"))

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if follows(node.get("$ref")):
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                return {**walk(copy.deepcopy(target(node["$ref"]))), **siblings}
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(document)  # type: ignore[no-any-return]
