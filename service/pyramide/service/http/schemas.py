"""What every domain's request and response bodies share: strict models (no ``false`` as ``0``, no extra keys),
every constraint in annotated types so that the OpenAPI schema says exactly what the service accepts, the patterns
of card and deal codes, and the problem details every error answers with."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, GetJsonSchemaHandler, StringConstraints
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from pyramide.engine.rules import MAX_RECYCLES

SPACE_CHARACTERS = (0x20, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)
"""Unicode's space separators (category Zs)."""

_SEPARATORS = r"[\s\-‐‑‒–—―−_]*"
CARD_PATTERN = r"^(10|[2-9AJQKTajqkt])[CDHScdhs♣♦♥♠]$"
DEAL_CODE_PATTERN = (
    rf"^\s*[Pp][Yy]1{_SEPARATORS}(?:[Nn]|[0-9][Ss]?[Cc]?[Ww]?|[Ss][Cc]?[Ww]?|[Cc][Ww]?|[Ww]){_SEPARATORS}"
    r"(?:[A-Za-z]{7}|[Ll][A-Ya-y][A-Za-z]{48})\s*$"
)
IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]{1,200}$"
CREATE_PLAYER_KEY_PATTERN = r"^[\x21-\x7e]{32,200}$"
"""createPlayer's Idempotency-Key is the only secret between a retry and the new player's token: at least 32
characters, such as a UUID or 32 random hex digits (122-128 random bits)."""

UUID_PATTERN: Final = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
CURSOR_PATTERN: Final = rf"^[0-9]{{12}}:[0-9]{{10}}:[0-9]{{15}}:{UUID_PATTERN}$"
"""A list's page cursor: the last entry's rank (time, moves, finish) and game id, as ``next_cursor`` gives it."""
BOARD_CURSOR_PATTERN: Final = rf"^(?:a:)?[0-9]{{12}}:[0-9]{{10}}:[0-9]{{15}}:{UUID_PATTERN}$"
"""A leaderboard's page cursor: the last entry's tier (``a:`` for assisted), time, moves, finish and player id."""
REVIEWS_CURSOR_PATTERN: Final = rf"^[01]:[0-9]{{15}}:{UUID_PATTERN}$"
"""A page cursor of the review list: the last entry's place (pending or decided, and a moment) and id."""
GAMES_CURSOR_PATTERN: Final = rf"^[0-9]{{1,15}}:{UUID_PATTERN}$"
"""A page cursor of the player's games: the last entry's last change (ms) and id."""
DEFAULT_PAGE: Final = 20
MAX_PAGE: Final = 100

CardCode = Annotated[str, StringConstraints(pattern=CARD_PATTERN)]
DealCodeText = Annotated[str, StringConstraints(pattern=DEAL_CODE_PATTERN, max_length=80)]
CHALLENGE_ID_PATTERN: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9A-Z]{1,4}$"
"""A daily challenge's id: its UTC day and its rule preset's segment, ``2026-12-01-N``."""
ChallengeIdText = Annotated[str, StringConstraints(pattern=CHALLENGE_ID_PATTERN, max_length=15)]


