"""The solver's queue: bounded, players' hints first, refusing at once when full; the player-name table."""

from __future__ import annotations

import asyncio
import unicodedata

import pytest
from scripts.name_chars import character_class, mark, visible_base

from pyramide.service.accounts.name_chars import NAME_BASES, NAME_MARKS, UNICODE_VERSION
from pyramide.service.deals.analysis import Priority, Solver
from pyramide.service.errors import DomainError
from pyramide.service.http.problems import DOMAIN_STATUS
from tests.support.waiting import yield_to_tasks


def test_a_waiting_hint_goes_ahead_of_waiting_analyses_and_a_full_queue_refuses_at_once() -> None:
    async def scenario() -> list[str]:
        solver = Solver(workers=1, queue=3)
        order: list[str] = []
        await solver._acquire(Priority.PUBLIC)  # the shared worker is busy
        await solver._acquire(Priority.PLAYER)  # and so is the one kept for players

        async def wait(name: str, priority: Priority) -> None:
            await solver._acquire(priority)
            order.append(name)
            solver._release(priority)

        tasks = [asyncio.create_task(wait("analysis-1", Priority.PUBLIC))]
        await yield_to_tasks()
        tasks.append(asyncio.create_task(wait("analysis-2", Priority.PUBLIC)))
        await yield_to_tasks()
        tasks.append(asyncio.create_task(wait("hint", Priority.PLAYER)))
        await yield_to_tasks()
        with pytest.raises(DomainError) as refused:
            await solver._acquire(Priority.PUBLIC)
        assert DOMAIN_STATUS[refused.value.code] == 503 and refused.value.code == "solver_busy"
        assert (refused.value.retry_after_s or 0) >= 1  # answered as Retry-After
        solver._release(Priority.PLAYER)
        solver._release(Priority.PUBLIC)
        await asyncio.gather(*tasks)
        assert solver._running == dict.fromkeys(Priority, 0) and not solver._waiting
        return order

    assert asyncio.run(scenario()) == ["hint", "analysis-1", "analysis-2"]


def test_a_waiting_request_that_goes_away_gives_its_place_up() -> None:
    async def scenario() -> None:
        solver = Solver(workers=1, queue=1)
        await solver._acquire(Priority.PUBLIC)
        waiting = asyncio.create_task(solver._acquire(Priority.PUBLIC))
        await yield_to_tasks()
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        assert not solver._waiting
        solver._release(Priority.PUBLIC)
        assert solver._running == dict.fromkeys(Priority, 0)


def test_public_analyses_never_take_the_worker_kept_for_players() -> None:
    async def scenario() -> None:
        solver = Solver(workers=1, queue=1)
        await solver._acquire(Priority.PUBLIC)
        waiting = asyncio.create_task(solver._acquire(Priority.PUBLIC))  # the queue holds one: it waits
        await yield_to_tasks()
        with pytest.raises(DomainError):  # and the next is refused
            await solver._acquire(Priority.PUBLIC)
        await asyncio.wait_for(solver._acquire(Priority.PLAYER), 1)  # at once, on the kept worker
        solver._release(Priority.PLAYER)
        solver._release(Priority.PUBLIC)
        await asyncio.wait_for(waiting, 1)
        solver._release(Priority.PUBLIC)

    asyncio.run(scenario())


@pytest.mark.skipif(unicodedata.unidata_version != UNICODE_VERSION, reason="the table is made on its own version")
def test_the_name_table_is_what_the_generator_writes() -> None:
    assert character_class(visible_base) == NAME_BASES
    assert character_class(mark) == NAME_MARKS


def test_a_player_in_a_full_queue_takes_the_place_of_the_last_public_analysis() -> None:
    async def scenario() -> None:
        solver = Solver(workers=1, queue=2)
        await solver._acquire(Priority.PUBLIC)
        await solver._acquire(Priority.PLAYER)
        first = asyncio.create_task(solver._acquire(Priority.PUBLIC))
        await yield_to_tasks()
        last = asyncio.create_task(solver._acquire(Priority.PUBLIC))
        await yield_to_tasks()
        player = asyncio.create_task(solver._acquire(Priority.PLAYER))
        await yield_to_tasks()
        with pytest.raises(DomainError) as refused:
            await last
        assert refused.value.code == "solver_busy"
        solver._release(Priority.PLAYER)
        await asyncio.wait_for(player, 1)
        assert not first.done()
        solver._release(Priority.PLAYER)
        solver._release(Priority.PUBLIC)
        await asyncio.wait_for(first, 1)

    asyncio.run(scenario())
