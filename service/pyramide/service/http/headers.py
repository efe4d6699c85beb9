"""The request headers handlers read: the player's language, the retry and version headers, the client address.

The move route's hand-written path for headers: each is read from the ASGI scope as it came, where Litestar's
``Headers`` (or a header parameter) would first build the whole header map, which cost more than the rest of
reading a move's headers (``benchmarks/service_instructions.py``)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import Any, Final

from litestar.connection import ASGIConnection

from pyramide.engine.messages import Locale
from pyramide.service.http.locale import negotiate_locale
from pyramide.service.http.problems import HttpCode, ProblemError, localised
from pyramide.service.http.schemas import CREATE_PLAYER_KEY_PATTERN, IDEMPOTENCY_KEY_PATTERN

AnyConnection = ASGIConnection[Any, Any, Any, Any]
_IDEMPOTENCY_KEY = re.compile(IDEMPOTENCY_KEY_PATTERN)
_SECRET_KEY = re.compile(CREATE_PLAYER_KEY_PATTERN)


def _bad_header(name: str, code: HttpCode) -> ProblemError:
    """400 ``code``, with the header named in ``errors``."""
    return ProblemError(
        400,
        code,
        errors=lambda locale: [{"header": name, "code": "invalid_format", "message": localised(code, locale, {})}],
    )


def header_value(connection: AnyConnection, name: bytes) -> str | None:
    """The first value of the header ``name`` (lower case)."""
    for key, value in connection.scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def locale_of(connection: AnyConnection, preferred: Locale = "hu") -> Locale:
    """``Accept-Language`` first, then ``preferred`` (the player's setting), then Hungarian."""
    return negotiate_locale(header_value(connection, b"accept-language"), preferred)


def idempotency_key(connection: AnyConnection) -> str | None:
    """The ``Idempotency-Key`` header; 400 ``invalid_idempotency_key`` when it is not 1-200 visible ASCII
    characters. Read here, not declared as a handler parameter, as every header of the move route (see this
    module's docstring). The schema documents it on every POST (see ``openapi``)."""
    key = header_value(connection, b"idempotency-key")
    if key is not None and not _IDEMPOTENCY_KEY.fullmatch(key):
        raise _bad_header("Idempotency-Key", HttpCode.INVALID_IDEMPOTENCY_KEY)
    return key


REPLAYED: Final[dict[str, str]] = {"Idempotent-Replayed": "true"}
"""What marks an answer sent again from an Idempotency-Key's kept response, so that a client can tell a retry's
answer from a fresh one (the change was made once, by an earlier request)."""


def replay_header(replayed: bool) -> dict[str, str]:
    """:data:`REPLAYED` for a replayed answer, nothing for a fresh one."""
    return REPLAYED if replayed else {}


def secret_idempotency_key(connection: AnyConnection) -> str | None:
    """The ``Idempotency-Key`` of a request whose kept response holds a secret (``createPlayer``): 400
    ``weak_idempotency_key`` when it is shorter than 32 characters."""
    key = idempotency_key(connection)
    if key is not None and not _SECRET_KEY.fullmatch(key):
        raise _bad_header("Idempotency-Key", HttpCode.WEAK_IDEMPOTENCY_KEY)
    return key


def if_match(connection: AnyConnection) -> tuple[int, ...] | None:
    """The game versions the request's ``If-Match`` accepts (:func:`parse_if_match`)."""
    return parse_if_match(header_value(connection, b"if-match"))


_ENTITY_TAG = re.compile(r'\s*(W/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)')
_VERSION = re.compile(r"[0-9]{1,19}")


def parse_if_match(header: str | None) -> tuple[int, ...] | None:
    """The versions ``If-Match`` accepts: ``None`` for no header or ``*`` (any current game). Entity tags are
    compared strongly (RFC 9110 13.1.1): a weak tag (``W/"7"``) or one that names no version of ours matches
    nothing, so the request gets 412. A bare number (``7``) is taken as ``"7"``. A header that is not a list of
    entity tags is 400 ``invalid_if_match``."""
    if header is None or header.strip() == "*":
        return None
    text = header.strip()
    if _VERSION.fullmatch(text):
        return (int(text),)
    if not text:
        raise _bad_header("If-Match", HttpCode.INVALID_IF_MATCH)
    versions: list[int] = []
    position = 0
    while position < len(text):
        match = _ENTITY_TAG.match(text, position)
        if match is None or match.end() == position:
            raise _bad_header("If-Match", HttpCode.INVALID_IF_MATCH)
        weak, tag = match.groups()
        if not weak and _VERSION.fullmatch(tag):
            versions.append(int(tag))
        position = match.end()
    return tuple(versions)


ANY_TAG: Final = "*"
"""What :func:`parse_if_none_match` answers for ``If-None-Match: *``: any current representation matches."""


def if_none_match(connection: AnyConnection) -> frozenset[str] | str | None:
    """The entity tags the request's ``If-None-Match`` names (:func:`parse_if_none_match`)."""
    return parse_if_none_match(header_value(connection, b"if-none-match"))


def parse_if_none_match(header: str | None) -> frozenset[str] | str | None:
    """What ``If-None-Match`` names: ``None`` for no header, :data:`ANY_TAG` for ``*``, else the opaque tags (with
    their quotes) of its list. Compared weakly (RFC 9110 13.1.2): ``W/"x"`` names the same as ``"x"``. A header
    that is not ``*`` or a list of entity tags is 400 ``invalid_if_none_match``, as If-Match's is."""
    if header is None:
        return None
    text = header.strip()
    if text == "*":
        return ANY_TAG
    if not text:
        raise _bad_header("If-None-Match", HttpCode.INVALID_IF_NONE_MATCH)
    tags: set[str] = set()
    position = 0
    while position < len(text):
        match = _ENTITY_TAG.match(text, position)
        if match is None or match.end() == position:
            raise _bad_header("If-None-Match", HttpCode.INVALID_IF_NONE_MATCH)
        tags.add(f'"{match.group(2)}"')
        position = match.end()
    return frozenset(tags)


def none_match(tags: frozenset[str] | str | None, etag: str) -> bool:
    """Whether a GET goes on (``True``) or is answered 304 (``False``): the resource's current ``etag`` (strong,
    quoted) is not among ``tags``; with ``*``, any current representation matches."""
    if tags is None:
        return True
    return tags != ANY_TAG and etag not in tags


Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def client_address(
    connection: AnyConnection, trusted_header: str | None, trusted_proxies: Sequence[Network] = ()
) -> str:
    """The client's address for per-address limits: the TCP peer's, unless the peer is one of ``trusted_proxies``
    and ``trusted_header`` is configured; then the rightmost address of that header outside the trusted networks
    (:func:`forwarded_client`). uvicorn's own reading of ``X-Forwarded-For`` is off (``server.server_config``)."""
    client = connection.scope.get("client")
    peer = client[0] if client else "unknown"
    if trusted_header is None or not trusted_proxies:
        return peer
    address = parse_address(peer)
    if address is None or not _trusted(address, trusted_proxies):
        return peer
    name = trusted_header.lower().encode("latin-1")
    lines = [value.decode("latin-1") for key, value in connection.scope["headers"] if key == name]
    return forwarded_client(",".join(lines).split(","), str(address), trusted_proxies)


def forwarded_client(entries: list[str], peer: str, trusted_proxies: Sequence[Network]) -> str:
    """The client among ``entries`` (every line of the header as one list, in order) of a request from the trusted
    ``peer``: walking from the right, past the trusted proxies, the first address outside them. Each entry was
    appended by the hop to its right, so only entries right of an untrusted one could be the client's invention.
    An entry that is not an address (``unknown``, garbage) stops the walk: the address to its right, the last one
    a trusted hop vouched for, is taken, so a client never picks its own bucket. Empty entries are skipped."""
    client = peer
    for entry in reversed(entries):
        if not entry.strip():
            continue
        address = parse_address(entry)
        if address is None:
            break
        client = str(address)
        if not _trusted(address, trusted_proxies):
            break
    return client


def parse_address(text: str) -> Address | None:
    """An address as ``X-Forwarded-For`` entries write it: bare, ``1.2.3.4:port``, ``[v6]`` or ``[v6]:port``;
    IPv4-mapped IPv6 as its IPv4. ``None`` when it is none of these."""
    host = text.strip()
    if host.startswith("["):
        host = host[1 : host.find("]")] if "]" in host else ""
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _trusted(address: Address, networks: Sequence[Network]) -> bool:
    return any(address.version == network.version and address in network for network in networks)
