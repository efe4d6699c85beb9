"""What this process remembers of the apps' keys and their users' bindings, for the routes whose store checks the
player's token on every access (a move, a tap, an abandon): an app's move then costs no Redis round trip of its own
for its key and binding (issue 58), where it cost one script call a request.

Each entry is what the check of an app key and an external id found (:meth:`AppPlayers.act_as`): the app (its key
compared in constant time, as the app's hash would be) and the player bound to that user. It is taken only while the
process hears every change of the apps:

- Revoking an app (``AppStore.revoke``) and erasing an app's player (its binding goes, or keeps the ban:
  ``AppPlayers.unbind``) PUBLISH the app's id on :data:`APP_CHANGES` once the change is made, and every process drops
  that app's entries as its pub/sub connection reads the notice (``infra.notices``, :meth:`Notices.watch`).
- The process's pub/sub connection must have answered its own PING within the last two ``notices_ping_s``
  (:meth:`Notices.fresh`); a lost connection drops every entry at once, and none is taken until it answers again.
- Before it looks an entry up, a request lets the event loop run the callbacks already due (``asyncio.sleep(0)``):
  a notice that arrived with the request, or before it, is read and heard first. Redis writes a PUBLISH to its
  subscribers before the revoking request can answer, so the notice reaches each process before any request sent
  after the revocation's answer: from then on, no process takes the revoked key from memory ("refused at once", as
  ``docs/api.md`` says of a revoked key; ``tests/integration/test_app_players.py`` revokes through one worker of
  `pyramide serve --workers 2` and plays on both).
- An entry lives :data:`APP_CACHE_S` at most, whatever was heard.

A binding that changes without a notice (a user's first player bound, or a player gone idle replaced by a fresh
one) changes only when its player is gone: the entry's player is then not found (``PlayerStore.load``) and the
request takes the slow path, which reads the binding. A ban needs no notice: it replaces the player's token hash,
which the store compares on every change (``accounts.bans``)."""

from __future__ import annotations

import asyncio
import hmac
import logging
from dataclasses import dataclass
from typing import Final
from uuid import UUID

from pyramide.service.accounts.apps import App
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import Clock
from pyramide.service.infra.notices import Notices
from pyramide.service.infra.redis import RedisClient

APP_CHANGES: Final = keyspace.APP_CHANGES
APP_CACHE_S: Final = 60.0
"""How long an entry is taken at most, even with every notice heard."""
APP_CACHE_SIZE: Final = 10_000
"""Entries kept at most; past it, all are dropped at once (as the players' cache does)."""

log = logging.getLogger("pyramide.service")


@dataclass(frozen=True, slots=True)
class _Entry:
    key: str
    app: App
    bound: UUID
    at: float


def _app_hex(key: str) -> str:
    """The app id's 32 hex digits in an app key (``pyrapp_<id>_<secret>``), as the entries are looked up by: no
    parsing, since an entry is taken only for the very key it was checked with."""
    return key[7:39]


class AppCache:
    """The apps' keys and bindings this process checked lately (see the module)."""

    def __init__(self, redis: RedisClient, notices: Notices | None, clock: Clock) -> None:
        self.redis = redis
        self.notices = notices
        self.clock = clock
        self._entries: dict[tuple[str, str], _Entry] = {}
        self._watching: asyncio.Task[None] | None = None
        self._heard = 0
        """How many notices (or losses) were heard: an answer read from Redis before one is not remembered."""

    async def get(self, key: str, external_id: str) -> tuple[App, UUID] | None:
        """The app of ``key`` and the player id bound to its user ``external_id``, if this process checked them
        lately and may take them from memory; ``None``: check them in Redis."""
        notices = self.notices
        if notices is None:
            return None
        if self._watching is None:
            self._watching = asyncio.get_running_loop().create_task(self._watch(notices))
            return None
        await asyncio.sleep(0)  # a notice already read by the event loop is heard before the look-up
        if not notices.fresh():
            self._entries.clear()
            return None
        entry = self._entries.get((_app_hex(key), external_id))
        if entry is None or self.clock.monotonic() - entry.at >= APP_CACHE_S:
            return None
        if not hmac.compare_digest(entry.key.encode(), key.encode()):
            return None
        return entry.app, entry.bound

    def ticket(self) -> int:
        """To take before reading a key and binding from Redis, and give back to :meth:`put`: what was read before a
        notice was heard (a revocation that landed meanwhile) is not remembered."""
        return self._heard

    def put(self, ticket: int, key: str, app: App, external_id: str, bound: UUID) -> None:
        """Remember what Redis answered for ``key`` and ``external_id``, read since :meth:`ticket` gave ``ticket``
        (only while notices are heard, and if none was heard since)."""
        if self.notices is None or self._watching is None or not self._watching.done() or ticket != self._heard:
            return
        if len(self._entries) >= APP_CACHE_SIZE:
            self._entries.clear()
        self._entries[app.id.hex, external_id] = _Entry(key, app, bound, self.clock.monotonic())

    def heard(self, data: bytes | None) -> None:
        """A notice on :data:`APP_CHANGES` (an app's id) drops that app's entries; a lost connection drops all."""
        self._heard += 1
        if data is None:
            self._entries.clear()
            return
        try:
            app_id = UUID(data.decode())
        except ValueError:
            self._entries.clear()
            return
        for held in [k for k in self._entries if k[0] == app_id.hex]:
            del self._entries[held]

    def forget(self, app_id: UUID) -> None:
        """Drop this process's entries of ``app_id`` at once (the process that changed it)."""
        self.heard(str(app_id).encode())

    async def _watch(self, notices: Notices) -> None:
        try:
            await notices.watch(APP_CHANGES, self.heard)
        except Exception:  # Redis gone: try again on a later request
            log.warning("the apps' change notices could not be watched; app keys are checked in Redis")
            self._watching = None


async def announce(redis: RedisClient, app_id: UUID) -> None:
    """Tell every process that ``app_id`` changed (revoked, or a player of its erased): they drop what they remember
    of its keys and bindings."""
    await redis.publish(APP_CHANGES, str(app_id))
