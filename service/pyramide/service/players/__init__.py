"""Players: anonymous accounts, their bearer tokens and settings."""

from pyramide.service.players.service import Player, PlayerStore, auth_key

__all__ = ["Player", "PlayerStore", "auth_key"]
