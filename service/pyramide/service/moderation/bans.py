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
        the boards it left. The ban remembers who imposed it (an app's ban the operator repeats becomes the
        operator's)."""
        await moderated_player(self.players, actor, player_id)
        at_ms = int(time.time() * 1000)
        owner = await self.players.ban(player_id, at_ms, actor.actor, by_operator=actor.is_operator, reason=reason)
        if owner is None:
            raise DomainError(ErrorCode.NOT_FOUND)  # erased meanwhile
        removed = await self.boards.set_aside(player_id)
        detail = {"boards": " ".join(removed), "banned_by": owner}
        await self.audit.record(actor, "ban", f"player:{player_id}", reason, detail)
        return {"player_id": player_id, "banned": True, "banned_by": owner, "boards": removed}

    async def unban(self, actor: Principal, player_id: UUID, reason: str) -> dict[str, Any]:
        """Lift the player's ban: its token works again and the entries the ban kept go back on their boards;
        audited with those boards and who had imposed it. The operator lifts any ban, an app only one it imposed
        (403 ``forbidden``). A player that is not banned is left as it is (and nothing is audited). An app player
        erased while banned: the ban its binding kept is lifted (by the operator only: who imposed it went with the
        player)."""
        if await self.players.get(player_id) is None:
            return await self._unban_erased(actor, player_id, reason)
        player = await moderated_player(self.players, actor, player_id)
        lifted = await self.players.unban(player_id, actor.actor, by_operator=actor.is_operator, reason=reason)
        if lifted is None:
            raise DomainError(ErrorCode.NOT_FOUND)
        if not lifted:
            return {"player_id": player_id, "banned": False, "banned_by": None, "boards": []}
        restored = await self.boards.restore(player_id)
        detail = {"boards": " ".join(restored), "banned_by": player.banned_by or "operator"}
        await self.audit.record(actor, "unban", f"player:{player_id}", reason, detail)
        return {"player_id": player_id, "banned": False, "banned_by": None, "boards": restored}

    async def _unban_erased(self, actor: Principal, player_id: UUID, reason: str) -> dict[str, Any]:
        """Lift the ban an erased app player left on its binding (the operator only: 403 ``forbidden`` for an app);
        404 ``not_found`` when there is none. Audited without the erased player's id."""
        if not actor.is_operator:
            raise DomainError(ErrorCode.FORBIDDEN)
        for app in await self.apps.list():
            if await self.app_players.lift_erased_ban(app.id, player_id):
                await self.audit.record(actor, "unban", "erased-player", reason, {"erased": "yes"})
                return {"player_id": player_id, "banned": False, "banned_by": None, "boards": []}
        raise DomainError(ErrorCode.NOT_FOUND)
