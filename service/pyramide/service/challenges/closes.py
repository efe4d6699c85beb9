"""The ``challenge.closed`` event: a background task in every process notices each daily challenge's close and
emits it, once per challenge whichever process sees it first.

A close is a moment (midnight UTC), not a write, so no script that saves a change can emit it. Instead every
``challenge_close_check_s`` each process looks at the challenges of the last :data:`LOOKBACK_DAYS` days that have
closed and whose deal was chosen, and runs one script in the challenge's slot that sets a marker with ``SET NX`` and
emits the event in the same step: the marker and the event are written together or not at all, so the event is
emitted exactly once, never before the close (the code, nonce and commitment are public only from then on), and a
process that was down at midnight emits it when it starts, up to :data:`LOOKBACK_DAYS` days late."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import timedelta
from typing import Final, NamedTuple

from pyramide.service.challenges.calendar import ChallengeId, day_of, moment
from pyramide.service.challenges.deals import ChallengeDeals
from pyramide.service.infra import keyspace, outbox
from pyramide.service.infra.clock import now_ms
from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.scripts import Result, Script

LOOKBACK_DAYS: Final = 7
"""How many days back a check looks for a close whose event is still to emit."""
log = logging.getLogger("pyramide.service")


class ClosedKeys(NamedTuple):
    deal: str
    marker: str
    outbox: str


class ClosedArgs(NamedTuple):
    at_ms: int
    data: str
    """The payload: ``challenge``, ``preset``, ``closed_at``, ``code``, ``nonce``, ``commitment``."""


CLOSED: Final = Script("challenge_closed", ClosedKeys, ClosedArgs)
"""Emits ``challenge.closed`` once (a ``SET NX`` marker in the same script): :attr:`Result.OK` when it did."""


def closed_challenges(presets: Iterable[str], now: int) -> list[ChallengeId]:
    """The challenges of the last :data:`LOOKBACK_DAYS` days closed by ``now`` (today's closes at its end)."""
    today = day_of(now)
    days = (today - timedelta(days=back) for back in range(1, LOOKBACK_DAYS + 1))
    return [c for day in days for preset in presets if (c := ChallengeId(day, preset)).closes_ms <= now]


class ChallengeCloses:
    """Emits each closed challenge's event (see the module)."""

    def __init__(
        self,
        redis: RedisClient,
        deals: ChallengeDeals,
        every_s: float,
        touch: Callable[[ChallengeId, int], Awaitable[object]],
    ) -> None:
        self.redis = redis
        self.deals = deals
        self.clock = deals.clock
        self.every_s = every_s
        self.touch = touch
        """Bumps a closed challenge's board (``ChallengeService.touch_board``): it shows ``final`` and the par from
        the close on. Run at each check, emitted or not: a no-op once done, and it redoes one a dead process left."""
        self._closed = CLOSED.load(redis)

    async def emit_closed(self, now: int) -> int:
        """Emit the event of every challenge of the last :data:`LOOKBACK_DAYS` days closed by ``now`` and not
        emitted yet; how many this call emitted."""
        emitted = 0
        for challenge in closed_challenges(self.deals.presets, now):
            emitted += await self._emit(challenge, now)
            await self._touch(challenge, now)
        return emitted

    async def _touch(self, challenge: ChallengeId, now: int) -> None:
        try:
            await self.touch(challenge, now)
        except Exception as error:  # the next check tries again; the other challenges' events still go
            log.warning("the board of the closed challenge %s was not bumped (%s)", challenge, type(error).__name__)

    async def _emit(self, challenge: ChallengeId, now: int) -> bool:
        chosen = await self.deals.kept(challenge)
        if chosen is None:
            return False  # never chosen: nobody could play it
        name = str(challenge)
        data = {
            "challenge": name,
            "preset": challenge.preset,
            "closed_at": moment(challenge.closes_ms).isoformat().replace("+00:00", "Z"),
            "code": str(chosen.code),
            "nonce": chosen.nonce,
            "commitment": chosen.commitment,
        }
        box = keyspace.challenge_outbox(name)
        keys = ClosedKeys(deal=keyspace.challenge_deal(name), marker=keyspace.challenge_closed_event(name), outbox=box)
        if await self._closed(keys, ClosedArgs(at_ms=now, data=json.dumps(data))) != Result.OK:
            return False
        await outbox.mark_due(self.redis, box, now)
        return True

    async def check(self) -> None:
        """One pass of :meth:`emit_closed`: a periodic job, every ``every_s``."""
        await self.emit_closed(now_ms(self.clock))
