"""The par backlog of one process (issue 58): bounded per kind, each deal in it once, finished games' first."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from pyramide.engine import DealCode, Rules
from pyramide.service.deals.par import BACKLOG, ParBook
from pyramide.service.infra.clock import SystemClock
from pyramide.service.infra.tasks import TaskRegistry


def _codes(count: int) -> list[DealCode]:
    return [DealCode(Rules(), number=7_919 * (i + 1)) for i in range(count)]


def _book() -> ParBook:
    """A book that starts no search (``in_flight`` 0): every deal seen waits in the backlog."""
    return ParBook(cast(Any, None), cast(Any, None), 60, TaskRegistry(SystemClock()), in_flight=0)


def test_the_backlog_keeps_at_most_its_bound_of_each_kind_and_drops_the_later_deals() -> None:
    """Past ``BACKLOG`` deals of a kind a deal seen is dropped (its next read queues it again)."""
    book = _book()
    read, finished = _codes(BACKLOG + 10), _codes(2 * BACKLOG + 20)[BACKLOG + 10 :]

    async def see_all() -> None:
        for code in read:
            await book.see(code)
        for code in finished:
            await book.see(code, finished=True)

    asyncio.run(see_all())
    assert list(book._read) == [str(c) for c in read[:BACKLOG]]
    assert list(book._finished) == [str(c) for c in finished[:BACKLOG]]


def test_a_deal_waits_once_a_finished_games_read_moving_it_ahead_of_deals_merely_read() -> None:
    book = _book()
    first, second, third = _codes(3)

    async def see() -> None:
        for code in (first, second, third):
            await book.see(code)
        await book.see(second, finished=True)
        await book.see(second)

    asyncio.run(see())
    assert (list(book._finished), list(book._read)) == ([str(second)], [str(first), str(third)])
