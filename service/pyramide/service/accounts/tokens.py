"""A player's bearer token: ``<player id>.<secret>``, both random; Redis keeps only the SHA-256 of the secret."""

from __future__ import annotations

import hashlib


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_hash(token: str) -> str:
    """What Redis keeps of a token: the SHA-256 of its secret part."""
    return secret_hash(token.partition(".")[2])
