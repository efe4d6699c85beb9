"""Players: anonymous accounts, their bearer tokens and settings."""

from pyramide.service.players.service import Player, PlayerStore

__all__ = ["Player", "PlayerStore"]