def _whole_number(value: object) -> object:
    """JSON Schema's ``integer`` includes ``6.0``; ``true`` and ``"6"`` are not integers (and stay refused)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Recycles = Annotated[int, Field(ge=0, le=MAX_RECYCLES, strict=True), BeforeValidator(_whole_number)]
PositiveWhole = Annotated[int, Field(ge=1, strict=True), BeforeValidator(_whole_number)]
"""A request body's whole number from 1: ``6.0`` is one, as JSON Schema's ``integer`` says."""
Count = Annotated[int, Field(ge=0)]


# Regular expressions that every engine reads alike: JavaScript's validators compile a schema's ``pattern`` with
# ``new RegExp(pattern)`` (no ``u`` flag: UTF-16 code units), Python's (schemathesis, jsonschema) by code point. A
# character class holding characters beyond U+FFFF (a player name's emoji, historic scripts) throws without the
# flag, its surrogate pairs read as reversed ranges, and no class that compiles without it names such characters
# alike in both: :func:`bmp_class` keeps a class's characters up to U+FFFF, written as escapes.

_BMP_END: Final = 0xFFFF


def class_ranges(insides: str) -> list[tuple[int, int]]:
    """The code point ranges of a character class's insides written as literal characters and ``a-b`` ranges
    (no escapes), as in :mod:`pyramide.service.accounts.name_chars`."""
    ranges: list[tuple[int, int]] = []
    index = 0
    while index < len(insides):
        first = ord(insides[index])
        if index + 2 < len(insides) and insides[index + 1] == "-":
            ranges.append((first, ord(insides[index + 2])))
            index += 3
        else:
            ranges.append((first, first))
            index += 1
    return ranges


def _unit(code: int) -> str:
    return f"\\u{code:04X}"


def bmp_class(ranges: Iterable[tuple[int, int]]) -> str:
    """A class of the characters of ``ranges`` up to U+FFFF, written with escapes: the same in every engine."""
    spans = [
        _unit(first) if first == min(last, _BMP_END) else f"{_unit(first)}-{_unit(min(last, _BMP_END))}"
        for first, last in sorted(ranges)
        if first <= _BMP_END
    ]
    return f"[{''.join(spans)}]"


@dataclass(frozen=True)
class SchemaPattern:
    """The ``pattern`` the schema states for a string whose own pattern (the one the service matches) is not an
    ECMAScript regular expression without flags: the same language, written for JavaScript's validators too
    (:func:`bmp_class`)."""

    pattern: str

    def __get_pydantic_json_schema__(self, core: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core)
        schema["pattern"] = self.pattern
        return schema


def _omit_absent(schema: dict[str, Any]) -> None:
    """A field left out of the body when it has nothing to say (its default is null): optional (not ``required``,
    which the document's generator makes every sent field), of its own type, with no ``default: null`` that
    generated clients read as a value always present."""
    for name, field in schema.get("properties", {}).items():
        if field.get("default", ...) is not None:
            continue
        if name in schema.get("required", ()):
            schema["required"].remove(name)
        field.pop("default")
        branches = [b for b in field.pop("anyOf", []) if b != {"type": "null"}]
        field.update(branches[0] if len(branches) == 1 else {"anyOf": branches})


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ProblemEntry(BaseModel):
    """One mistake in a request: where (``pointer`` into the JSON body, or the ``query`` parameter or ``header``
    by name), a stable ``code`` and a ``message`` in the response's language. Only the one of ``pointer``,
    ``query`` and ``header`` that applies is sent."""

    model_config = ConfigDict(json_schema_extra=_omit_absent)

    pointer: str | None = Field(None, description="A JSON Pointer (RFC 6901) into the body; empty: the body.")
    query: str | None = Field(None, description="The query parameter at fault.")
    header: str | None = Field(None, description="The header at fault.")
    code: str = Field(description="required, unknown_field, wrong_type, invalid_format, too_long, …")
    message: str


class Problem(BaseModel):
    """RFC 9457 problem details, with a stable ``code``; ``title`` (a whole sentence) and ``detail`` (what was
    wrong, with its values) in the response's language (see Content-Language). ``errors`` is sent only for a
    request that does not fit the schema."""

    model_config = ConfigDict(json_schema_extra=_omit_absent)

    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[ProblemEntry] | None = Field(
        None, description="For a request that does not fit the schema: each mistake (RFC 9457 extension member)."
    )


class Health(BaseModel):
    status: Literal["ok"]


class JobHealth(BaseModel):
    """One background job of the answering process, by name: a periodic job, or the tasks of one kind."""

    name: str = Field(description="What the job does, e.g. `webhook delivery`, `par`, `move counts flush`.")
    kind: Literal["periodic", "task", "lasting"] = Field(
        description="`periodic`: runs every interval; `task`: one-shot tasks (a par's search, an outbox's delivery);"
        " `lasting`: tasks that last as long as what they serve (a live stream's lease renewal)."
    )
    running: int = Field(description="How many of it run now.")
    runs: int = Field(description="How many times it ran since the process started.")
    last_run_at: datetime | None = Field(description="When it last started.")
    last_finish_at: datetime | None = Field(description="When it last ended.")
    last_error: str | None = Field(description="The type of the last error it ended with, if any.")


class Readiness(BaseModel):
    status: Literal["ok"]
    jobs: list[JobHealth] = Field(description="The answering process's background jobs, by name.")
