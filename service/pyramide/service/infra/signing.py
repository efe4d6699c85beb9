"""The Ed25519 keys result certificates are signed with (``docs/certificates.md``): read from
``PYRAMIDE_SIGNING_KEYS`` and checked at start, published as a JWK Set. The JOSE work is PyJWT's and the keys'
cryptography's; this module only reads and names them.

``PYRAMIDE_SIGNING_KEYS`` holds the keys in order, the first signing and every one published (so that certificates
signed before a rotation still verify): either a JSON array of JWKs (or a JWK Set, ``{"keys": [...]}``), or PEM
blocks one after the other. The first must be a private key; later ones may be public keys only. A key's id is its
JWK's ``kid``, or else its RFC 7638 thumbprint (what a PEM key always gets)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from jwt.algorithms import OKPAlgorithm
from jwt.exceptions import InvalidKeyError

_PEM = re.compile(r"-----BEGIN ([A-Z ]+)-----.+?-----END \1-----", re.DOTALL)


@dataclass(frozen=True, slots=True)
class SigningKey:
    """One key: its id, its public half and, for a key that may sign, its private half."""

    kid: str
    public: Ed25519PublicKey
    private: Ed25519PrivateKey | None = None

    def jwk(self) -> dict[str, str]:
        """The public key as a JWK, with its id and use (what ``/.well-known/jwks.json`` lists)."""
        data: dict[str, str] = json.loads(OKPAlgorithm.to_jwk(self.public))
        return {**data, "kid": self.kid, "use": "sig", "alg": "EdDSA"}


def thumbprint(public: Ed25519PublicKey) -> str:
    """The key's RFC 7638 JWK thumbprint (SHA-256 over its required members in order), base64url: a stable id."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    members = {"crv": "Ed25519", "kty": "OKP", "x": _b64(raw)}
    return _b64(hashlib.sha256(json.dumps(members, separators=(",", ":")).encode()).digest())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _key(private: Ed25519PrivateKey | None, public: Ed25519PublicKey, kid: str | None) -> SigningKey:
    return SigningKey(kid or thumbprint(public), public, private)


def _from_jwk(data: object) -> SigningKey:
    if not isinstance(data, dict) or data.get("kty") != "OKP" or data.get("crv") != "Ed25519":
        raise ValueError("every key must be an Ed25519 JWK (kty OKP, crv Ed25519)")
    try:
        key = OKPAlgorithm.from_jwk(data)
    except InvalidKeyError as error:
        raise ValueError(f"a JWK is not a valid Ed25519 key ({error})") from None
    kid = data.get("kid")
    if kid is not None and (not isinstance(kid, str) or not kid):
        raise ValueError("a JWK's kid must be a non-empty string")
    if isinstance(key, Ed25519PrivateKey):
        return _key(key, key.public_key(), kid)
    if isinstance(key, Ed25519PublicKey):
        return _key(None, key, kid)
    raise ValueError("every key must be an Ed25519 key")


def _from_pem(block: str) -> SigningKey:
    data = block.encode()
    try:
        if "PRIVATE" in block:
            private = serialization.load_pem_private_key(data, password=None)
            if not isinstance(private, Ed25519PrivateKey):
                raise ValueError("every PEM key must be an Ed25519 key")
            return _key(private, private.public_key(), None)
        public = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as error:
        raise ValueError(f"a PEM block is not an Ed25519 key ({error})") from None
    if not isinstance(public, Ed25519PublicKey):
        raise ValueError("every PEM key must be an Ed25519 key")
    return _key(None, public, None)


def parse_keys(text: str) -> tuple[SigningKey, ...]:
    """The keys ``text`` holds, in order; ``ValueError`` saying why when it holds none, a key that is not Ed25519,
    two keys with one id, or a first key that cannot sign."""
    stripped = text.strip()
    if stripped.startswith("-----BEGIN"):
        keys = tuple(_from_pem(m.group(0)) for m in _PEM.finditer(stripped))
    else:
        keys = tuple(_from_jwk(k) for k in _jwks(stripped))
    if not keys:
        raise ValueError("no key: give a JSON array of Ed25519 JWKs or PEM blocks")
    if keys[0].private is None:
        raise ValueError("the first key signs, so it must be a private key")
    if len({k.kid for k in keys}) != len(keys):
        raise ValueError("two keys have the same kid")
    return keys


def _jwks(text: str) -> list[Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise ValueError("neither JSON nor PEM") from None
    if isinstance(data, dict) and isinstance(data.get("keys"), list):
        data = data["keys"]
    if not isinstance(data, list):
        raise ValueError("a JSON array of JWKs or a JWK Set is expected")
    return data


def new_key_pem() -> str:
    """A fresh Ed25519 private key as PKCS#8 PEM (the one kept in Redis when no key is configured)."""
    return (
        Ed25519PrivateKey.generate()
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        .decode()
    )


def private_jwk(key: Ed25519PrivateKey, kid: str) -> dict[str, str]:
    """``key`` as a private JWK with ``kid``: what an operator puts in ``PYRAMIDE_SIGNING_KEYS``."""
    data: dict[str, str] = json.loads(OKPAlgorithm.to_jwk(key))
    return {**data, "kid": kid}
