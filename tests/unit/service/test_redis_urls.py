"""``REDIS_URL`` read as an operator writes it: a Sentinel URL (``redis+sentinel://``) gives the Sentinels, the
master's name and both sides' options; the TLS settings go with a TLS URL only. A wrong one is refused at start with
a message that never quotes the URL (it may hold a password)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from pyramide.service.infra.redis_urls import is_sentinel, parse_sentinel
from pyramide.service.infra.settings import RedisSettings, Settings, settings_errors


def test_a_sentinel_url_names_its_sentinels_the_master_and_the_database() -> None:
    url = parse_sentinel("redis+sentinel://:hunter2@127.0.0.1:26380,localhost,[::1]:26381/games/3")
    assert url.sentinels == (("127.0.0.1", 26380), ("localhost", 26379), ("::1", 26381))
    assert url.service_name == "games"
    assert url.master == {"password": "hunter2", "db": 3}
    assert url.sentinel == {}
    assert not url.tls


def test_the_sentinels_own_password_and_tls_options_go_to_the_sentinels_too() -> None:
    url = parse_sentinel(
        "rediss+sentinel://app:p%40ss@127.0.0.1/games?sentinel_password=s3cret&ssl_ca_certs=/ca.pem&socket_keepalive=1"
    )
    assert url.tls
    assert url.master == {
        "username": "app",
        "password": "p@ss",
        "ssl": True,
        "ssl_ca_certs": "/ca.pem",
        "socket_keepalive": True,
    }
    assert url.sentinel == {"password": "s3cret", "ssl": True, "ssl_ca_certs": "/ca.pem"}


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://127.0.0.1:26379",
        "redis+sentinel://127.0.0.1:26379/",
        "redis+sentinel://127.0.0.1:26379/games/zero",
        "redis+sentinel://127.0.0.1:26379/games/0/more",
        "redis+sentinel://127.0.0.1:port/games",
        "redis+sentinel://127.0.0.1:26379,/games",
        "redis+sentinel://:hunter2@[::1/games",
    ],
)
def test_a_wrong_sentinel_url_is_refused_without_its_password(url: str) -> None:
    assert is_sentinel(url)
    with pytest.raises(ValidationError) as refused:
        Settings(redis={"url": url})
    lines = settings_errors(refused.value)
    assert len(lines) == 1 and lines[0].startswith("REDIS_URL: "), lines
    assert "hunter2" not in lines[0]


def test_a_sentinel_url_with_redis_cluster_is_refused() -> None:
    with pytest.raises(ValidationError, match="REDIS_CLUSTER"):
        RedisSettings(url="redis+sentinel://127.0.0.1/games", cluster=True)


def test_tls_settings_go_to_every_client_of_a_tls_url(tmp_path: Path) -> None:
    ca, cert, key = (tmp_path / name for name in ("ca.pem", "client.pem", "client.key"))
    for path in (ca, cert, key):
        path.write_text("-----BEGIN CERTIFICATE-----\n")
    settings = RedisSettings(
        url="rediss://127.0.0.1:6380/0", ssl_ca_certs=ca, ssl_certfile=cert, ssl_keyfile=key, ssl_cert_reqs="optional"
    )
    assert settings.tls_options() == {
        "ssl_ca_certs": str(ca),
        "ssl_certfile": str(cert),
        "ssl_keyfile": str(key),
        "ssl_cert_reqs": "optional",
    }
    assert RedisSettings(url="rediss://127.0.0.1:6380/0").tls_options() == {}


@pytest.mark.parametrize(
    ("url", "settings", "variable"),
    [
        ("redis://127.0.0.1:6379/0", {"ssl_cert_reqs": "none"}, "PYRAMIDE_REDIS_SSL_CERT_REQS"),
        ("redis+sentinel://127.0.0.1/games", {"ssl_ca_certs": "ca.pem"}, "PYRAMIDE_REDIS_SSL_CA_CERTS"),
        ("rediss://127.0.0.1:6380/0?ssl_ca_certs=/x.pem", {"ssl_ca_certs": "ca.pem"}, "PYRAMIDE_REDIS_SSL_CA_CERTS"),
        ("rediss://127.0.0.1:6380/0", {"ssl_keyfile": "ca.pem"}, "PYRAMIDE_REDIS_SSL_KEYFILE"),
        ("rediss://127.0.0.1:6380/0", {"ssl_ca_certs": "missing.pem"}, "PYRAMIDE_REDIS_SSL_CA_CERTS"),
    ],
)
def test_tls_settings_that_would_be_ignored_or_fail_later_are_refused(
    tmp_path: Path, url: str, settings: dict[str, str], variable: str
) -> None:
    (tmp_path / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    given = {name: tmp_path / value if name != "ssl_cert_reqs" else value for name, value in settings.items()}
    with pytest.raises(ValidationError) as refused:
        Settings(redis={"url": url, **given})
    lines = settings_errors(refused.value)
    assert len(lines) == 1 and lines[0].startswith(f"{variable}: "), lines
