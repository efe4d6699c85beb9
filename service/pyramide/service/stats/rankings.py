"""Ranked lists in Redis: a player's won games and a deal's leaderboard, both ordered the way the rules document
orders games in the statistics, by time, then moves, then the earlier finish.

A ranked list is a sorted set whose members all have score 0, so Redis orders them by their bytes: a member is
``<elapsed ms, 12 digits>:<moves, 10 digits>:<finished ms, 15 digits>:<id>``, which sorts exactly in that order (the
id, a game's or a player's, breaks the last ties). The details of each entry are JSON in a hash under the same id.
A page starts after a cursor, which is simply the last member of the previous page: any member-shaped text is a
valid position, so a cursor never goes stale when entries are added or removed in between.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from pyramide.service.infra.redis import RedisClient
from pyramide.service.infra.scripts import Script


class PageKeys(NamedTuple):
    ranking: str
    details: str
    """The entries' details (a hash by the id that ends each member)."""


class PageArgs(NamedTuple):
    after: str
    """The cursor: the last member of the previous page ('' for the first page)."""
    limit: int


PAGE: Final = Script("ranked_page", PageKeys, PageArgs)
"""A page: the first entry's rank, one member more than ``limit`` (there is a next page), and their details."""


def rank_member(elapsed_ms: int, moves: int, finished_ms: int, entry_id: str) -> str:
    """The member that sorts an entry into place; smaller is better."""
    return f"{elapsed_ms:012d}:{moves:010d}:{finished_ms:015d}:{entry_id}"


@dataclass(frozen=True, slots=True)
class Page:
    """Entries best first, each with its ``rank`` (1 for the best of the whole list), and the cursor of the next
    page, ``None`` on the last one."""

    entries: list[dict[str, Any]]
    next_cursor: str | None


class RankedLists:
    def __init__(self, redis: RedisClient) -> None:
        self._page = PAGE.load(redis)

    async def page(self, ranking_key: str, details_key: str, cursor: str | None, limit: int) -> Page:
        keys = PageKeys(ranking=ranking_key, details=details_key)
        rank, members, details = await self._page(keys, PageArgs(after=cursor or "", limit=limit))
        entries = [{**json.loads(d), "rank": int(rank) + i} for i, d in enumerate(details[:limit])]
        next_cursor = members[limit - 1].decode() if len(members) > limit else None
        return Page(entries, next_cursor)
