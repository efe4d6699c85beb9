"""Per-address rate limits and daily quotas for the public routes that cost the service (creating players,
analysing deals) and for creating games."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from typing import Protocol, runtime_checkable

from litestar import Response
from redis.exceptions import RedisError

from pyramide.service.http.headers import AnyConnection, client_address
from pyramide.service.infra import keyspace
from pyramide.service.infra.address_moves import AddressMoves
from pyramide.service.infra.ratelimit import ALLOWANCE, Limit, Quota, RateLimiter, per_day, per_minute
from pyramide.service.infra.settings import LimitName, Limits, Proxies


@runtime_checkable
class ClientApp(Protocol):
    """An app calling with its own key, as the authentication puts it in ``scope["auth"]`` (``accounts.App``): the
    bucket its requests that name no end user's address count under, and its own limits by name."""

    @property
    def bucket(self) -> str: ...

    @property
    def limits(self) -> Mapping[str, int]: ...


async def rate_limit_headers(response: Response[object]) -> Response[object]:
    """The ``after_request`` hook of a rate-limited route (declare ``rate_limited=True`` beside it, for the
    schema): a successful answer carries the IETF RateLimit headers of the tightest limit the request was counted
    against (``ratelimit.ALLOWANCE``), as a 429 of that limit does, so that a client can slow down before it is
    refused. The figures come from the same script that counted the request: no round trip more."""
    allowance = ALLOWANCE.get()
    if allowance is not None:
        response.headers.update(allowance.headers())
    return response


def _app_of(connection: AnyConnection, address: str) -> ClientApp | None:
    """The app whose own bucket ``address`` is (see ``accounts.authentication``), or ``None``."""
    app = connection.scope.get("auth")
    return app if isinstance(app, ClientApp) and address == app.bucket else None


class AddressLimits:
    """Counts a request against a per-address limit by name (``players`` or ``analyses``), and against the
    address's daily quota of that name when there is one."""

    def __init__(self, limiter: RateLimiter, limits: Limits, proxies: Proxies) -> None:
        self.limiter = limiter
        self.limits = limits
        self.proxies = proxies

    def _address(self, connection: AnyConnection) -> str:
        return client_address(connection, self.proxies.header, self.proxies.networks)

    def _limit(self, connection: AnyConnection, address: str, name: LimitName) -> Limit:
        """The limit ``name`` of the address: an app's own for an app's requests that named no end user's address
        (``accounts.authentication`` put the app's bucket in their place), else the per-address one (so also for
        the app's bucket of the end user's address it named: one user of one app is one address)."""
        app = _app_of(connection, address)
        if app is not None and name in self.limits.app_per_minute:
            return per_minute(name, self.limits.app_limit(name, app.limits))
        return per_minute(name, self.limits.per_minute[name])

    def _quota(self, connection: AnyConnection, address: str, name: LimitName) -> Quota:
        app = _app_of(connection, address)
        return per_day(name, self.limits.per_day[name] if app is None else self.limits.app_quota(name, app.limits))

    def _subjects(self, connection: AnyConnection) -> list[str]:
        """Who a request counts against: its address; for an app's request that names its user's address, the
        app's bucket of that address (never the bucket of the clients connecting from it) and the app's own
        bucket too, so that naming a fresh address on every request gets no app past its own limits and quotas."""
        address = self._address(connection)
        app = connection.scope.get("auth")
        if isinstance(app, ClientApp) and address != app.bucket:
            return [address, app.bucket]
        return [address]

    async def check(self, connection: AnyConnection, name: LimitName, *, with_quota: bool = True) -> None:
        """:class:`RateLimitedError` (429) when the client's address is over the limit ``name``,
        :class:`QuotaExceededError` (429) when it used up its daily quota ``name`` (unless not ``with_quota``):
        one script, one round trip (and one more for the app of an app's request that named its user's address)."""
        for address in self._subjects(connection):
            limit = self._limit(connection, address, name)
            if name not in self.limits.per_day or not with_quota:
                await self.limiter.check(limit, keyspace.address_limit(address, limit.name))
                continue
            quota = self._quota(connection, address, name)
            await self.limiter.check_with_quota(
                limit, keyspace.address_limit(address, limit.name), quota, keyspace.address_quota(address, quota.name)
            )

    async def take_quota(self, connection: AnyConnection, name: LimitName) -> None:
        """Count one against the address's daily quota ``name`` (and the app's, as :meth:`check`), without its
        rate limit: :class:`QuotaExceededError` (429) when it is used up."""
        for address in self._subjects(connection):
            quota = self._quota(connection, address, name)
            await self.limiter.take(quota, keyspace.address_quota(address, quota.name))

    @asynccontextmanager
    async def quota(
        self, connection: AnyConnection, name: LimitName, limit: LimitName | None = None
    ) -> AsyncIterator[None]:
        """Takes one of the address's daily quota ``name`` for the block (:class:`QuotaExceededError`, 429, when it
        is used up) and gives it back if the block fails: only what was stored counts. With ``limit``, the
        address's rate limit of that name is checked in the same script (:class:`RateLimitedError`, 429), and a
        request it refuses takes nothing of the quota. An app's request that named its user's address takes from
        the app's own quota too (and gives both back together)."""
        taken: list[tuple[Quota, str]] = []
        try:
            for address in self._subjects(connection):
                quota = self._quota(connection, address, name)
                counter = keyspace.address_quota(address, quota.name)
                if limit is None:
                    await self.limiter.take(quota, counter)
                else:
                    rate = self._limit(connection, address, limit)
                    await self.limiter.check_with_quota(
                        rate, keyspace.address_limit(address, rate.name), quota, counter
                    )
                taken.append((quota, counter))
            yield
        except BaseException:
            with suppress(RedisError):  # Redis is down: the request answers for that; one count more is harmless
                for quota, counter in taken:
                    await self.limiter.give_back(quota, counter)
            raise


