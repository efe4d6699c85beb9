"""A delivered webhook event held to the schema the service publishes for it (issue 59, D3: a ``game.abandoned``
carried ``rules`` as an object where the schema and docs/events.md say a string)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


@cache
def _validator(kind: str) -> jsonschema_rs.Draft202012Validator:
    document = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    body = document["webhooks"][kind]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return jsonschema_rs.Draft202012Validator({**body, "components": document["components"]}, validate_formats=True)


def check_event(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` (a verified body), after checking it against its type's published schema (raises if it breaks it)."""
    _validator(event["type"]).validate(event)
    return event
