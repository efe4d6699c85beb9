"""Answers kept for a retry that hold a token (createPlayer's, a token rotation's), sealed: under the SHA-256 of
the Idempotency-Key (the key itself is never stored) and encrypted with AES-GCM under a key derived from it by HKDF.
Only a caller holding the Idempotency-Key finds the record and can read it; Redis cannot."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
from typing import Final
from uuid import UUID

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from pyramide.service.accounts.player import Player, player_of
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.infra import keyspace

_NONCE_BYTES: Final = 12


class SealedCreate:
    """The kept response of one ``createPlayer`` Idempotency-Key: where it is kept and how it is sealed."""

    def __init__(self, idempotency_key: str, purpose: bytes = b"create-player", player: str | None = None) -> None:
        secret = idempotency_key.encode()
        lookup = hashlib.sha256(b"pyramide:" + purpose + b"\x1f" + secret).hexdigest()
        self.key = keyspace.sealed_create(lookup) if player is None else keyspace.player_sealed(player, lookup)
        self._aad = lookup.encode()
        derive = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"pyramide", info=purpose + b" response")
        self._aead = AESGCM(derive.derive(secret))

    @classmethod
    def rotation(cls, old_token: str, idempotency_key: str) -> SealedCreate:
        """The kept response of a token rotation: in the player's slot, found and opened only with both the token it
        replaced and the Idempotency-Key (a retry after a lost answer holds both; no one else does)."""
        player = old_token.partition(".")[0]
        with contextlib.suppress(ValueError):
            player = str(UUID(player))  # the player's slot, however the token spells its id
        return cls(f"{old_token}\x1f{idempotency_key}", b"rotate-token", player)

    def seal(self, fingerprint: str, player: Player, token: str) -> bytes:
        plain = json.dumps({"fp": fingerprint, "id": str(player.id), "token": token, **player.fields()}).encode()
        nonce = os.urandom(_NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, plain, self._aad)

    def open(self, sealed: bytes, fingerprint: str) -> tuple[Player, str]:
        """The player and token kept; 409 ``idempotency_key_reused`` when the kept request was another one."""
        try:
            plain = self._aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], self._aad)
        except InvalidTag:
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED) from None
        kept = json.loads(plain)
        if not hmac.compare_digest(kept.pop("fp"), fingerprint):
            raise DomainError(ErrorCode.IDEMPOTENCY_KEY_REUSED)
        token = kept.pop("token")
        player_id = UUID(kept.pop("id"))
        return player_of(player_id, {k.encode(): v.encode() for k, v in kept.items()}), token
