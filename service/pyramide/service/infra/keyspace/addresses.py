"""A client address's keys, under the hash tag of its bucket ``{rl:<bucket>}`` (an IPv4 address, an IPv6 /64; an
app's own ``app:<id>``, or ``app:<id>@<address bucket>`` for an end user's address the app names): its rate-limit
cells, quotas and live streams; and sealed player creations, which have no player yet."""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from pyramide.service.infra.keyspace.players import RECENT


@lru_cache(maxsize=RECENT)
def client_bucket(address: str) -> str:
    """The bucket a client address counts in: the address itself for IPv4, its /64 network for IPv6 (one host
    commonly holds a whole /64). Anything else (an app's bucket, :func:`app_client_bucket`) is kept as it is, cut
    to 64 characters."""
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return address.strip()[:64] or "unknown"
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False).network_address) + "/64"
    return str(parsed)


def app_client_bucket(app_bucket: str, address: str) -> str:
    """The bucket of an end user's ``address`` named by the app whose own bucket is ``app_bucket``
    (``app:<id>@<address bucket>``, at most 61 characters): what an app spends for an address is neither what the
    clients connecting from that address have, nor what another app has for it. Its keys share a hash tag, so one
    script still checks a cell and a counter of it together."""
    return f"{app_bucket}@{client_bucket(address)}"


def address_limit(address: str, limit: str) -> str:
    """The client address's cell of the rate limit ``limit``."""
    return f"pyr:{{rl:{client_bucket(address)}}}:{limit}"


def address_quota(address: str, quota: str) -> str:
    """In the client's slot, beside its rate-limit cells, so that one script checks both."""
    return f"pyr:{{rl:{client_bucket(address)}}}:quota:{quota}"


def address_window(bucket: str, allowance: str, window: int) -> str:
    """An address bucket's counter of the allowance ``allowance`` for one minute window."""
    return f"pyr:{{rl:{bucket}}}:{allowance}:{window}"


def address_streams(address: str) -> str:
    """The live streams open from a client address: a sorted set of stream ids by the ms their lease ends."""
    return f"pyr:{{rl:{client_bucket(address)}}}:streams"


def sealed_create(lookup: str) -> str:
    """A sealed player creation, under the hash of its Idempotency-Key."""
    return f"pyr:{{ip:{lookup}}}"


def kept_answer(lookup: str) -> str:
    """The sealed answer kept for an Idempotency-Key of a route whose domain keeps none (``http.kept_answers``),
    under the hash of the caller and the key."""
    return f"pyr:{{ka:{lookup}}}"
