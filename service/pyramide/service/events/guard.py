"""The address guard of webhook endpoints: only ``https://`` URLs whose every address is public are registered and
called (``http://`` and loopback too with ``PYRAMIDE_WEBHOOK_ALLOW_LOOPBACK``, for tests).

The host is resolved at registration and again at every delivery, and a delivery connects to the address that was
checked (the URL's host replaced by it; ``Host`` and TLS SNI keep the name), so a DNS answer that changes between the
check and the connection (rebinding) cannot send a delivery to a private, loopback, link-local or metadata address.
"""

from __future__ import annotations

import enum
import ipaddress
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import SplitResult, urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Lookup = Callable[[str, int], Awaitable[list[tuple[Any, ...]]]]
"""Resolves a host for a TCP connection to a port, as ``getaddrinfo`` answers."""

SHARED: Final = ipaddress.ip_network("100.64.0.0/10")
"""Carrier-grade NAT (RFC 6598): not public, though ``ipaddress`` does not call it private."""
NAT64: Final = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL: Final = ipaddress.ip_network("64:ff9b:1::/48")


class Refusal(enum.StrEnum):
    """Why a URL is refused (the problem's ``reason``, localised from ``words.reason_<value>``)."""

    MALFORMED = "webhook_malformed"
    NOT_HTTPS = "webhook_not_https"
    UNRESOLVABLE = "webhook_unresolvable"
    REFUSED_ADDRESS = "webhook_refused_address"


class UrlRefusedError(Exception):
    """A URL the guard refuses: ``reason`` says why."""

    def __init__(self, reason: Refusal) -> None:
        super().__init__(reason.value)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Target:
    """Where a delivery connects: the checked ``address`` of the URL's host, with the URL to send to it."""

    url: str
    """The URL with its host replaced by the checked address."""
    host: str
    """The URL's host name, for ``Host`` and the TLS SNI."""
    host_header: str
    address: str


def embedded_v4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (IPv4-mapped, 6to4, NAT64, Teredo's client), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in NAT64 or address in NAT64_LOCAL:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.teredo is not None:
        return address.teredo[1]
    return None


def is_loopback(address: IPAddress) -> bool:
    """A loopback address, or an IPv6 form of one."""
    inner = embedded_v4(address) if isinstance(address, ipaddress.IPv6Address) else None
    return address.is_loopback or (inner is not None and inner.is_loopback)


def is_public(address: IPAddress) -> bool:
    """Whether a delivery may go to ``address``: not private, loopback, link-local (the cloud metadata address is
    one), multicast, reserved, unspecified or shared, nor an IPv6 form of one."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = embedded_v4(address)
        if address.scope_id or address.is_site_local or (inner is not None and not is_public(inner)):
            return False
    elif address in SHARED:
        return False
    return not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
    )


def allowed(address: IPAddress, allow_loopback: bool) -> bool:
    """Whether a delivery may go to ``address`` under the setting."""
    return is_public(address) or (allow_loopback and is_loopback(address))


def checked_url(url: str, allow_loopback: bool) -> SplitResult:
    """``url`` parsed, if its form may be registered: ``https://`` (also ``http://`` with loopback allowed), a host,
    no user name or password; printable ASCII only (an international name in its ``xn--`` form), so that the URL
    is sent as registered."""
    if not url.isascii() or any(c <= " " or c == "\x7f" for c in url):
        raise UrlRefusedError(Refusal.MALFORMED)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        raise UrlRefusedError(Refusal.MALFORMED) from None
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.username or parts.password:
        raise UrlRefusedError(Refusal.MALFORMED if parts.scheme in ("https", "http") else Refusal.NOT_HTTPS)
    if parts.scheme == "http" and not allow_loopback:
        raise UrlRefusedError(Refusal.NOT_HTTPS)
    return parts


async def resolve(url: str, allow_loopback: bool, lookup: Lookup) -> Target:
    """Where a delivery to ``url`` connects, after resolving its host with ``lookup``: refused if ANY address it
    resolves to is not allowed (a name with one public and one private address is refused: which one a client picks
    is not ours)."""
    parts = checked_url(url, allow_loopback)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses: list[IPAddress] = [literal]
    else:
        try:
            found = await lookup(host, port)
        except (OSError, UnicodeError):
            raise UrlRefusedError(Refusal.UNRESOLVABLE) from None
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]
    if not addresses or not all(allowed(a, allow_loopback) for a in addresses):
        raise UrlRefusedError(Refusal.REFUSED_ADDRESS)
    address = addresses[0]
    shown = f"[{address}]" if address.version == 6 else str(address)
    netloc = f"{shown}:{port}"
    pinned = parts._replace(netloc=netloc).geturl()
    host_header = host if parts.port is None else f"{parts.hostname}:{parts.port}"
    if ":" in host and not host_header.startswith("["):
        host_header = f"[{host}]" if parts.port is None else f"[{host}]:{parts.port}"
    return Target(pinned, host, host_header, str(address))
