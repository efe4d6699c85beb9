"""Players' bodies: creating one, its settings, its view; player names and how they are kept."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Annotated
from uuid import UUID

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from pyramide.engine.messages import Locale
from pyramide.service.accounts.name_chars import NAME_BASES, NAME_MARKS
from pyramide.service.http.schemas import SPACE_CHARACTERS, SchemaPattern, StrictModel, bmp_class, class_ranges

_SPACES = "".join(chr(c) for c in SPACE_CHARACTERS)
NAME_PATTERN = f"^[{_SPACES}{NAME_MARKS}]*[{NAME_BASES}][{_SPACES}{NAME_BASES}{NAME_MARKS}]*$"
"""Spaces and marks, then a character that shows something by itself, then any allowed characters: a name that
would render blank (spaces, marks, Hangul fillers, the braille blank, format characters) does not match."""
_SPACE_RANGES = [(c, c) for c in SPACE_CHARACTERS]
NAME_SCHEMA_PATTERN = (
    f"^{bmp_class([*_SPACE_RANGES, *class_ranges(NAME_MARKS)])}*{bmp_class(class_ranges(NAME_BASES))}"
    f"{bmp_class([*_SPACE_RANGES, *class_ranges(NAME_BASES), *class_ranges(NAME_MARKS)])}*$"
)
""":data:`NAME_PATTERN` as the schema states it, read alike by ``new RegExp(pattern)`` (no flags) and Python: the
same names within the BMP. NAME_PATTERN's ranges beyond U+FFFF compile only with the ``u`` flag, and a superset
there would let the schema promise names the service refuses (unassigned, private-use): the schema's pattern leaves
them out, and the field's description says that the service also takes them."""
_SPACE_RUNS = re.compile(f"[{_SPACES}]+")


def normalise_name(name: str) -> str:
    """NFC, every kind of space as one plain space, trimmed: what a leaderboard shows. Names that differ only in
    composition or spacing are the same name."""
    return _SPACE_RUNS.sub(" ", unicodedata.normalize("NFC", name)).strip()


PlayerName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=24, pattern=NAME_PATTERN),
    SchemaPattern(NAME_SCHEMA_PATTERN),
    AfterValidator(normalise_name),
    Field(
        description="1-24 characters: letters, marks, digits, punctuation, symbols and spaces, at least one a"
        " visible letter, digit, punctuation or symbol (not a mark or space). Kept in NFC, trimmed, each run of"
        " spaces as one. Control, format (bidi overrides, zero-width), private-use and unassigned characters, and"
        " characters that render as nothing (Hangul fillers, the braille blank), are refused (422). The pattern"
        " lists the characters up to U+FFFF (so that every JavaScript validator can compile it); the service also"
        " takes the letters, marks, digits, punctuation and symbols beyond it (emoji, historic scripts)."
    ),
]


class PlayerSettingsBody(StrictModel):
    locale: Locale | None = Field(None, description="Language of messages when Accept-Language names none.")
    explain_errors: bool | None = Field(None, description="Default for new games: explain refused taps.")
    name: PlayerName | None = Field(None, description="Shown beside the player's wins on leaderboards.")


class CreatePlayerBody(StrictModel):
    locale: Locale = "hu"
    explain_errors: bool = False
    name: PlayerName | None = Field(None, description="Shown beside the player's wins on leaderboards.")


class Player(BaseModel):
    id: UUID
    locale: Locale
    explain_errors: bool
    name: str | None = Field(description="Shown beside the player's wins on leaderboards; null: none chosen.")
    created_at: datetime


class CreatedPlayer(Player):
    token: str = Field(description="Bearer token for every game route. Shown once; stored only hashed.")


class IssuedToken(BaseModel):
    token: str = Field(description="The player's new bearer token; the one it replaces no longer works. Shown once.")
