"""Apps' bodies: creating one (the operator), its view, and the key shown once."""

from __future__ import annotations

from datetime import datetime
from typing import Literal
from uuid import UUID

from pydantic import BaseModel, Field

from pyramide.service.accounts.schemas import PlayerName
from pyramide.service.http.schemas import StrictModel

Scope = Literal["players", "moderation"]


class CreateAppBody(StrictModel):
    name: PlayerName = Field(description="Shown beside its players' wins; the same characters as a player's name.")
    scopes: list[Scope] = Field(
        default_factory=list,
        max_length=2,
        description="`players`: act for the app's own users (`Pyramide-Player`) and issue them sessions;"
        " `moderation`: ban, unban and annul entries of the app's own players, and reject their held wins"
        " (accepting one is the operator's alone).",
    )
    limits: AppLimits | None = Field(None, description="Its own limits; unset ones are the settings'.")


class AppLimits(StrictModel):
    """An app's own limits, each in place of its ``PYRAMIDE_APP_LIMIT_*`` / ``PYRAMIDE_APP_QUOTA_*`` setting: what
    all its requests together may spend (those that name an end user in ``Pyramide-Client-IP`` also spend the
    per-address limits of the app's bucket of that address); 0 switches one off."""

    players: int | None = Field(None, ge=0, description="App players created per minute.")
    address_games: int | None = Field(None, ge=0, description="Games created per minute by all its players.")
    address_moves: int | None = Field(None, ge=0, description="Moves, taps and abandons per minute.")
    address_keyed_moves: int | None = Field(None, ge=0, description="Moves that keep one response more, a minute.")
    quota_players: int | None = Field(None, ge=0, description="App players created per day.")
    quota_games: int | None = Field(None, ge=0, description="Games created per day.")

    def values(self) -> dict[str, int]:
        return {name: value for name, value in self.model_dump().items() if value is not None}


class AppView(BaseModel):
    id: UUID
    name: str
    scopes: list[Scope]
    created_at: datetime


class CreatedApp(AppView):
    key: str = Field(description="The app's server key (`pyrapp_…`). Shown once; stored only hashed.")


MAX_GRACE_S = 7 * 24 * 3600


class RotateKeyBody(StrictModel):
    grace_s: int = Field(
        86_400,
        ge=0,
        le=MAX_GRACE_S,
        description="How long the replaced key keeps working, in seconds (0: refused at once; at most 7 days): time"
        " to roll the new key out to every server of the app.",
    )


class RotatedKey(CreatedApp):
    old_key_valid_until: datetime = Field(description="When the replaced key stops working.")


class AppList(BaseModel):
    entries: list[AppView]


class IssuedSession(BaseModel):
    token: str = Field(description="A bearer token (`pyrses_…`) for this one player, for the app's front end.")
    expires_at: datetime
