"""An app's keys, under its hash tag ``{app:<id>}``, the list of apps, and the audit log of operator and app
actions."""

from __future__ import annotations

from typing import Final
from uuid import UUID

APPS: Final = "pyr:apps"
"""The apps, ordered by creation."""
APP_CHANGES: Final = "pyr:apps:changes"
"""The pub/sub channel where an app's id is published when it is revoked or a player of its is erased: every process
drops what it remembers of the app's keys and bindings (``accounts.app_cache``)."""


def app(app_id: UUID) -> str:
    """The app's hash: its name, key hash and allowances."""
    return f"pyr:{{app:{app_id}}}:app"


def app_audit(app_id: UUID) -> str:
    """The app's own stream of its actions."""
    return f"pyr:{{app:{app_id}}}:audit"


def app_binding(app_id: UUID, digest: str) -> str:
    """The player an app's external id (its SHA-256 digest) is bound to."""
    return f"pyr:{{app:{app_id}}}:player:{digest}"


def app_erased_ban(app_id: UUID, digest: str) -> str:
    """A ban kept past the erasure of the banned player (the digest of its id)."""
    return f"pyr:{{app:{app_id}}}:erased-ban:{digest}"


AUDIT: Final = "pyr:audit"
"""Every operator and app action, newest last."""
