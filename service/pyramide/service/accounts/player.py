"""A player as a request sees it: its settings, its app binding, its ban, read from the player's hash."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from uuid import UUID

from pyramide.engine.messages import Locale


@dataclass(frozen=True, slots=True)
class Player:
    id: UUID
    locale: Locale
    explain_errors: bool
    created_ms: int
    name: str | None = None
    """Shown beside the player's wins on leaderboards; ``None``: none chosen."""
    token_hash: str = ""
    """The hash of the token this request authenticated with (see ``keyspace.auth``)."""
    create_record: str | None = None
    """Where createPlayer's sealed answer for a retry is kept, when it was created with an Idempotency-Key."""
    app_id: UUID | None = None
    """The app whose user this player is (see ``apps``); ``None``: an anonymous player."""
    app_name: str | None = None
    """That app's name when the player was bound to it (shown beside the player's board entries)."""
    external_id: str | None = None
    """The app's own id for its user (``Pyramide-Player``)."""
    banned: bool = False
    """A moderator has banned the player (see ``moderation``): every player route but export and erasure is 403."""
    banned_by: str | None = None
    """Who imposed the ban in force: ``operator`` or ``app:<id>`` (the audit log's actor); ``None`` when not banned."""

    @property
    def created_at(self) -> datetime:
        return datetime.fromtimestamp(self.created_ms / 1000, UTC)

    def fields(self) -> dict[str, str]:
        return {
            "locale": self.locale,
            "explain_errors": "1" if self.explain_errors else "0",
            "created_ms": str(self.created_ms),
            **({"name": self.name} if self.name else {}),
            **(self._app_fields() if self.app_id else {}),
        }

    def _app_fields(self) -> dict[str, str]:
        return {"app_id": str(self.app_id), "app_name": self.app_name or "", "external_id": self.external_id or ""}


def player_of(player_id: UUID, fields: dict[bytes, bytes]) -> Player:
    locale: Locale = "en" if fields.get(b"locale") == b"en" else "hu"
    name = fields.get(b"name")
    return Player(
        player_id,
        locale,
        fields.get(b"explain_errors") == b"1",
        int(fields.get(b"created_ms", b"0")),
        name.decode() if name else None,
        fields.get(b"token_hash", b"").decode(),
        (fields.get(b"create_record") or b"").decode() or None,
        *_app_binding(fields),
        b"banned_ms" in fields,
        _banned_by(fields),
    )


def _banned_by(fields: dict[bytes, bytes]) -> str | None:
    """Who owns the player's ban; a ban kept from before owners were kept is the operator's."""
    if b"banned_ms" not in fields:
        return None
    return (fields.get(b"banned_by") or b"operator").decode()


def _app_binding(fields: dict[bytes, bytes]) -> tuple[UUID | None, str | None, str | None]:
    """An app player's binding (app id, app name, external id), read from its hash; ``None`` for an anonymous one."""
    app = fields.get(b"app_id")
    if not app:
        return None, None, None
    return UUID(app.decode()), fields.get(b"app_name", b"").decode(), fields.get(b"external_id", b"").decode()
