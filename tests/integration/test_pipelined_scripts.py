"""Script calls over the pipelined connection (infra/pipelined.py), against a real Redis: every caller gets its own
reply, Redis's refusals arrive as redis-py's exceptions, and a Redis killed or stopped for real fails the waiting
calls without ever handing one caller another's reply; the next call connects again."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from pyramide.service.infra.embedded_redis import EmbeddedRedis
from pyramide.service.infra.redis import RedisClient, connect, storage_full
from pyramide.service.infra.settings import RedisSettings

ECHO = "return {KEYS[1], ARGV[1]}"
WRITE = "redis.call('SET', KEYS[1], ARGV[1]) return 1"
BUSY = """local t = redis.call('TIME') local start = t[1] * 1e6 + t[2]
repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] - start > 300000 return 1"""
"""A script that keeps Redis busy for 0.3 s."""
TIMEOUT_S = 1.0


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    """A Redis of this test's own: these tests kill and stop it."""
    with EmbeddedRedis(tmp_path / "redis") as server:
        yield server


def _client(server: EmbeddedRedis) -> RedisClient:
    return connect(RedisSettings(url=server.url, timeout_s=TIMEOUT_S))


async def _echo(client: RedisClient, sha: str, index: int) -> Any:
    return await client.evalsha(sha, 1, f"key{index}", str(index))


def test_concurrent_calls_each_get_their_own_reply_over_one_connection(own_redis: EmbeddedRedis) -> None:
    async def play() -> tuple[list[Any], int, int]:
        client = _client(own_redis)
        sha = await client.script_load(ECHO)
        before = len(await client.client_list())  # type: ignore[attr-defined]
        replies = await asyncio.gather(*(_echo(client, sha, i) for i in range(500)))
        after = len(await client.client_list())  # type: ignore[attr-defined]
        await client.aclose()
        return replies, before, after

    replies, before, after = asyncio.run(play())
    assert replies == [[f"key{i}".encode(), str(i).encode()] for i in range(500)]
    assert after == before + 1  # 500 concurrent script calls, one connection of their own


def test_refusals_arrive_as_redis_pys_exceptions(own_redis: EmbeddedRedis) -> None:
    async def play() -> list[Exception]:
        client = _client(own_redis)
        errors: list[Exception] = []
        for call in (
            client.evalsha("0" * 40, 0),
            client.evalsha(await client.script_load("return redis.call('NOSUCHCOMMAND')"), 0),
        ):
            try:
                await call
            except ResponseError as error:
                errors.append(error)
        await client.config_set("maxmemory", 1)  # type: ignore[attr-defined]
        try:
            await client.evalsha(await client.script_load(WRITE), 1, "k", "v" * 1000)
        except ResponseError as error:
            errors.append(error)
        await client.config_set("maxmemory", 0)  # type: ignore[attr-defined]
        assert await _echo(client, await client.script_load(ECHO), 7) == [b"key7", b"7"]  # still in step
        await client.aclose()
        return errors

    missing, failing, full = asyncio.run(play())
    assert isinstance(missing, NoScriptError)
    assert type(failing) is ResponseError and not storage_full(failing)
    assert storage_full(full)


def test_a_killed_redis_fails_the_waiting_calls_and_the_next_call_connects_again(own_redis: EmbeddedRedis) -> None:
    async def play() -> tuple[list[Any], Any]:
        client = _client(own_redis)
        sha = await client.script_load(BUSY)
        waiting = asyncio.gather(*(client.evalsha(sha, 0) for _ in range(5)), return_exceptions=True)
        await asyncio.sleep(0.1)
        os.kill(own_redis.pid or 0, signal.SIGKILL)
        failed = await waiting
        own_redis.restart()
        with contextlib.suppress(RedisConnectionError):  # the pool's own connection learns of the restart
            await client.ping()
        again = await _echo(client, await client.script_load(ECHO), 3)
        await client.aclose()
        return failed, again

    failed, again = asyncio.run(play())
    assert failed and all(isinstance(f, RedisConnectionError) for f in failed)
    assert again == [b"key3", b"3"]


def test_a_stopped_redis_times_out_and_its_late_replies_reach_nobody(own_redis: EmbeddedRedis) -> None:
    async def play() -> tuple[list[Any], float, list[Any]]:
        client = _client(own_redis)
        sha = await client.script_load(ECHO)
        await _echo(client, sha, 0)  # the connection is made
        pid = own_redis.pid or 0
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            stuck = await asyncio.gather(*(_echo(client, sha, i) for i in range(5)), return_exceptions=True)
            waited = time.monotonic() - started
        finally:
            os.kill(pid, signal.SIGCONT)
        after = await asyncio.gather(*(_echo(client, sha, i) for i in range(100, 110)))
        await client.aclose()
        return stuck, waited, after

    stuck, waited, after = asyncio.run(play())
    assert all(isinstance(s, (RedisTimeoutError, RedisConnectionError)) for s in stuck)
    assert any(isinstance(s, RedisTimeoutError) for s in stuck)
    assert waited < TIMEOUT_S * 4
    assert after == [[f"key{i}".encode(), str(i).encode()] for i in range(100, 110)]
