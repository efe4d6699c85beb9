"""The response to a game request as it is sent, and as it is kept for a retry with the same Idempotency-Key."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, replace
from uuid import UUID

from pyramide.engine import Feedback
from pyramide.engine.messages import Locale
from pyramide.service.deals import Par
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.snapshots import snapshot_json
from pyramide.service.games.stored_game import StoredGame


@dataclass(frozen=True, slots=True)
class Reply:
    """A response as it is sent, and what rebuilds it for a retry with the same Idempotency-Key."""

    created: bool
    """Whether this request dealt the game (answered 201 with its location)."""
    body: bytes
    version: int
    locale: Locale = "hu"
    feedback: Feedback | None = None
    now: int = 0
    kept_more: bool = False
    """Whether this change kept one response more for its game (see ``SaveResult.kept_more``): what the
    per-address allowance of keyed moves counts."""
    replayed: bool = False
    """Whether this is the response kept for an Idempotency-Key, sent again for a retry
    (``Idempotent-Replayed: true``)."""

    def kept(self, fingerprint: str) -> bytes:
        """The head of the kept response: the request's fingerprint and what, with the stored game that the save
        script appends, rebuilds this response byte for byte (see :meth:`from_kept`)."""
        flags = (_EN if self.locale == "en" else 0) | (_CREATED if self.created else 0)
        feedback = b"" if self.feedback is None else _feedback_json(self.feedback)
        status = 201 if self.created else 200  # the stored layout keeps its status field
        return _KEPT.pack(bytes.fromhex(fingerprint)[:16], status, self.now, flags, len(feedback)) + feedback

    @classmethod
    def from_kept(cls, data: bytes, fingerprint: str, game_id: UUID) -> Reply:
        """The response kept for an Idempotency-Key; 409 ``idempotency_key_reused`` for a different request."""
        fp, _status, now, flags, size = _KEPT.unpack_from(data)
        if fp != bytes.fromhex(fingerprint)[:16]:
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED)
        start = _KEPT.size
        feedback = _feedback_from_json(data[start : start + size]) if size else None
        stored = StoredGame.from_bytes(game_id, data[start + size :])
        reply = reply_for(stored, "en" if flags & _EN else "hu", feedback, created=bool(flags & _CREATED), now=now)
        return replace(reply, replayed=True)


_KEPT = struct.Struct(">16sHQBH")
"""Fingerprint (16 bytes of its SHA-256), status, the moment answered (ms), flags, length of the feedback JSON."""
_EN = 1
_CREATED = 2


def _feedback_json(feedback: Feedback) -> bytes:
    return json.dumps([feedback.code, feedback.params, feedback.always_shown], separators=(",", ":")).encode()


def _feedback_from_json(data: bytes) -> Feedback:
    code, params, always_shown = json.loads(data)
    return Feedback(code, tuple((k, v) for k, v in params), always_shown)


def reply_for(
    stored: StoredGame,
    locale: Locale,
    feedback: Feedback | None,
    *,
    now: int,
    created: bool = False,
    par: Par | None = None,
) -> Reply:
    body = snapshot_json(stored, locale, feedback, now=now, par=par)
    return Reply(created, body, stored.version, locale, feedback, now)
