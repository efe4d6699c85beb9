"""Apps' bodies: creating one (the operator), its view, and the key shown once."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, Field

from pyramide.service.http.schemas import StrictModel
from pyramide.service.players.schemas import PlayerName

Scope = Literal["players", "moderation"]


class CreateAppBody(StrictModel):
    name: PlayerName = Field(description="Shown beside its players' wins; the same characters as a player's name.")
    scopes: list[Scope] = Field(
        default_factory=list,
        max_length=2,
        description="`players`: act for the app's own users (`Pyramide-Player`) and issue them sessions;"
        " `moderation`: ban, unban and annul entries of the app's own players.",
    )


class AppView(BaseModel):
    id: UUID
    name: str
    scopes: list[Scope]
    created_at: datetime


class CreatedApp(AppView):
    key: str = Field(description="The app's server key (`pyrapp_…`). Shown once; stored only hashed.")


class AppList(BaseModel):
    entries: list[AppView]
