"""The webhook address classifier (issue 47), on ``ipaddress`` values only: no test names such an address as a URL."""

from __future__ import annotations

import ipaddress

import pytest

from pyramide.service.events.guard import allowed

REFUSED = [
    "10.1.2.3", "172.16.0.1", "192.168.1.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1",
    "240.0.0.1", "::1", "::", "fe80::1", "fc00::1", "ff02::1", "fec0::1", "::ffff:10.0.0.1",
    "::ffff:169.254.169.254", "2002:a9fe:a9fe::", "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "64:ff9b:1::a00:1",
]  # fmt: skip


@pytest.mark.parametrize("text", REFUSED)
def test_every_non_public_form_is_refused(text: str) -> None:
    """Private, loopback, link-local (metadata), shared, reserved, multicast, unspecified, site-local, and the IPv6
    forms that carry one (IPv4-mapped, 6to4, NAT64)."""
    assert not allowed(ipaddress.ip_address(text), allow_loopback=False)


def test_loopback_only_when_allowed() -> None:
    for text in ["127.0.0.1", "::1", "::ffff:127.0.0.1"]:
        assert allowed(ipaddress.ip_address(text), allow_loopback=True), text
    for text in ["10.0.0.1", "169.254.169.254", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe"]:
        assert not allowed(ipaddress.ip_address(text), allow_loopback=True), text


def test_a_public_address_is_allowed() -> None:
    assert allowed(ipaddress.ip_address("2606:4700::1111"), allow_loopback=False)
