"""A player's data: all of it as one JSON document (``/v1/players/me/export``); its erasure is ``DELETE /me``
(``account_controller``)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get
from litestar.datastructures import State
from pydantic import BaseModel, Field

from pyramide.service.accounts import OPEN_TO_BANNED, Player, PlayerData
from pyramide.service.http.injection import Injected
from pyramide.service.http.limits import rate_limit_headers
from pyramide.service.http.responses import problems

PlayerRequest = Request[Player, str, State]


class PlayerExport(BaseModel):
    """Everything the service keeps about the caller (GDPR right of access)."""

    player: dict[str, Any] = Field(
        description="Id, language, error explanations, name, creation; for an app's player its `app` (id and"
        " name) and `external_id`."
    )
    statistics: dict[str, Any]
    games: list[dict[str, Any]] = Field(description="Every game kept: as listed, with its record and its result.")
    wins: list[dict[str, Any]] = Field(description="Every won game, as ranked.")
    leaderboard_entries: dict[str, Any] = Field(description="The caller's entry on each deal's board, by code.")
    entries_kept_by_ban: dict[str, Any] = Field(
        default_factory=dict,
        description="The caller's entries a ban keeps off the boards (back on them when it is lifted), by board.",
    )
    moderation: list[dict[str, Any]] = Field(
        default_factory=list,
        description="What moderators did to the caller (ban, unban, annulled entries): the audit log's entries"
        " about the caller, with who, when and why.",
    )


class PrivacyController(Controller):
    path = "/v1/players/me"
    tags = ["players"]

    @get(
        "/export",
        operation_id="exportPlayerData",
        summary="Everything kept about the caller, as one document",
        description="Open to a banned player too; `moderation` lists what moderators did to the caller.",
        responses=problems(400, 401, 403, 429),
        opt={OPEN_TO_BANNED: True},
        rate_limited=True,
        after_request=rate_limit_headers,
    )
    async def export(self, request: PlayerRequest, privacy: Injected[PlayerData]) -> PlayerExport:
        return PlayerExport.model_validate(await privacy.export(request.user))
