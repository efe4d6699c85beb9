"""Erased data leaves Redis's files: after erasures, the service asks Redis to rewrite its append-only file, at most
once per ``erasure_rewrite_s`` across every process.

Redis appends every write to its append-only file (AOF) and rewrites the file from memory only when it has doubled
since the last rewrite (64 MB at least), so the writes that made an erased player's keys would stay on disk for as
long as that takes. A rewrite (BGREWRITEAOF) writes the file afresh from what Redis holds, without them.

It must come after the erasure's tombstone has expired: the tombstone's key names the player, and so does the
deletion Redis appends when it expires. So a rewrite is asked for once the tombstone's time is up, and first the
expired tombstones are looked up (SCAN MATCH), which makes Redis delete them at once rather than at some later
sampling: their deletions go to the old file, never to the new one. A rewrite asked for after an erasure's
tombstone expired covers that erasure, whichever process asked for it: the key ``pyr:erasure:rewritten`` holds
Redis's time of the last one, and the script that claims the next checks both in one step.

The bound, for ``docs/security.md``: an erasure is off the files ``erasure_guard_s`` + ``erasure_rewrite_s`` + 1 s
after it, plus the time the rewrite takes. A process that stops in between leaves its erasures to the next rewrite.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final, NamedTuple

from redis.exceptions import RedisError, ResponseError

from pyramide.service.infra import keyspace
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.scripts import Result, Script
from pyramide.service.infra.tasks import TaskRegistry

log = logging.getLogger("pyramide.service")

SCAN_COUNT: Final = 1000
EXPIRED_AFTER_MS: Final = 1000
"""How long after a tombstone's time is up it is taken for expired: Redis takes a key for expired only once its
time is past, and the lookup that deletes it runs after the claim, so a rewrite asked for in the very millisecond
would still find it alive and write it to the new file (seen in the test). A second is far beyond that."""
BUSY_TRIES: Final = 60
"""How often a rewrite refused because another is running is asked for again, a second apart."""


class ClaimKeys(NamedTuple):
    rewritten: str
    """When the last rewrite was asked for."""


class ClaimArgs(NamedTuple):
    due_ms: int
    interval_ms: int


CLAIM: Final = Script("erasure_claim", ClaimKeys, ClaimArgs)
"""For the earliest erasure due (Redis's time when its tombstone is gone): ``{LIMITED, ms}`` wait that long;
``{UNCHANGED, at}`` a rewrite asked for at ``at`` covers every erasure due by then; ``{OK, now}`` this process asks
for the rewrite, which covers every erasure due by ``now``."""


class Rewrites:
    """The erasures of this process still to leave the files, and the periodic job that sees to it (``erasure
    rewrite``: woken by each erasure, then at the pace the claim answers)."""

    IDLE_S: Final = 60.0
    """How long the job sleeps with no erasure waiting (an erasure wakes it)."""

    def __init__(self, redis: RedisClient, interval_s: float, tasks: TaskRegistry) -> None:
        self.redis = redis
        self.interval_ms = int(interval_s * 1000)
        self._claim = CLAIM.load(redis)
        self._due: list[int] = []
        self._job = tasks.every("erasure rewrite", self.IDLE_S, self.rewrite_due, first_s=self.IDLE_S)

    def after(self, due_ms: int) -> None:
        """An erasure whose tombstone is gone at ``due_ms`` (Redis's clock): rewrite the files after that."""
        self._due.append(due_ms + EXPIRED_AFTER_MS)
        self._job.wake()

    async def rewrite_due(self) -> float | None:
        """Asks for the rewrite that covers the earliest erasure waiting once it is due; the seconds until the next
        pass (``None``: none waits)."""
        while self._due:
            due = min(self._due)
            try:
                keys = ClaimKeys(rewritten=keyspace.ERASURE_REWRITTEN)
                kind, value = await self._claim(keys, ClaimArgs(due_ms=due, interval_ms=self.interval_ms))
                if int(kind) == Result.OK:
                    await self._rewrite()
            except RedisError as error:
                log.warning("erased data not yet rewritten out of Redis's files: %s", error)
                return 1.0
            if int(kind) == Result.LIMITED:
                return int(value) / 1000
            self._due = [d for d in self._due if d > int(value)]
        return None

    async def _rewrite(self) -> None:
        """Expire the tombstones that are due (see the module), then rewrite the append-only file."""
        async for _ in self.redis.scan_iter(match=keyspace.TOMBSTONE_PATTERN, count=SCAN_COUNT):
            pass
        for _ in range(BUSY_TRIES):
            try:
                await self.redis.bgrewriteaof()
                log.info("append-only file rewrite asked for, after erasures")
                return
            except ResponseError as error:
                if "in progress" not in str(error):
                    raise
            await asyncio.sleep(1)
        log.warning("erased data not yet rewritten out of Redis's files: another rewrite kept running")
