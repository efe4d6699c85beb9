"""The operator's secrets given in files (``PYRAMIDE_*_FILE``), read as the settings read them, on real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import ValidationError

from pyramide.service.infra.settings import Secrets, Settings, settings_errors
from pyramide.service.infra.signing import new_key_pem, parse_keys, private_jwk

SECRET = "a deal secret of some length"


def _errors(**secrets: object) -> list[str]:
    with pytest.raises(ValidationError) as raised:
        Settings(redis={"url": "redis://unused"}, secrets=secrets)
    return settings_errors(raised.value)


def test_a_file_s_text_without_the_whitespace_around_it_is_the_secret(tmp_path: Path) -> None:
    pem = new_key_pem()
    (tmp_path / "key.pem").write_text(f"\n{pem}\n")
    (tmp_path / "secret").write_text(f"{SECRET}\n")
    (tmp_path / "operator").write_text("o" * 40 + "\r\n")
    given = Secrets(
        signing_keys_file=tmp_path / "key.pem",
        deal_secret_file=tmp_path / "secret",
        operator_key_file=tmp_path / "operator",
    )
    assert (given.signing_keys, given.deal_secret, given.operator_key) == (pem.strip(), SECRET, "o" * 40)
    assert parse_keys(given.signing_keys or "")[0].private is not None
    assert given.kept_in_redis() == []
    assert given.but() == given, "a copy reads the same file again, and agrees with the text it holds"
    assert SECRET not in repr(given) and "PRIVATE" not in repr(given)


def test_without_a_key_or_secret_the_start_is_told_they_are_kept_in_redis() -> None:
    kept = Secrets().kept_in_redis()
    assert len(kept) == 2
    assert "PYRAMIDE_SIGNING_KEYS_FILE" in kept[0] and "PYRAMIDE_DEAL_SECRET_FILE" in kept[1]
    assert Secrets(deal_secret=SECRET).kept_in_redis() == kept[:1]


def test_a_bad_file_is_one_line_naming_its_variable_never_its_text(tmp_path: Path) -> None:
    public_only = private_jwk(Ed25519PrivateKey.generate(), "k")
    public_only.pop("d")
    (tmp_path / "public.json").write_text(f'[{{"kty": "OKP", "crv": "Ed25519", "x": "{public_only["x"]}"}}]')
    (tmp_path / "short").write_text("hunter2")
    (tmp_path / "key.pem").write_text(new_key_pem())
    assert _errors(signing_keys_file=tmp_path / "missing") == [
        f"PYRAMIDE_SIGNING_KEYS_FILE: cannot read {tmp_path / 'missing'} (No such file or directory)"
    ]
    assert _errors(signing_keys_file=tmp_path / "public.json") == [
        f"PYRAMIDE_SIGNING_KEYS_FILE: the first key signs, so it must be a private key (in {tmp_path / 'public.json'})"
    ]
    assert _errors(signing_keys_file=tmp_path / "key.pem", signing_keys=new_key_pem()) == [
        "PYRAMIDE_SIGNING_KEYS_FILE: set it or PYRAMIDE_SIGNING_KEYS, not both"
    ]
    for variable in ("deal_secret_file", "operator_key_file"):
        [line] = _errors(**{variable: tmp_path / "short"})
        assert line.startswith(f"PYRAMIDE_{variable.upper()}: String should have at least"), line
        assert "hunter2" not in line
