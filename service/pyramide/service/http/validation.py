"""What was wrong with a request, in plain words in the caller's language: one entry per mistake, each with where
it is (a JSON Pointer into the body, or the query parameter or header), a stable code and a message.

Pydantic's and Litestar's own messages name regular expressions, models and union branches; none of that reaches a
client. The entries go into the problem's ``errors`` (an RFC 9457 extension member)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from pyramide.engine.messages import Locale, render, section

MAX_ERRORS: Final = 10

CODES: Final[dict[str, str]] = {
    "missing": "required",
    "extra_forbidden": "unknown_field",
    "string_pattern_mismatch": "invalid_format",
    "string_too_short": "too_short",
    "string_too_long": "too_long",
    "too_short": "too_few",
    "too_long": "too_many",
    "greater_than_equal": "too_small",
    "greater_than": "too_small",
    "less_than_equal": "too_large",
    "less_than": "too_large",
    "literal_error": "not_allowed",
    "enum": "not_allowed",
    "union_tag_invalid": "unknown_type",
    "union_tag_not_found": "required",
}
"""Pydantic's error types as the stable codes of ``errors`` entries; every type ending in ``_type`` (and
``*_parsing``) is ``wrong_type``; anything else is ``invalid_value``."""

MESSAGES: Final = section("entries")
FORMATS: Final = section("formats")
"""The format a pattern asks for, by the field it constrains (a card anywhere in a layout or move is ``card``)."""

TYPES: Final = section("types")


def body_errors(error: ValidationError, raw: bytes, locale: Locale) -> list[dict[str, str]]:
    """The entries for a body that failed its model."""
    try:
        body: Any = json.loads(raw or b"{}")
    except ValueError:
        body = None
    return [_entry(detail, body, locale) for detail in error.errors()[:MAX_ERRORS]]


def parameter_error(where: str, name: str, locale: Locale) -> dict[str, str]:
    """The entry for a query parameter or header that is not what the schema says (``where``: ``query`` or
    ``header``)."""
    if name == "limit":
        entry = {"code": "invalid_value", "message": render(_LIMIT, locale, {})}
    elif name in FORMATS:
        entry = {"code": "invalid_format", "message": render(FORMATS[name], locale, {})}
    else:
        entry = {"code": "invalid_value", "message": render(MESSAGES["invalid_value"], locale, {})}
    return {where: name, **entry}


def unknown_parameter(where: str, name: str, locale: Locale) -> dict[str, str]:
    """The entry for a query parameter the route does not take."""
    return {where: name, "code": "unknown_parameter", "message": render(MESSAGES["unknown_parameter"], locale, {})}


_LIMIT: Final = section("words")["limit_range"]


def summary(entries: Sequence[Mapping[str, str]], locale: Locale) -> str:
    """The entries in one line, for the problem's ``detail``."""
    return "; ".join(f"{_where(e, locale)}: {e['message']}" for e in entries)


_BODY: Final = section("words")["request_body"]


def _where(entry: Mapping[str, str], locale: Locale) -> str:
    return entry.get("pointer") or entry.get("query") or entry.get("header") or render(_BODY, locale, {})


def _entry(detail: ErrorDetails, body: Any, locale: Locale) -> dict[str, str]:
    path = _pointer_path(detail, body)
    code = _code(detail["type"])
    return {
        "pointer": "".join(f"/{_escape(p)}" for p in path),
        "code": code,
        "message": _message(code, detail, path, locale),
    }


def _pointer_path(detail: ErrorDetails, body: Any) -> list[str | int]:
    """The error's location in the body itself: pydantic's location also names the union member it tried (a tag),
    which is not in the body and is left out."""
    path: list[str | int] = []
    current = body
    location = detail["loc"]
    for index, step in enumerate(location):
        inside = _step(current, step)
        if inside is not _ABSENT:
            path.append(step)
            current = inside
        elif index == len(location) - 1 and detail["type"] == "missing":
            path.append(step)
    discriminator = str((detail.get("ctx") or {}).get("discriminator", "")).strip("'")
    if detail["type"].startswith("union_tag") and discriminator:
        path.append(discriminator)  # the field that names the member, e.g. a move's "type"
    return path


_ABSENT: Final = object()


def _step(value: Any, step: str | int) -> Any:
    """``value[step]`` where the body has it, else :data:`_ABSENT`."""
    if isinstance(value, dict):
        return value.get(step, _ABSENT) if isinstance(step, str) else _ABSENT
    if isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
        return value[step]
    return _ABSENT


def _code(kind: str) -> str:
    if kind in CODES:
        return CODES[kind]
    if kind.endswith(("_type", "_parsing")):
        return "wrong_type"
    return "invalid_value"


def _message(code: str, detail: ErrorDetails, path: list[str | int], locale: Locale) -> str:
    context: dict[str, Any] = dict(detail.get("ctx") or {})
    if code == "invalid_format":
        field = next((p for p in reversed(path) if isinstance(p, str)), "")
        fmt = "card" if field in ("cards", "card", "pyramid", "waste", "stock") else field
        if fmt in FORMATS:
            return render(FORMATS[fmt], locale, {})
    params: dict[str, str] = {}
    if code == "wrong_type":
        kind = detail["type"].removesuffix("_type").removesuffix("_parsing")
        params["expected"] = render(TYPES.get(kind, TYPES["string"]), locale, {})
    for key in ("min_length", "max_length", "ge", "gt", "le", "lt"):
        if key in context:
            params["limit"] = str(context[key])
    if "expected" in context or "expected_tags" in context:
        params["allowed"] = str(context.get("expected", context.get("expected_tags", ""))).replace("'", "")
    return render(MESSAGES[code], locale, params)


def _escape(step: str | int) -> str:
    return str(step).replace("~", "~0").replace("/", "~1")
