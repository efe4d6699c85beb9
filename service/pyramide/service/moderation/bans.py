"""Bans: a moderator takes a player off every board at once and refuses its requests in every process, and may
lift the ban, which puts back exactly the entries it took.

The ban is one script in the player's slot (``players.PlayerStore.ban``): the flag in the player's settings, which
every route that reads the player from Redis sees, and the ban in place of the token hash that every game script
compares, so the move route refuses at once in every process without a round trip of its own. Then the player's
entries are kept with the ban and leave their boards (``stats.Leaderboards.set_aside``). A win racing the ban is
taken off its board again by its own settlement, which sees the flag when it records the win
(``games.settlement``). Banning again finishes a ban that a crash interrupted.

An app player erased while banned leaves the ban on its app's binding (``apps.players``): the same (app, external
id) stays 403 ``player_banned``. Unbanning the erased player's id (the operator, or its app with ``moderation``)
lifts it there, audited like any unban; the user then gets a fresh player."""

from __future__ import annotations

import time
from typing import Any
from uuid import UUID

from pyramide.service.apps import AppPlayers, AppStore, Principal
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.moderation.audit import AuditLog
from pyramide.service.players import Player, PlayerStore
from pyramide.service.stats import Leaderboards


async def moderated_player(players: PlayerStore, actor: Principal, player_id: UUID) -> Player:
    """The player ``actor`` means to act on: 404 ``not_found`` when there is none, 403 ``forbidden`` when the actor
    may not moderate it (an app: only its own players, and only with the ``moderation`` scope)."""
    player = await players.get(player_id)
    if player is None:
        raise DomainError(ErrorCode.NOT_FOUND)
    if not actor.may_moderate(player.app_id):
        raise DomainError(ErrorCode.FORBIDDEN)
    return player


class Bans:
    def __init__(
        self, players: PlayerStore, boards: Leaderboards, audit: AuditLog, apps: AppStore, app_players: AppPlayers
    ) -> None:
        self.players = players
        self.boards = boards
        self.audit = audit
        self.apps = apps
        self.app_players = app_players

    async def ban(self, actor: Principal, player_id: UUID, reason: str) -> dict[str, Any]:
        """Ban the player: its entries leave every board and its requests are 403 ``player_banned``; audited with
        the boards it left."""
        await moderated_player(self.players, actor, player_id)
        if not await self.players.ban(player_id, int(time.time() * 1000)):
            raise DomainError(ErrorCode.NOT_FOUND)  # erased meanwhile
        removed = await self.boards.set_aside(player_id)
        await self.audit.record(actor, "ban", f"player:{player_id}", reason, {"boards": " ".join(removed)})
        return {"player_id": player_id, "banned": True, "boards": removed}

    async def unban(self, actor: Principal, player_id: UUID, reason: str) -> dict[str, Any]:
        """Lift the player's ban: its token works again and the entries the ban kept go back on their boards;
        audited with those boards. A player that is not banned is left as it is (and nothing is audited). An app
        player erased while banned: the ban its binding kept is lifted."""
        if await self.players.get(player_id) is None:
            return await self._unban_erased(actor, player_id, reason)
        await moderated_player(self.players, actor, player_id)
        lifted = await self.players.unban(player_id)
        if lifted is None:
            raise DomainError(ErrorCode.NOT_FOUND)
        if not lifted:
            return {"player_id": player_id, "banned": False, "boards": []}
        restored = await self.boards.restore(player_id)
        await self.audit.record(actor, "unban", f"player:{player_id}", reason, {"boards": " ".join(restored)})
        return {"player_id": player_id, "banned": False, "boards": restored}

    async def _unban_erased(self, actor: Principal, player_id: UUID, reason: str) -> dict[str, Any]:
        """Lift the ban an erased app player left on its binding: 404 ``not_found`` when there is none the actor
        may lift (an app: only its own, with ``moderation``)."""
        if actor.is_operator:
            app_ids = [app.id for app in await self.apps.list()]
        elif actor.app_id is not None and actor.may_moderate(actor.app_id):
            app_ids = [actor.app_id]
        else:
            raise DomainError(ErrorCode.FORBIDDEN)
        for app_id in app_ids:
            if await self.app_players.lift_erased_ban(app_id, player_id):
                await self.audit.record(actor, "unban", f"player:{player_id}", reason, {"erased": "yes"})
                return {"player_id": player_id, "banned": False, "boards": []}
        raise DomainError(ErrorCode.NOT_FOUND)
