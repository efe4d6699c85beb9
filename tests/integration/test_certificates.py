"""Result certificates (issue 46, item 3), as an outsider checks them: a won game's certificate fetched over HTTP
verifies with PyJWT alone and with ``pyramide verify``, its record replays to a win, every tampering is rejected with
its reason, a challenge's waits for the close, and a key rotation keeps old certificates verifiable."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
import redis
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from litestar.testing import TestClient

from pyramide.engine import DealCode, Game, Status
from pyramide.engine.moves import parse_record
from pyramide.service.app import create_app
from pyramide.service.infra.clock import FakeClock
from pyramide.service.infra.settings import Settings
from pyramide.service.infra.signing import SigningKey, private_jwk, thumbprint
from pyramide.verification import CertificateError, verify
from tests.support.challenges import _deal, _win
from tests.support.clock import past_the_close
from tests.support.deals import EASY_CODE, WINNING
from tests.support.layouts import EASY_CLEARING
from tests.support.players import new_player
from tests.support.serving import Served, serve_in_thread, serving


def _player(url: str, name: str | None = None) -> dict[str, str]:
    body = {} if name is None else {"name": name}
    created = httpx.post(f"{url}/v1/players", json=body)
    assert created.status_code == 201, created.text
    return {"Authorization": f"Bearer {created.json()['token']}"}


def _won_game(url: str, headers: dict[str, str], undo: bool = False) -> str:
    """A game of the easy deal won over HTTP by its clearing line (with an undo first, for an assisted win)."""
    game = httpx.post(f"{url}/v1/games", json={"code": EASY_CODE}, headers=headers).json()["id"]
    moves = ([WINNING[0], {"type": "undo"}] if undo else []) + WINNING
    for move in moves:
        response = httpx.post(f"{url}/v1/games/{game}/moves", json=move, headers=headers)
        assert response.status_code == 200, response.text
    assert response.json()["status"] == "won"
    return str(game)


def _certificate(url: str, headers: dict[str, str], game: str) -> dict[str, Any]:
    response = httpx.get(f"{url}/v1/games/{game}/certificate", headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _pyramide_verify(token: str, jwks: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    """``pyramide verify`` on the certificate saved to a file, against the key set at ``jwks`` (URL or file)."""
    path = tmp / f"certificate-{abs(hash(token))}.jws"
    path.write_text(token)
    return subprocess.run(
        [sys.executable, "-m", "pyramide", "verify", str(path), "--jwks", jwks],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ,
    )


def _recipe(token: str, jwks_url: str) -> dict[str, Any]:
    """docs/certificates.md's recipe: PyJWT alone for the signature, the engine for the replay."""
    kid = jwt.get_unverified_header(token)["kid"]
    keys = {k["kid"]: k for k in httpx.get(jwks_url).json()["keys"]}
    claims: dict[str, Any] = jwt.decode(token, jwt.PyJWK(keys[kid]), algorithms=["EdDSA"])
    return claims


def _segments(token: str) -> list[str]:
    return token.split(".")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _with_payload(token: str, change: dict[str, Any]) -> str:
    """The token with its payload changed and its header and signature kept: what an editor of the file makes."""
    header, payload, signature = _segments(token)
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    return ".".join([header, _b64(json.dumps({**claims, **change}).encode()), signature])


def _with_header(token: str, change: dict[str, Any]) -> str:
    header, payload, signature = _segments(token)
    fields = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    return ".".join([_b64(json.dumps({**fields, **change}).encode()), payload, signature])


def _forged(token: str, key: Ed25519PrivateKey, kid: str, change: dict[str, Any]) -> str:
    """The certificate's claims changed and signed anew with a key of the forger's own, under ``kid``."""
    claims = {**jwt.decode(token, options={"verify_signature": False}), **change}
    return jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": kid, "typ": "pyramide-certificate+jwt"})


