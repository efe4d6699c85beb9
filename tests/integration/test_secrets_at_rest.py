"""Secrets at rest (issue 56, item 8), as an operator meets them: the embedded Redis's data directory is 0700 and its
files, a backup and a restored directory 0600, whatever the umask, and looser modes left by an older version are
tightened at start and logged; a signing key and a deal secret given in files sign and deal without ever reaching
Redis or the data directory; and without them, the start says that they are kept in Redis."""

from __future__ import annotations

import base64
import os
import secrets
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import jwt
import pytest
import redis
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from pyramide.service.infra import keyspace
from pyramide.service.infra.signing import thumbprint
from tests.support.deals import EASY_CODE, WINNING
from tests.support.serving import Served, _pyramide, serving
from tests.support.waiting import eventually

KEPT_IN_REDIS = ("PYRAMIDE_SIGNING_KEYS_FILE is set", "PYRAMIDE_DEAL_SECRET_FILE is set")
"""The ends of the start's two warnings that a secret is generated and kept in Redis."""


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The umask most systems give (022), under which Redis and a plain ``open`` make files everyone may read: the
    modes must not depend on the umask the service is started with."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _loose(directory: Path) -> dict[str, str]:
    """The files of ``directory`` that its owner's group or anyone else may read or write, with their modes."""
    return {p.name: f"{_mode(p):04o}" for p in directory.iterdir() if p.is_file() and _mode(p) & 0o077}


def _won_certificate(url: str) -> dict[str, str]:
    """A new player's game of the easy deal won over HTTP, and its certificate (the answer's JSON)."""
    with httpx.Client(base_url=url, timeout=30) as http:
        created = http.post("/v1/players", json={})
        assert created.status_code == 201, created.text
        headers = {"Authorization": f"Bearer {created.json()['token']}"}
        game = http.post("/v1/games", json={"code": EASY_CODE}, headers=headers).json()["id"]
        for move in WINNING:
            assert http.post(f"/v1/games/{game}/moves", json=move, headers=headers).status_code == 200
        answer = http.get(f"/v1/games/{game}/certificate", headers=headers)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())


def _kept_in_redis_warnings(served: Served) -> list[str]:
    return [
        line["message"]
        for line in served.lines()
        if line["level"] == "WARNING" and line["message"].split(":")[0].endswith(KEPT_IN_REDIS)
    ]


def _rewritten(client: redis.Redis) -> bool:
    """Whether the append-only file rewrite asked for is over (and went well)."""
    persistence = client.info("persistence")
    if persistence["aof_rewrite_in_progress"] or persistence["aof_rewrite_scheduled"]:
        return False
    assert persistence["aof_last_bgrewrite_status"] == "ok", persistence
    return True


@pytest.mark.usefixtures("usual_umask")
def test_the_data_directory_its_files_a_backup_and_a_restore_are_the_owner_s_alone(tmp_path: Path) -> None:
    """With no secrets given, the start warns that the signing key and deal secret are kept in Redis, and the key's
    PEM is indeed in the append-only file: so the directory is 0700 and every file in it 0600 (the append-only file,
    its rewrite, the RDB the backup leaves, Redis's log and pid file, the lock and state files), as are the backup
    and the directory and file a restore makes."""
    data, backup = tmp_path / "data", tmp_path / "backups" / "pyramide.rdb"
    with serving(data, tmp_path) as served:
        assert len(_kept_in_redis_warnings(served)) == 2, served.log.read_text()[-2000:]
        _won_certificate(served.url)
        served.aof_written()
        assert b"-----BEGIN PRIVATE KEY-----" in (data / "appendonly.aof").read_bytes()
        client = redis.Redis(unix_socket_path=str(data / "redis.sock"))
        client.bgrewriteaof()
        eventually(lambda: _rewritten(client), 30, "the append-only file rewritten")
        made = _pyramide("backup", str(backup), "--data-dir", str(data))
        assert made.returncode == 0, made.stderr
        assert (_mode(data), _mode(data / "appendonly.aof"), _mode(backup)) == (0o700, 0o600, 0o600)
        assert _loose(data) == {}
        assert not any("tightened" in line["message"] for line in served.lines()), "nothing was loose to tighten"
    assert [p.name for p in backup.parent.iterdir()] == [backup.name], "no partial file left beside the backup"
    restored = tmp_path / "restored"
    done = _pyramide("restore", str(backup), "--data-dir", str(restored))
    assert done.returncode == 0, done.stderr
    assert (_mode(restored), _mode(restored / "appendonly.aof")) == (0o700, 0o600)
    assert _loose(restored) == {}


