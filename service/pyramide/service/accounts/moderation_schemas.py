"""Moderation's bodies: the audit log's, a ban's reason and what a ban or its lifting did."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from pydantic import BaseModel, Field

from pyramide.service.http.schemas import StrictModel

REASON_MAX = 500


class AuditEntry(BaseModel):
    id: str = Field(description="The entry's place in the log: the cursor for the next page.")
    at: datetime
    actor: str = Field(description="`operator` or `app:<id>`.")
    actor_name: str = Field(description="`operator`, or the app's name.")
    action: str = Field(description="`create_app`, `revoke_app`, `ban`, `unban`, `annul`, `accept_review`, ….")
    target: str = Field(description="What it was done to: `player:<id>`, `app:<id>`, a board.")
    reason: str
    detail: dict[str, str]


class AuditPage(BaseModel):
    entries: list[AuditEntry]
    next_cursor: str | None


class BanBody(StrictModel):
    reason: str = Field(
        "",
        max_length=REASON_MAX,
        description="Why, for the audit log and the player's export (at most 500 characters).",
    )


class BanState(BaseModel):
    player_id: UUID
    banned: bool = Field(description="Whether the player is banned now.")
    banned_by: str | None = Field(
        None,
        description="Who owns the ban in force: `operator` or `app:<id>` (an app lifts only its own bans);"
        " null when not banned.",
    )
    boards: list[str] = Field(
        description="The boards the player's entries left (a ban) or went back to (lifting it): deal codes and"
        " `challenge:<id>`."
    )
