"""The deal secret: configured, or generated once and shared through Redis by every process."""

from __future__ import annotations

import asyncio

import redis

from pyramide.service.deals.sealed import DealSecret
from pyramide.service.infra import keyspace
from pyramide.service.infra.redis import connect
from pyramide.service.infra.settings import Settings


def test_every_process_deals_the_same_sealed_cards(settings: Settings, redis_client: redis.Redis) -> None:
    async def deals() -> tuple[object, object, object]:
        one, other = connect(settings.redis), connect(settings.redis)
        try:
            first = await DealSecret(one, None).layout("2026-12-01/N#0")
            second = await DealSecret(other, None).layout("2026-12-01/N#0")
            configured = await DealSecret(one, "a configured secret").layout("2026-12-01/N#0")
            return first, second, configured
        finally:
            await one.aclose()
            await other.aclose()

    first, second, configured = asyncio.run(deals())
    assert first == second, "the second process found the first one's secret"
    assert configured != first, "a configured secret is used instead"
    assert len(redis_client.get(keyspace.DEAL_SECRET) or b"") == 64


def test_the_secret_is_never_in_the_settings_repr() -> None:
    assert "hunter2-hunter2-hunter2" not in repr(
        Settings(redis={"url": "redis://x"}, secrets={"deal_secret": "hunter2-hunter2-hunter2"})
    )
