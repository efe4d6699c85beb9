"""``pyramide verify``: check a result certificate without trusting the service that issued it (beyond its public
keys). The signature is checked by PyJWT against a JWK Set; the record is replayed by the engine from the deal code,
so a certificate whose signature holds but whose record does not win (a key misused, a bug) still fails.

Each failure is a :class:`CertificateError` with the reason a person reads; ``docs/certificates.md`` lists them."""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import jwt

from pyramide.engine import DealCode, Game, PyramideError, Status
from pyramide.engine.moves import parse_record

DEFAULT_JWKS = "http://127.0.0.1:8000/.well-known/jwks.json"
"""The keys of a service run with ``pyramide serve``'s defaults."""
CERTIFICATE_TYPE = "pyramide-certificate+jwt"
CLAIMS = ("v", "game", "code", "rules", "record", "moves", "elapsed_ms", "started_at", "finished_at", "signed_at")


class CertificateError(Exception):
    """The certificate is not what it claims: the message says why."""


@dataclass(frozen=True, slots=True)
class Verified:
    """A certificate whose signature and record both hold."""

    kid: str
    claims: dict[str, Any]

    def describe(self) -> str:
        """What the certificate proves, in a few lines."""
        c = self.claims
        who = c.get("player") or "a player with no shown name"
        lines = [
            f"valid: signed by key {self.kid}",
            f"{who} won {c['code']} in {c['moves']} moves ({c['elapsed_ms']} ms from the first move),",
            f"started {c['started_at']}, finished {c['finished_at']}",
        ]
        if c.get("challenge") is not None:
            lines.append(f"daily challenge {c['challenge']}, tier {c.get('tier')}")
        if "hints" in c:
            lines.append(f"with {c['hints']} hint(s) and {c.get('undos', 0)} undo(s), as the service states")
        lines.append(f"the record ({len(c['record'].split())} operations) replays to a win under these rules")
        return "\n".join(lines)


def read_certificate(text: str) -> str:
    """The compact JWS in ``text``: the token itself, or getGameCertificate's JSON answer."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            stripped = str(json.loads(stripped)["certificate"])
        except (json.JSONDecodeError, KeyError, TypeError):
            raise CertificateError("the file is JSON without a `certificate`") from None
    return stripped


def load_jwks(source: str) -> dict[str, Any]:
    """The JWK Set at ``source``: an http(s) URL or a file."""
    try:
        if source.startswith(("http://", "https://")):
            with urllib.request.urlopen(source, timeout=10) as response:
                data = json.loads(response.read())
        else:
            data = json.loads(Path(source).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CertificateError(f"cannot read the keys at {source} ({error})") from None
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise CertificateError(f"{source} is not a JWK Set")
    return data


def verify(token: str, jwks: dict[str, Any]) -> Verified:
    """Check the signature of ``token`` against ``jwks``, then replay its record; :class:`CertificateError` with
    the reason at the first thing that does not hold."""
    kid, claims = _signed_claims(token, jwks)
    _replay(claims)
    return Verified(kid, claims)


def _signed_claims(token: str, jwks: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.DecodeError as error:
        raise CertificateError(f"not a compact JWS ({error})") from None
    if header.get("alg") != "EdDSA":
        raise CertificateError(f"signed with {header.get('alg')!r}, not EdDSA")
    if header.get("typ") != CERTIFICATE_TYPE:
        raise CertificateError(f"not a Pyramide certificate (typ {header.get('typ')!r})")
    kid = header.get("kid")
    found = [k for k in jwks["keys"] if isinstance(k, dict) and k.get("kid") == kid]
    if not found:
        known = ", ".join(str(k.get("kid")) for k in jwks["keys"] if isinstance(k, dict))
        raise CertificateError(f"unknown key id {kid!r}: the key set holds {known or 'no key'}")
    try:
        key = jwt.PyJWK(found[0], algorithm="EdDSA")
        claims: dict[str, Any] = jwt.decode(token, key, algorithms=["EdDSA"])
    except jwt.InvalidSignatureError:
        raise CertificateError(f"the signature does not match key {kid}: the certificate was altered") from None
    except jwt.PyJWTError as error:
        raise CertificateError(f"the certificate does not verify ({error})") from None
    missing = [name for name in CLAIMS if name not in claims]
    if missing:
        raise CertificateError(f"the payload lacks {', '.join(missing)}")
    return str(kid), claims


def _replay(claims: dict[str, Any]) -> None:
    """Replay the record from the code: every operation legal, a win at its end, the stated moves and times."""
    try:
        code = DealCode.parse(str(claims["code"]))
        moves = parse_record(str(claims["record"]))
    except PyramideError as error:
        raise CertificateError(f"the code or the record does not read ({error})") from None
    if code.rules.to_json() != claims["rules"]:
        raise CertificateError("the stated rules are not the code's")
    game = Game(code)
    for step, move in enumerate(moves, start=1):
        try:
            game.play(move)
        except PyramideError as error:
            raise CertificateError(f"operation {step} ({move.notation()}) is not legal there ({error})") from None
    if game.outcome().status is not Status.WON:
        raise CertificateError(f"the record does not win: it ends {game.outcome().status}")
    if game.moves != claims["moves"]:
        raise CertificateError(f"the record takes {game.moves} moves, not the {claims['moves']} stated")
    _check_times(claims)


def _check_times(claims: dict[str, Any]) -> None:
    try:
        started = datetime.fromisoformat(str(claims["started_at"]))
        finished = datetime.fromisoformat(str(claims["finished_at"]))
    except ValueError:
        raise CertificateError("the start or finish time does not read") from None
    span_ms = round((finished - started).total_seconds() * 1000)
    if claims["elapsed_ms"] is not None and claims["elapsed_ms"] != span_ms:
        raise CertificateError(f"the elapsed time {claims['elapsed_ms']} ms is not finish minus start ({span_ms} ms)")