def test_a_won_game_s_certificate_verifies_with_pyjwt_alone_and_with_pyramide_verify(
    live_url: str, tmp_path: Path
) -> None:
    """The owner's certificate holds the game as played; the keys are public and cacheable; the recipe and the
    command both accept it, and replaying its record from its code reaches the win it claims."""
    headers = _player(live_url, "Ildikó")
    game = _won_game(live_url, headers, undo=True)
    answer = _certificate(live_url, headers, game)
    token = answer["certificate"]
    keys = httpx.get(f"{live_url}/.well-known/jwks.json")
    assert keys.status_code == 200 and "max-age=3600" in keys.headers["cache-control"]
    assert [k["kid"] for k in keys.json()["keys"]] == [answer["kid"]] and "d" not in keys.json()["keys"][0]

    claims = _recipe(token, f"{live_url}/.well-known/jwks.json")
    record = httpx.get(f"{live_url}/v1/games/{game}/record", headers=headers).json()
    snapshot = httpx.get(f"{live_url}/v1/games/{game}", headers=headers).json()
    assert claims == answer["claims"]
    assert (claims["code"], claims["record"], claims["rules"]) == (EASY_CODE, record["record"], record["rules"])
    assert (claims["moves"], claims["elapsed_ms"]) == (snapshot["moves"], snapshot["elapsed_ms"])
    assert (claims["player"], claims["challenge"], claims["tier"], claims["game"]) == ("Ildikó", None, None, game)
    replay = Game(DealCode.parse(claims["code"]))
    for move in parse_record(claims["record"]):
        replay.play(move)
    assert replay.outcome().status is Status.WON and replay.moves == claims["moves"]

    checked = _pyramide_verify(
        json.dumps(answer), f"{live_url}/.well-known/jwks.json", tmp_path
    )  # the answer, as saved
    assert checked.returncode == 0, checked.stderr
    assert f"valid: signed by key {answer['kid']}" in checked.stdout and "Ildikó won " + EASY_CODE in checked.stdout


def test_every_tampering_is_rejected_with_its_reason(live_url: str, tmp_path: Path) -> None:
    """A move changed, a time changed, the signature altered, the key id altered, a key the service never had: each
    fails, with the reason, in PyJWT and in ``pyramide verify`` (exit 1); the untouched certificate passes."""
    headers = _player(live_url, "Béla")
    token = _certificate(live_url, headers, _won_game(live_url, headers))["certificate"]
    jwks = httpx.get(f"{live_url}/.well-known/jwks.json").json()
    jwks_file = tmp_path / "jwks.json"
    jwks_file.write_text(json.dumps(jwks))
    kid = jwks["keys"][0]["kid"]
    claims = jwt.decode(token, options={"verify_signature": False})
    moves = claims["record"].split()
    header, payload, signature = _segments(token)
    flipped = signature[:20] + ("A" if signature[20] != "A" else "B") + signature[21:]
    forger = Ed25519PrivateKey.generate()
    forger_kid = thumbprint(forger.public_key())
    cases = {
        "a move changed": (_with_payload(token, {"record": " ".join(["D", *moves[1:]])}), "signature does not match"),
        "time changed": (_with_payload(token, {"elapsed_ms": 1}), "signature does not match"),
        "name changed": (_with_payload(token, {"player": "Mallory"}), "signature does not match"),
        "signature altered": (".".join([header, payload, flipped]), "signature does not match"),
        "kid altered": (_with_header(token, {"kid": "not-" + kid}), f"unknown key id 'not-{kid}'"),
        "an unknown key": (_forged(token, forger, forger_kid, {"elapsed_ms": 1}), f"unknown key id '{forger_kid}'"),
        "an unknown key under the service's kid": (
            _forged(token, forger, kid, {"elapsed_ms": 1}),
            "signature does not match",
        ),
    }
    assert verify(token, jwks).claims == claims
    for case, (tampered, reason) in cases.items():
        with pytest.raises(CertificateError) as refused:
            verify(tampered, jwks)
        assert reason in str(refused.value), case
        key = next((k for k in jwks["keys"] if k["kid"] == jwt.get_unverified_header(tampered)["kid"]), None)
        if key is not None:
            with pytest.raises(jwt.InvalidSignatureError):
                jwt.decode(tampered, jwt.PyJWK(key), algorithms=["EdDSA"])
    for case in ("a move changed", "kid altered"):
        checked = _pyramide_verify(cases[case][0], str(jwks_file), tmp_path)
        assert checked.returncode == 1 and cases[case][1] in checked.stderr, (case, checked.stderr)


