"""What the service keeps about a player, given back (export) and erased on request (GDPR access and erasure)."""

from pyramide.service.privacy.service import PlayerData

__all__ = ["PlayerData"]
