"""Examples of the API's bodies for the OpenAPI document, by schema name (``examples.json``): one realistic value
each, valid against its own schema (``tests/integration/test_schema_examples.py`` validates every one, and fails
for a body without one). :func:`add_examples` puts them on the OpenAPI document's component schemas and on every
request and response that carries that body, and builds each problem status's example from the error catalogue
(:func:`problem_example`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from pyramide.service.http.problems import PROBLEM_JSON, PROBLEM_STATUS, localised, problem_type, title

EXAMPLES: Final[dict[str, list[Any]]] = json.loads((Path(__file__).parent / "examples.json").read_text("utf-8"))
"""Each schema's examples by its name: data, not code (they quote players' names and the statuses a game takes,
which the code spells only in their one home); most are answers the service gave to a played game, as sent."""


PARAMS: Final = {
    "limit": "65536",
    "seconds": "30",
    "card": "QC",
    "cards": "6H 7S",
    "version": "7",
    "move": "draw",
    "expected": '"7"',
    "allowed": "GET, HEAD",
    "text": "PY1-N-AAAAAAS",
}
"""Values for the texts' placeholders, as a real answer fills them."""

PREFERRED: Final = {
    403: "forbidden",
    404: "game_not_found",
    409: "version_conflict",
    422: "validation_failed",
    429: "rate_limited",
    503: "service_unavailable",
}
"""The code shown for a status that several codes share: the one a client meets most."""


def problem_example(status: int) -> dict[str, Any] | None:
    """A problem the service answers with ``status``, as it sends it (in Hungarian, the default): the preferred
    code of that status, else the first in the catalogue's order; ``None`` for a status no code has."""
    codes = sorted(code for code, code_status in PROBLEM_STATUS.items() if code_status == status)
    if not codes:
        return None
    code = PREFERRED.get(status, codes[0]) if PREFERRED.get(status) in codes else codes[0]
    return {
        "type": problem_type(code),
        "title": title(code, "hu"),
        "status": status,
        "detail": localised(code, "hu", PARAMS),
        "code": code,
    }


def add_examples(document: dict[str, Any]) -> None:
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
        members = schemas.get(name, {}).get("x-members", [])  # one object for a union (``one_object``)
        return {member: EXAMPLES[member][0] for member in members if member in EXAMPLES}
    branches = schema.get("oneOf") or schema.get("anyOf") or []
    return {name: value for branch in branches for name, value in _named_examples(branch, schemas).items()}