def test_a_validly_signed_record_that_does_not_win_is_still_rejected(tmp_path: Path) -> None:
    """The replay is a check of its own: a certificate signed by a published key whose record is not a win (a key
    misused, a bug) fails with the operation that breaks, or the end that is not a win."""
    private = Ed25519PrivateKey.generate()
    key = SigningKey(thumbprint(private.public_key()), private.public_key(), private)
    jwks = {"keys": [key.jwk()]}
    record = EASY_CLEARING
    good = {
        "v": 1, "game": "0", "code": EASY_CODE, "rules": DealCode.parse(EASY_CODE).rules.to_json(),
        "record": record, "moves": len(parse_record(record)), "elapsed_ms": 1000, "signed_at": "2026-12-05T10:00:02Z",
        "started_at": "2026-12-05T10:00:00Z", "finished_at": "2026-12-05T10:00:01Z",
    }  # fmt: skip

    def sign(claims: dict[str, Any]) -> str:
        return jwt.encode(
            claims, private, algorithm="EdDSA", headers={"kid": key.kid, "typ": "pyramide-certificate+jwt"}
        )

    assert verify(sign(good), jwks).claims["record"] == record
    short = {**good, "record": " ".join(record.split()[:-1]), "moves": len(parse_record(record)) - 1}
    with pytest.raises(CertificateError, match="the record does not win"):
        verify(sign(short), jwks)
    with pytest.raises(CertificateError, match=r"operation [0-9]+ \(.*\) is not legal there"):
        verify(sign({**good, "record": " ".join(record.split()[1:] + record.split()[:1])}), jwks)
    with pytest.raises(CertificateError, match="not the 99 stated"):
        verify(sign({**good, "moves": 99}), jwks)
    with pytest.raises(CertificateError, match="not finish minus start"):
        verify(sign({**good, "elapsed_ms": 5}), jwks)


def test_a_game_not_won_is_refused_in_the_caller_s_language_and_another_s_game_does_not_exist(
    client: TestClient[Any],
) -> None:
    owner, other = new_player(client), new_player(client)
    game = client.post("/v1/games", json={"code": EASY_CODE}, headers=owner).json()["id"]
    hungarian = client.get(f"/v1/games/{game}/certificate", headers=owner)
    english = client.get(f"/v1/games/{game}/certificate", headers={**owner, "Accept-Language": "en"})
    assert hungarian.status_code == english.status_code == 409
    assert hungarian.headers["content-type"].startswith("application/problem+json")
    assert hungarian.json()["code"] == english.json()["code"] == "game_not_won"
    assert "tanúsítvány" in hungarian.json()["title"] and "certificate" in english.json()["title"]
    assert client.get(f"/v1/games/{game}/certificate", headers=other).json()["code"] == "game_not_found"
    assert client.get("/v1/games/not-a-uuid/certificate", headers=owner).json()["code"] == "game_not_found"


def test_a_challenge_game_s_certificate_waits_for_the_close_then_names_the_challenge_and_tier(
    client: TestClient[Any], redis_client: redis.Redis, clock: FakeClock
) -> None:
    """Before the close a certificate would carry the code (and the record the face-down cards): 409
    ``certificate_sealed``. After it, the certificate names the challenge and the win's tier, and verifies."""
    headers = new_player(client, name="Kati")
    challenge = client.get("/v1/challenges/current").json()["id"]
    code = _deal(redis_client, challenge)
    game = client.post("/v1/games", json={"challenge": challenge}, headers=headers).json()
    _win(client, headers, game, code)
    sealed = client.get(f"/v1/games/{game['id']}/certificate", headers=headers)
    assert sealed.status_code == 409 and sealed.json()["code"] == "certificate_sealed"
    assert str(code) not in sealed.text

    past_the_close(clock)
    answer = client.get(f"/v1/games/{game['id']}/certificate", headers=headers).json()
    claims = verify(answer["certificate"], client.get("/.well-known/jwks.json").json()).claims
    assert (claims["challenge"], claims["tier"], claims["code"], claims["player"]) == (
        challenge,
        "clean",
        str(code),
        "Kati",
    )


