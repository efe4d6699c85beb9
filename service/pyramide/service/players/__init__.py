"""Players: anonymous accounts, their bearer tokens and settings."""

from pyramide.service.players.service import BANNED, Player, PlayerStore

__all__ = ["BANNED", "Player", "PlayerStore"]
