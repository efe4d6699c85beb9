"""The bucket an app's request counts in when it names its end user's address (issue 57, item 5): the app's own
bucket of that address, neither the bucket of the clients connecting from it nor another app's."""

from __future__ import annotations

import ipaddress
from typing import Any
from uuid import uuid4

import pytest
from litestar import Request
from redis.crc import key_slot

from pyramide.service.accounts.apps import App
from pyramide.service.accounts.authentication import app_client_address
from pyramide.service.http.headers import client_address
from pyramide.service.http.problems import ProblemError
from pyramide.service.infra import keyspace

WIDEST_64 = 4 * 4 + 3 + len("::/64")


def _app() -> App:
    return App(uuid4(), "App", frozenset({"players"}), 0)


def _request(*headers: tuple[bytes, bytes], peer: str = "127.0.0.1") -> Request[Any, Any, Any]:
    scope = {"type": "http", "method": "GET", "path": "/v1/players/me", "raw_path": b"/v1/players/me",
             "query_string": b"", "headers": list(headers), "client": (peer, 40000), "server": ("x", 80),
             "scheme": "http", "root_path": "", "state": {}}  # fmt: skip
    return Request(scope)  # type: ignore[arg-type]


def _counted(app: App, named: str | None, peer: str = "127.0.0.1") -> str:
    """The address the app's request naming ``named`` (or none) counts under, as the limits read it."""
    request = _request(*([(b"pyramide-client-ip", named.encode())] if named else []), peer=peer)
    app_client_address(request, app)
    return client_address(request, None)


def test_an_apps_named_address_counts_in_its_own_bucket_of_that_address() -> None:
    ours, theirs = _app(), _app()
    bucket = _counted(ours, "127.0.0.77")
    assert bucket == f"app:{ours.id.hex}@127.0.0.77" == _counted(ours, " 127.0.0.77 ", peer="127.0.0.9")
    assert bucket != keyspace.client_bucket("127.0.0.77"), "the direct clients' bucket"
    assert bucket != _counted(theirs, "127.0.0.77"), "another app's bucket of the address"
    assert bucket != _counted(ours, "127.0.0.78") and bucket != ours.bucket
    assert _counted(ours, None) == ours.bucket, "no address named: the app's own bucket, with its own limits"
    assert _counted(ours, "::ffff:127.0.0.77") == bucket, "an IPv4-mapped address is its IPv4"
    assert _counted(ours, "::1") == f"app:{ours.id.hex}@::/64", "an IPv6 address counts by its /64"
    with pytest.raises(ProblemError):
        _counted(ours, "not-an-address")


def test_an_apps_bucket_of_an_address_keeps_its_keys_in_one_slot_and_whole() -> None:
    """The longest bucket (an IPv6 /64, written at most ``WIDEST_64`` characters long: four full groups, then
    ``::/64``) is kept whole by ``client_bucket``, which cuts at 64 characters; its rate cell and quota counter hash
    to one Redis Cluster slot, so one script checks both."""
    app = _app()
    bucket = app.bucket_of("::1")
    assert bucket == keyspace.client_bucket(bucket)
    assert len(bucket) - len("::/64") + WIDEST_64 <= 64
    cell, counter = keyspace.address_limit(bucket, "players"), keyspace.address_quota(bucket, "players")
    assert key_slot(cell.encode()) == key_slot(counter.encode())
    assert key_slot(cell.encode()) == key_slot(keyspace.address_streams(bucket).encode())


def test_a_trusted_proxys_header_never_moves_an_apps_bucket() -> None:
    """Behind trusted proxies the forwarded address counts for a direct client; an app's bucket is no address, so
    a forwarded header beside it is never read in its place."""
    app = _app()
    request = _request((b"pyramide-client-ip", b"127.0.0.77"), (b"x-forwarded-for", b"127.0.0.5"))
    app_client_address(request, app)
    loopback = [ipaddress.ip_network("127.0.0.0/8")]
    assert client_address(request, "X-Forwarded-For", loopback) == app.bucket_of("127.0.0.77")