def _stop(served: Served) -> None:
    """SIGKILL the server and every process it started, as a crash does."""
    for process in served.family():
        process.send_signal(signal.SIGKILL)
    served.process.wait(timeout=10)


def test_a_rotation_keeps_old_certificates_verifiable_while_new_ones_use_the_new_kid(
    settings: Settings, tmp_path: Path
) -> None:
    """The operator puts a new key first and keeps the old one's public half: the service started on that signs with
    the new kid, publishes both, and the certificate signed before the rotation still verifies; a verifier given only
    the new key refuses the old certificate as signed by an unknown key. (Two app starts over one Redis, each served
    over real HTTP: the change of settings is a restart's.)"""
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    old_jwk, new_jwk = private_jwk(old, "2026-01"), private_jwk(new, "2026-07")
    old_public = {k: v for k, v in old_jwk.items() if k != "d"}
    before_rotation = settings.but(secrets={"signing_keys": json.dumps([old_jwk])})
    with serve_in_thread(create_app(before_rotation)) as url:
        headers = _player(url, "Zoli")
        before = _certificate(url, headers, _won_game(url, headers))
    assert before["kid"] == "2026-01"
    after_rotation = settings.but(secrets={"signing_keys": json.dumps([new_jwk, old_public])})
    with serve_in_thread(create_app(after_rotation)) as url:
        after = _certificate(url, headers, _won_game(url, headers))
        jwks_url = f"{url}/.well-known/jwks.json"
        assert [k["kid"] for k in httpx.get(jwks_url).json()["keys"]] == ["2026-07", "2026-01"]
        for answer in (before, after):
            checked = _pyramide_verify(answer["certificate"], jwks_url, tmp_path)
            assert checked.returncode == 0 and f"signed by key {answer['kid']}" in checked.stdout, checked.stderr
    assert after["kid"] == "2026-07"
    only_new = {"keys": [{k: v for k, v in new_jwk.items() if k != "d"}]}
    with pytest.raises(CertificateError, match="unknown key id '2026-01'"):
        verify(before["certificate"], only_new)


def test_without_configured_keys_a_crash_and_restart_keep_the_generated_key(tmp_path: Path) -> None:
    """With no ``PYRAMIDE_SIGNING_KEYS`` the first process generates a key and keeps it in Redis: after the server
    is SIGKILLed and started again on its data, it signs with the same kid and the earlier certificate verifies."""
    with serving(tmp_path / "data", tmp_path, env={"PYRAMIDE_REDIS_APPENDFSYNC": "always"}) as served:
        headers = _player(served.url)
        before = _certificate(served.url, headers, _won_game(served.url, headers))
        _stop(served)
    with serving(tmp_path / "data", tmp_path) as served:
        after = _certificate(served.url, headers, _won_game(served.url, headers))
        jwks = httpx.get(f"{served.url}/.well-known/jwks.json").json()
    assert after["kid"] == before["kid"]
    assert verify(before["certificate"], jwks).claims["player"] is None


def test_a_hinted_win_s_certificate_says_so(live_url: str) -> None:
    """A certificate of a hinted win did not say a hint was used (issue 59): it states its hints and undos."""
    headers = _player(live_url, "Hanna")
    game = httpx.post(f"{live_url}/v1/games", json={"code": EASY_CODE}, headers=headers).json()["id"]
    assert httpx.get(f"{live_url}/v1/games/{game}/hint", headers=headers).status_code == 200
    for move in WINNING:
        assert httpx.post(f"{live_url}/v1/games/{game}/moves", json=move, headers=headers).status_code == 200
    claims = _recipe(_certificate(live_url, headers, game)["certificate"], f"{live_url}/.well-known/jwks.json")
    assert (claims["hints"], claims["undos"]) == (1, 0)
    plain = _recipe(_certificate(live_url, headers, _won_game(live_url, headers))["certificate"],
                    f"{live_url}/.well-known/jwks.json")  # fmt: skip
    assert (plain["hints"], plain["undos"]) == (0, 0)
