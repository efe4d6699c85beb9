"""Shared pieces of the OpenAPI document moved into ``components`` and referenced (issue 59).

Every operation declared its headers, header parameters and problem responses inline: 384 copies of the
``X-Request-ID`` header, the same 400/401/503/507 problem answers on every route, and the committed document was
1.1 MB. :func:`hoist` moves each piece that appears more than once (equal as JSON) into ``components.headers``,
``components.parameters`` or ``components.responses`` under a readable name, and puts a ``$ref`` in its place: the
same document to every tool that resolves references (schemathesis, the client generators, Spectral)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

Piece = dict[str, Any]


def hoist(document: dict[str, Any]) -> None:
    """Move the repeated response headers, header parameters and responses of ``document``'s operations into its
    components (the responses first, so that their headers are shared by the copies kept)."""
    components = document.setdefault("components", {})
    operations = [op for item in document["paths"].values() for op in item.values() if isinstance(op, dict)]
    _hoist(
        components, "responses", "#/components/responses/",
        [(op["responses"], status) for op in operations for status in op.get("responses", {})],
        lambda status, piece: ("Problem" if _is_problem(piece) else "Answer") + status,
    )  # fmt: skip
    _hoist(
        components, "headers", "#/components/headers/",
        [(response["headers"], name) for response in _responses(document) for name in response.get("headers", {})],
        lambda name, _: name,
    )  # fmt: skip
    _parameters(components, operations)
    _large_schemas(components)


LARGE: int = 4000
"""A property's schema longer than this (as JSON) that several models share goes into ``components.schemas``: the
player name's pattern (14 KB of Unicode classes) was written out in three bodies."""


def _large_schemas(components: dict[str, Any]) -> None:
    schemas = components["schemas"]
    places = [
        (holder, key, f"{name[0].upper()}{name[1:]}")
        for model in list(schemas.values())
        for name, prop in model.get("properties", {}).items()
        for holder, key in _branches(model["properties"], name, prop)
        if len(_key(holder[key])) > LARGE
    ]
    counts = Counter(_key(_bare(holder[key])) for holder, key, _ in places)
    for holder, key, stem in places:
        if counts[_key(_bare(holder[key]))] < 2:
            continue
        name = f"{stem}Text"
        schemas.setdefault(name, _bare(holder[key]))
        said = {k: v for k, v in holder[key].items() if k in _SAYING}  # each use keeps its own description
        holder[key] = {"$ref": f"#/components/schemas/{name}", **said}
    components["schemas"] = dict(sorted(schemas.items()))


_SAYING = ("description", "title")


def _bare(schema: Piece) -> Piece:
    """A schema without the words that describe one use of it."""
    return {k: v for k, v in schema.items() if k not in _SAYING}


def _branches(properties: dict[str, Any], name: str, prop: Piece) -> list[tuple[Any, Any]]:
    """Where a property's schema may be hoisted from: itself, or each branch of its ``anyOf`` (``X | None``)."""
    return [(prop["anyOf"], at) for at in range(len(prop["anyOf"]))] if "anyOf" in prop else [(properties, name)]


def _responses(document: dict[str, Any]) -> Iterator[Piece]:
    for item in document["paths"].values():
        for operation in item.values():
            for response in operation.get("responses", {}).values():
                if "$ref" not in response:
                    yield response
    yield from document["components"].get("responses", {}).values()


def _parameters(components: dict[str, Any], operations: list[Piece]) -> None:
    """Parameters (headers, paths, queries), by name: they sit in lists, not under a key."""
    counts = Counter(_key(p) for op in operations for p in op.get("parameters", []) if "$ref" not in p)
    names = _names(counts, {_key(p): p for op in operations for p in op.get("parameters", [])}, lambda p: p["name"])
    shared = components.setdefault("parameters", {})
    for operation in operations:
        listed = operation.get("parameters", [])
        for at, parameter in enumerate(listed):
            key = _key(parameter)
            if key in names:
                shared[names[key]] = parameter
                listed[at] = {"$ref": f"#/components/parameters/{names[key]}"}


def _hoist(
    components: dict[str, Any],
    kind: str,
    prefix: str,
    places: list[tuple[dict[str, Any], str]],
    name_of: Callable[[str, Piece], str],
) -> None:
    """Each piece found at ``places`` (a mapping and a key in it) more than once goes into ``components[kind]``."""
    counts = Counter(_key(holder[key]) for holder, key in places)
    pieces = {_key(holder[key]): (key, holder[key]) for holder, key in places}
    names = _names(counts, pieces, lambda found: name_of(found[0], found[1]))
    shared = components.setdefault(kind, {})
    for holder, key in places:
        found = _key(holder[key])
        if found in names:
            shared[names[found]] = holder[key]
            holder[key] = {"$ref": prefix + names[found]}
    components[kind] = dict(sorted(shared.items()))


def _names(counts: Counter[str], pieces: dict[str, Any], base: Callable[[Any], str]) -> dict[str, str]:
    """A name for each piece used more than once: its base name, then ``_2``, ``_3`` for other pieces of that name,
    the most used first (the order is the document's, so the names are stable from one build to the next)."""
    taken: Counter[str] = Counter()
    named: dict[str, str] = {}
    for key, _ in sorted(counts.items(), key=lambda item: -item[1]):
        if counts[key] < 2:
            continue
        stem = base(pieces[key])
        taken[stem] += 1
        named[key] = stem if taken[stem] == 1 else f"{stem}_{taken[stem]}"
    return named


def _key(piece: Any) -> str:
    return json.dumps(piece, sort_keys=True)


def _is_problem(response: Piece) -> bool:
    return "application/problem+json" in response.get("content", {})
