"""Per-address rate limits and daily quotas for the public routes that cost the service (creating players,
analysing deals) and for creating games."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from redis.exceptions import RedisError

from pyramide.service.apps import App
from pyramide.service.http.headers import AnyConnection, client_address
from pyramide.service.infra.address_moves import AddressMoves
from pyramide.service.infra.ratelimit import Limit, Quota, RateLimiter, address_key, client_bucket, quota_key
from pyramide.service.infra.settings import APP_LIMIT_NAMES, QUOTA_NAMES, Settings


def _app_of(connection: AnyConnection, address: str) -> App | None:
    """The app whose own bucket ``address`` is (see ``http.auth``), or ``None``."""
    app = connection.scope.get("auth")
    return app if isinstance(app, App) and address == app.bucket else None


class AddressLimits:
    """Counts a request against a per-address limit by name (``players`` or ``analyses``), and against the
    address's daily quota of that name when there is one."""

    def __init__(self, limiter: RateLimiter, settings: Settings) -> None:
        self.limiter = limiter
        self.settings = settings

    def _address(self, connection: AnyConnection) -> str:
        return client_address(connection, self.settings.trusted_proxy_header, self.settings.trusted_proxies)

    def _limit(self, connection: AnyConnection, address: str, name: str) -> Limit:
        """The limit ``name`` of the address: an app's own for an app's requests that named no end user's address
        (``http.auth`` put the app's bucket in their place), else the per-address one."""
        app = _app_of(connection, address)
        if app is not None and name in APP_LIMIT_NAMES:
            return self.settings.app_limit(name, app.limits)
        return self.settings.limits.limit(name)

    def _quota(self, connection: AnyConnection, address: str, name: str) -> Quota:
        app = _app_of(connection, address)
        return self.settings.quota(name) if app is None else self.settings.app_quota(name, app.limits)

    async def check(self, connection: AnyConnection, name: str) -> None:
        """:class:`RateLimitedError` (429) when the client's address is over the limit ``name``,
        :class:`QuotaExceededError` (429) when it used up its daily quota ``name``: one script, one round trip."""
        address = self._address(connection)
        limit = self._limit(connection, address, name)
        if name not in QUOTA_NAMES:
            return await self.limiter.check(limit, address_key(limit, address))
        quota = self._quota(connection, address, name)
        return await self.limiter.check_with_quota(limit, address_key(limit, address), quota, quota_key(quota, address))

    @asynccontextmanager
    async def quota(self, connection: AnyConnection, name: str, limit: str | None = None) -> AsyncIterator[None]:
        """Takes one of the address's daily quota ``name`` for the block (:class:`QuotaExceededError`, 429, when it
        is used up) and gives it back if the block fails: only what was stored counts. With ``limit``, the
        address's rate limit of that name is checked in the same script (:class:`RateLimitedError`, 429), and a
        request it refuses takes nothing of the quota."""
        address = self._address(connection)
        quota = self._quota(connection, address, name)
        counter = quota_key(quota, address)
        if limit is None:
            await self.limiter.take(quota, counter)
        else:
            rate = self._limit(connection, address, limit)
            await self.limiter.check_with_quota(rate, address_key(rate, address), quota, counter)
        try:
            yield
        except BaseException:
            with suppress(RedisError):  # Redis is down: the request answers for that; one count more is harmless
                await self.limiter.give_back(quota, counter)
            raise


class MoveAllowance:
    """The per-address allowances of moves on the move routes, of all moves and of those with an Idempotency-Key:
    the client's address read from the connection, counted in memory by :class:`AddressMoves` (no Redis round trip
    on the move route)."""

    def __init__(self, moves: AddressMoves, keyed: AddressMoves, settings: Settings) -> None:
        self.moves = moves
        self.keyed = keyed
        self._header = settings.trusted_proxy_header
        self._settings = settings
        self._proxies = settings.trusted_proxies

    def allow(self, app: App) -> None:
        """Give the app's bucket (its requests that name no end user's address) its own allowances."""
        self.moves.allow(app.bucket, self._settings.app_limit("address_moves", app.limits).limit)
        self.keyed.allow(app.bucket, self._settings.app_limit("address_keyed_moves", app.limits).limit)

    def admit(self, connection: AnyConnection, keyed: bool) -> str:
        """The client's address bucket; :class:`RateLimitedError` (429) when it used up the minute's moves, or,
        for a move with an Idempotency-Key (``keyed``), the minute's keyed moves."""
        bucket = client_bucket(client_address(connection, self._header, self._proxies))
        self.moves.admit(bucket)
        if keyed:
            self.keyed.admit(bucket)
        return bucket

    def count(self, bucket: str, keyed: bool) -> None:
        """One move served to the address (and one keyed move, when it kept one response more: ``keyed``)."""
        self.moves.count(bucket)
        if keyed:
            self.keyed.count(bucket)

    async def run(self) -> None:
        """Share both allowances' counts through Redis until cancelled."""
        await asyncio.gather(self.moves.run(), self.keyed.run())
