"""Moderation: what the operator and the apps' moderators do to players and boards, and the audit log of it."""

from pyramide.service.moderation.annulments import Annulments
from pyramide.service.moderation.audit import AuditLog
from pyramide.service.moderation.bans import Bans

__all__ = ["Annulments", "AuditLog", "Bans"]
