"""Annulments: a moderator takes one entry off one board for good (a deal code's or a daily challenge's)."""

from __future__ import annotations

from uuid import UUID

from pyramide.service.accounts.audit import AuditLog
from pyramide.service.accounts.bans import moderated_player
from pyramide.service.accounts.players import PlayerStore
from pyramide.service.accounts.ports import PlayerBoards
from pyramide.service.accounts.principal import Principal
from pyramide.service.errors import DomainError, ErrorCode


class Annulments:
    def __init__(self, players: PlayerStore, boards: PlayerBoards, audit: AuditLog) -> None:
        self.players = players
        self.boards = boards
        self.audit = audit

    async def annul(self, actor: Principal, board: str, player_id: UUID, reason: str) -> None:
        """Take the player's entry off ``board`` (or out of what a ban keeps of it, so lifting the ban does not
        bring it back); 404 ``not_found`` when it has none there. Audited with the board."""
        await moderated_player(self.players, actor, player_id)
        if not await self.boards.annul(board, player_id):
            raise DomainError(ErrorCode.NOT_FOUND)
        await self.audit.record(actor, "annul", f"player:{player_id}", reason, {"board": board})
