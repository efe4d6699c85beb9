"""Players' bodies: creating one, its settings, its view; player names and how they are kept."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Annotated
from uuid import UUID

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from pyramide.engine.messages import Locale
from pyramide.service.http.schemas import SPACE_CHARACTERS, SchemaPattern, StrictModel, class_ranges, utf16_class
from pyramide.service.players.name_chars import NAME_BASES, NAME_MARKS

_SPACES = "".join(chr(c) for c in SPACE_CHARACTERS)
NAME_PATTERN = f"^[{_SPACES}{NAME_MARKS}]*[{NAME_BASES}][{_SPACES}{NAME_BASES}{NAME_MARKS}]*$"
"""Spaces and marks, then a character that shows something by itself, then any allowed characters: a name that
would render blank (spaces, marks, Hangul fillers, the braille blank, format characters) does not match."""
_SPACE_RANGES = [(c, c) for c in SPACE_CHARACTERS]
NAME_SCHEMA_PATTERN = (
    f"^{utf16_class([*_SPACE_RANGES, *class_ranges(NAME_MARKS)])}*{utf16_class(class_ranges(NAME_BASES))}"
    f"{utf16_class([*_SPACE_RANGES, *class_ranges(NAME_BASES), *class_ranges(NAME_MARKS)])}*$"
)
""":data:`NAME_PATTERN` as the schema states it: the same names, in UTF-16 code units, so that
``new RegExp(pattern)`` compiles in every JavaScript validator (NAME_PATTERN's astral ranges need the ``u`` flag)."""
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
        " characters that render as nothing (Hangul fillers, the braille blank), are refused (422)."
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
