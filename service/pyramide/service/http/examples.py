"""Examples of the API's bodies for the OpenAPI document, by schema name (``examples.json``): one realistic value
each, valid against its own schema (``tests/integration/test_schema_examples.py`` validates every one, and fails
for a body without one). ``http.openapi`` puts them on the component schemas and on every request and response
that carries that body, and builds each problem status's example from the error catalogue
(:func:`problem_example`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from pyramide.service.http.problems import PROBLEM_STATUS, localised, problem_type, title

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
