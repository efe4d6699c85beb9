"""The audit log's bodies."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


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
