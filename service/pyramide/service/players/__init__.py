"""Players: anonymous accounts, their bearer tokens and settings."""

from pyramide.service.players.service import BANNED, Player, PlayerStore, audit_key, auth_key

__all__ = ["BANNED", "Player", "PlayerStore", "audit_key", "auth_key"]
