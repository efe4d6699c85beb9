"""Moderation: what the operator and the apps' moderators do to players and boards, and the audit log of it."""

from pyramide.service.moderation.audit import AuditLog

__all__ = ["AuditLog"]
