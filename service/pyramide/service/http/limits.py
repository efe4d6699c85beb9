"""Per-address rate limits for the public routes that cost the service (creating players, analysing deals)."""

from __future__ import annotations

from pyramide.service.http.headers import AnyConnection, client_address
from pyramide.service.infra.ratelimit import RateLimiter, address_key
from pyramide.service.infra.settings import Settings


class AddressLimits:
    """Counts a request against a per-address limit by name (``players`` or ``analyses``)."""

    def __init__(self, limiter: RateLimiter, settings: Settings) -> None:
        self.limiter = limiter
        self.settings = settings

    async def check(self, connection: AnyConnection, name: str) -> None:
        """:class:`RateLimitedError` (429) when the client's address is over the limit ``name``."""
        limit = self.settings.limits.limit(name)
        address = client_address(connection, self.settings.trusted_proxy_header, self.settings.trusted_proxies)
        await self.limiter.check(limit, address_key(limit, address))
