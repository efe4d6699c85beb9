"""The bodies in the OpenAPI document as pydantic describes them (every pattern, length and
``additionalProperties: false`` the service enforces, which Litestar drops or cannot see in bodies that handlers
validate themselves), adjusted for the clients generated from it: every response field required, no request
default, an optional union declared as the one object it is."""

from __future__ import annotations

import json
from itertools import combinations
from typing import Any, Final, get_args, get_origin

from litestar import Response
from litestar.handlers import HTTPRouteHandler
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode

from pyramide.service.http.schemas import Problem

REF: Final = "#/components/schemas/{model}"


def optional(model: Any) -> bool:
    """Whether a request without a body is the same as ``{}``: the model takes an empty object."""
    try:
        TypeAdapter(model).validate_python({})
    except ValueError:
        return False
    return True


def _response_model(handler: HTTPRouteHandler) -> type[BaseModel] | None:
    annotation = handler.parsed_fn_signature.return_type.annotation
    if get_origin(annotation) is Response:
        annotation = get_args(annotation)[0]
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def pydantic_schemas(
    operations: dict[str, HTTPRouteHandler],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """JSON schemas of the request bodies by operation id, and every model's definition."""
    requests = {op: h.opt["request_body"] for op, h in operations.items() if "request_body" in h.opt}
    responses = {m for h in operations.values() if (m := _response_model(h)) is not None} | {Problem}
    inputs: list[tuple[str, JsonSchemaMode, TypeAdapter[Any]]] = [
        (op, "validation", TypeAdapter(body)) for op, body in requests.items()
    ]
    inputs += [(m.__name__, "serialization", TypeAdapter(m)) for m in sorted(responses, key=lambda m: m.__name__)]
    schemas, definitions = TypeAdapter.json_schemas(inputs, ref_template=REF, schema_generator=AsSent)
    bodies = {op: schema for (op, mode), schema in schemas.items() if op in requests and mode == "validation"}
    return bodies, definitions.get("$defs", {})


class AsSent(GenerateJsonSchema):
    """Pydantic's schemas, with every field of a response required: the service sends each one, ``null`` included,
    so a generated client should type it as present (pydantic's default leaves a field with a default optional,
    which openapi-typescript types as possibly absent). A field the model leaves out of what it sends says so
    itself (``http.schemas``' problems). A model in requests and responses alike whose fields have defaults comes
    out twice (``-Input``, ``-Output``): give the responses a model of their own, as ``RuleSet`` is."""

    def field_is_required(self, field: Any, total: bool) -> bool:
        if self.mode == "serialization":
            return field.get("serialization_exclude_if") is None
        return super().field_is_required(field, total)


def without_request_defaults(bodies: dict[str, Any], schemas: dict[str, Any]) -> None:
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


def one_object(name: str, union: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
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
    return {"$ref": REF.format(model=name)}
