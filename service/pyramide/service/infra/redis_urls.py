"""What ``REDIS_URL`` names, read once: one Redis (redis-py's own ``redis://``, ``rediss://``, ``unix://``), or a
master found through Redis Sentinel.

redis-py has no URL for Sentinel. The form here is the one other clients read (the ``Redis-Sentinel-Url`` package,
Prefect's and docket's ``redis+sentinel://``)::

    redis+sentinel://[[user]:password@]host[:port][,host[:port]…]/service_name[/db][?option=value&…]
    rediss+sentinel://…   (TLS to the Sentinels and to the master)

Each ``host[:port]`` is a Sentinel (port 26379 unless given); ``service_name`` is the master's name in their
configuration (``sentinel monitor <service_name> …``). The user and password are the master's; the options
``sentinel_username`` and ``sentinel_password`` are the Sentinels' own; every other option is one of redis-py's URL
options (``ssl_ca_certs=…``, ``db=…``), applied to the master's connections as redis-py applies them to a
``redis://`` URL. The Sentinels' connections take the same TLS options and the service's timeouts.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

SENTINEL_SCHEMES: Final = ("redis+sentinel", "rediss+sentinel")
SENTINEL_PORT: Final = 26379
SENTINEL_OPTIONS: Final = ("sentinel_username", "sentinel_password")
"""The options of a Sentinel URL that are the Sentinels' own (every other one is the master's)."""
FORM: Final = "redis+sentinel://[:password@]host[:port][,host[:port]…]/service_name[/db]"


@dataclass(frozen=True, slots=True)
class SentinelUrl:
    """A ``redis+sentinel://`` URL, read: the Sentinels' addresses, the master's name, and the keyword arguments of
    the master's connections and of the Sentinels' (redis-py's names)."""

    sentinels: tuple[tuple[str, int], ...]
    service_name: str
    tls: bool
    master: dict[str, Any] = field(default_factory=dict, repr=False)
    sentinel: dict[str, Any] = field(default_factory=dict, repr=False)


def is_sentinel(url: str) -> bool:
    """Whether ``url`` names a master through Sentinel (only its scheme is looked at)."""
    return url.partition("://")[0].lower() in SENTINEL_SCHEMES


def parse_sentinel(url: str) -> SentinelUrl:
    """``url`` read (see the module); a ``ValueError`` says what is wrong without quoting the URL (it may hold a
    password)."""
    scheme, separator, rest = url.partition("://")
    scheme = scheme.lower()
    if not separator or scheme not in SENTINEL_SCHEMES:
        raise ValueError(f"not a Sentinel URL: {FORM}")
    netloc, path, query = _split(rest)
    userinfo, at, hosts = netloc.rpartition("@")
    sentinels = tuple(_address(host) for host in hosts.split(","))
    parts = [unquote(part) for part in path.strip("/").split("/")] if path.strip("/") else []
    if not parts or not parts[0] or len(parts) > 2:
        raise ValueError(f"a Sentinel URL names the master's service name, then maybe a database: {FORM}")
    if len(parts) == 2 and not parts[1].isdigit():
        raise ValueError(f"a Sentinel URL's database is a number: {FORM}")
    options = parse_qsl(query, keep_blank_values=True)
    own = {name: value for name, value in options if name in SENTINEL_OPTIONS}
    tls = scheme == "rediss+sentinel"
    plain = f"{'rediss' if tls else 'redis'}://{userinfo}{at}placeholder/{parts[1] if len(parts) == 2 else ''}"
    rest_query = urlencode([(name, value) for name, value in options if name not in SENTINEL_OPTIONS])
    from redis.asyncio.connection import parse_url  # noqa: PLC0415 - the settings load without redis-py (cli.py)

    master: dict[str, Any] = dict(parse_url(f"{plain}?{rest_query}" if rest_query else plain))
    for name in ("host", "port", "connection_class"):
        master.pop(name, None)
    sentinel: dict[str, Any] = {name.removeprefix("sentinel_"): value for name, value in own.items()}
    if tls:
        master["ssl"] = True
        sentinel["ssl"] = True
        sentinel.update({name: value for name, value in master.items() if name.startswith("ssl_")})
    return SentinelUrl(sentinels, parts[0], tls, master, sentinel)


def _split(rest: str) -> tuple[str, str, str]:
    """The address part, the path and the query of what follows ``scheme://`` (a fragment is dropped)."""
    rest = rest.partition("#")[0]
    end = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    netloc, tail = rest[:end], rest[end:]
    path, _, query = tail.partition("?")
    return netloc, path, query


def _address(host: str) -> tuple[str, int]:
    """A Sentinel's ``host[:port]`` (``[::1]:26379`` for an IPv6 address)."""
    try:
        parsed = urlsplit(f"//{host}")
        port = parsed.port
    except ValueError:
        raise ValueError(f"a Sentinel's address is host[:port]: {FORM}") from None
    name = parsed.hostname
    if not name or parsed.username is not None or parsed.path:
        raise ValueError(f"a Sentinel's address is host[:port]: {FORM}")
    if host.startswith("["):
        ipaddress.IPv6Address(name)  # a ValueError names the bad address, which holds no secret
    return name, SENTINEL_PORT if port is None else port