class MoveAllowance:
    """The per-address allowances of moves on the move routes, of all moves and of those with an Idempotency-Key:
    the client's address read from the connection, counted in memory by :class:`AddressMoves` (no Redis round trip
    on the move route)."""

    def __init__(self, moves: AddressMoves, keyed: AddressMoves, limits: Limits, proxies: Proxies) -> None:
        self.moves = moves
        self.keyed = keyed
        self._header = proxies.header
        self._limits = limits
        self._proxies = proxies.networks

    def allow(self, app: ClientApp) -> None:
        """Give the app's bucket (its requests that name no end user's address) its own allowances."""
        self.moves.allow(app.bucket, self._limits.app_limit(LimitName.ADDRESS_MOVES, app.limits))
        self.keyed.allow(app.bucket, self._limits.app_limit(LimitName.ADDRESS_KEYED_MOVES, app.limits))

    def admit(self, connection: AnyConnection, keyed: bool) -> tuple[str, ...]:
        """The buckets the move counts against: the client's address (and, for an app's request that named its
        user's address, the app's bucket of it and the app's own); :class:`RateLimitedError` (429) when one used up
        the minute's moves, or, for a move with an Idempotency-Key (``keyed``), the minute's keyed moves."""
        bucket = keyspace.client_bucket(client_address(connection, self._header, self._proxies))
        app = connection.scope.get("auth")
        buckets = (bucket,) if app is None or app.bucket == bucket else (bucket, app.bucket)
        for one in buckets:
            self.moves.admit(one)
            if keyed:
                self.keyed.admit(one)
        return buckets

    def count(self, buckets: tuple[str, ...], keyed: bool) -> tuple[str, str] | None:
        """One move served to the buckets (and one keyed move, when it kept one response more: ``keyed``); the
        ``RateLimit-Policy`` and ``RateLimit`` values of the client's allowance of moves after it (``None`` without
        one), read from the same in-memory counts."""
        for bucket in buckets:
            self.moves.count(bucket)
            if keyed:
                self.keyed.count(bucket)
        return self.moves.state(buckets[0])

    async def flush(self) -> None:
        """Share both allowances' counts through Redis: a periodic job, every ``FLUSH_INTERVAL_S``."""
        await asyncio.gather(self.moves.flush(), self.keyed.flush())