@pytest.mark.usefixtures("usual_umask")
def test_looser_modes_an_older_version_left_are_tightened_at_start_and_logged(tmp_path: Path) -> None:
    """A data directory as the older version left it (0755, its append-only file and log 0644) is served on as it
    was, its modes tightened at start, one warning naming each change."""
    data = tmp_path / "data"
    with serving(data, tmp_path) as served:
        _won_certificate(served.url)
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=60) == 0
    data.chmod(0o755)
    for name in ("appendonly.aof", "redis.log"):
        (data / name).chmod(0o644)
    with serving(data, tmp_path) as served:
        assert (_mode(data), _mode(data / "appendonly.aof"), _loose(data)) == (0o700, 0o600, {})
        said = [line for line in served.lines() if "tightened" in line["message"]]
        assert [line["level"] for line in said] == ["WARNING"], said
        for change in (f"{data.resolve()} 0755 -> 0700", "appendonly.aof 0644 -> 0600", "redis.log 0644 -> 0600"):
            assert change in said[0]["message"], said[0]["message"]
        assert httpx.get(f"{served.url}/health/ready").status_code == 200


def test_a_signing_key_and_deal_secret_given_in_files_never_reach_redis_or_its_files(tmp_path: Path) -> None:
    """The key (PEM, as a Kubernetes Secret's file) signs: its certificates verify with its public half alone, under
    its thumbprint, the only key published. The secret (a file ending with a newline) deals today's challenge. Neither
    is generated into Redis, no warning says they are kept there, and no file of the data directory holds the PEM,
    the private key's bytes (raw, base64 or base64url) or the secret."""
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    deal_secret = f"deal-secret-{secrets.token_hex(16)}"
    given = tmp_path / "secrets"
    given.mkdir(mode=0o700)
    (given / "signing-key.pem").write_bytes(pem)
    (given / "deal-secret").write_text(deal_secret + "\n")
    env = {
        "PYRAMIDE_SIGNING_KEYS_FILE": str(given / "signing-key.pem"),
        "PYRAMIDE_DEAL_SECRET_FILE": str(given / "deal-secret"),
        "PYRAMIDE_CHALLENGE_DAYS_AHEAD": "0",
    }
    data = tmp_path / "data"
    with serving(data, tmp_path, env=env) as served:
        answer = _won_certificate(served.url)
        claims = jwt.decode(answer["certificate"], key.public_key(), algorithms=["EdDSA"])
        assert (claims["code"], answer["kid"]) == (EASY_CODE, thumbprint(key.public_key()))
        published = httpx.get(f"{served.url}/.well-known/jwks.json").json()["keys"]
        assert [k["kid"] for k in published] == [answer["kid"]]
        today = httpx.get(f"{served.url}/v1/challenges/current", params={"rules": "N"}, timeout=60)
        assert today.status_code == 200, today.text
        client = redis.Redis(unix_socket_path=str(data / "redis.sock"))
        assert client.exists(keyspace.SIGNING_KEY, keyspace.DEAL_SECRET) == 0, "generated into Redis after all"
        assert _kept_in_redis_warnings(served) == []
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=60) == 0
    body = b"".join(pem.splitlines()[1:-1])
    forms = {
        "the PEM": body,
        "the raw key": raw,
        "base64": base64.b64encode(raw).rstrip(b"="),
        "base64url (a JWK's d)": base64.urlsafe_b64encode(raw).rstrip(b"="),
        "the deal secret": deal_secret.encode(),
    }
    files = [p for p in data.iterdir() if p.is_file()]
    assert any(p.name == "appendonly.aof" and p.stat().st_size > 0 for p in files)
    found = {(p.name, what) for p in files for what, form in forms.items() if form in p.read_bytes()}
    assert found == set()
