"""Who acts on an admin route: the operator (``PYRAMIDE_OPERATOR_KEY``) or an app (its server key)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from uuid import UUID


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller of an admin route. The operator may do everything; an app only what its scopes allow, and only
    to its own players."""

    kind: Literal["operator", "app"]
    app_id: UUID | None
    """``None`` for the operator."""
    name: str
    """``operator``, or the app's name."""
    scopes: frozenset[str]

    @classmethod
    def operator(cls) -> Principal:
        return cls("operator", None, "operator", frozenset({"players", "moderation", "apps"}))

    @property
    def actor(self) -> str:
        """How the audit log names the caller: ``operator`` or ``app:<id>``."""
        return "operator" if self.app_id is None else f"app:{self.app_id}"

    @property
    def is_operator(self) -> bool:
        return self.kind == "operator"

    def may_moderate(self, player_app_id: UUID | None) -> bool:
        """Whether this caller may moderate a player bound to ``player_app_id`` (``None``: an anonymous player):
        the operator any player; an app with the ``moderation`` scope its own players only."""
        if self.is_operator:
            return True
        return "moderation" in self.scopes and player_app_id is not None and player_app_id == self.app_id
