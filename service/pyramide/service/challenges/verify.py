"""``pyramide verify-challenge``: check, from outside the service, that a closed challenge's deal is the one its
commitment named before its day began (SHA-256 over ``<code>:<nonce>``; see ``docs/fair-play.md``)."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

import httpx

DEFAULT_URL = "http://127.0.0.1:8000"


class NotVerifiedError(Exception):
    """The challenge does not verify: the message says why."""


def check(challenge: dict[str, Any]) -> str:
    """What verified, as a sentence; :class:`NotVerifiedError` with the reason when something does not hold."""
    commitment, code, nonce = challenge.get("commitment"), challenge.get("code"), challenge.get("nonce")
    if not commitment:
        raise NotVerifiedError("the challenge has no commitment")
    if not code or not nonce:
        raise NotVerifiedError("the challenge has not closed yet: its code and nonce are not public")
    computed = hashlib.sha256(f"{code}:{nonce}".encode("ascii")).hexdigest()
    if computed != commitment:
        raise NotVerifiedError(f"SHA-256(code:nonce) is {computed}, not the commitment {commitment}")
    committed_at = datetime.fromisoformat(str(challenge["committed_at"]))
    opens_at = datetime.fromisoformat(str(challenge["opens_at"]))
    if committed_at >= opens_at:
        began = opens_at.isoformat()
        raise NotVerifiedError(f"committed at {committed_at.isoformat()}, not before the day began ({began})")
    ahead = opens_at - committed_at
    return (
        f"{challenge['id']}: verified; {code} is the deal committed to at {committed_at.isoformat()},"
        f" {ahead.days} days {ahead.seconds // 3600} h before the day began"
    )


def fetch(base_url: str, challenge_id: str) -> dict[str, Any]:
    """The challenge as ``GET /v1/challenges/{id}`` shows it; :class:`NotVerifiedError` when it cannot be read."""
    try:
        response = httpx.get(f"{base_url.rstrip('/')}/v1/challenges/{challenge_id}", timeout=10)
    except httpx.HTTPError as error:
        raise NotVerifiedError(f"cannot read the challenge from {base_url}: {error}") from None
    if response.status_code != 200:
        raise NotVerifiedError(f"{base_url} answered {response.status_code}: {response.text[:300]}")
    found: dict[str, Any] = response.json()
    return found


def verify_challenge(base_url: str, challenge_id: str) -> str:
    return check(fetch(base_url, challenge_id))
