"""A finished game's review: for every position of its record, whether it could still be won and in how few moves,
the point of no return, which moves kept it on a shortest line, and a shortest continuation from any step.

The solver works it out (:func:`pyramide.solver.review.review_record`, in a worker, queued and budgeted as a
player's search); it is kept per game in Redis, so a second request costs one read. A challenge game is reviewed
only after its challenge closes (the review would show the face-down cards): 409 ``hints_not_allowed`` before. A
stuck game may still be undone and played on: its review is kept per version of the game, so a review never
describes a record the game no longer has.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from pyramide.service.accounts import Player
from pyramide.service.deals import HINT_BUDGET, Solver
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.games.reading import GameReading
from pyramide.service.infra import keyspace
from pyramide.service.infra.clock import now_ms


class GameReviews:
    """Reviews of a player's finished games, computed once each."""

    def __init__(self, reading: GameReading, solver: Solver, ttl_s: int) -> None:
        self.reading = reading
        self.clock = reading.clock
        self.redis = reading.store.redis
        self.solver = solver
        self.ttl_s = ttl_s

    async def review(self, player: Player, game_id: UUID, start: int | None) -> dict[str, object]:
        """The review of the player's finished (won, stuck or abandoned) game ``game_id``; with ``start``, the
        shortest continuation from that step too (404 ``step_not_found`` outside the record)."""
        stored, moves = await self.reading.record(player, game_id)
        if stored.sealed(now_ms(self.clock)):
            raise DomainError(ErrorCode.HINTS_NOT_ALLOWED)
        if not stored.status.decided:
            raise DomainError(ErrorCode.GAME_NOT_FINISHED)
        if start is not None and not 0 <= start <= len(moves):
            raise DomainError(ErrorCode.STEP_NOT_FOUND)
        record = [m.notation() for m in moves]
        key = keyspace.game_review(
            player.id, game_id, stored.version, HINT_BUDGET, round(self.solver.time_limit_s * 1000)
        )
        kept = await self.redis.get(key)
        if kept is not None:
            found: dict[str, Any] = json.loads(kept)
        else:
            answer = await self.solver.review(player.id, stored.game.code, record)
            found = answer if answer is not None else _undecided(len(record))
            await self.redis.set(key, json.dumps(found), ex=self.ttl_s)
        return reviewed(game_id, stored.status, record, found, start)


def _undecided(steps: int) -> dict[str, Any]:
    """A review whose worker did not answer in time: nothing decided."""
    return {"winnable": [None] * (steps + 1), "left": [None] * (steps + 1), "lines": {}}


def reviewed(
    game_id: UUID, status: object, record: list[str], found: dict[str, Any], start: int | None
) -> dict[str, object]:
    """The review's body from the solver's ``found`` (per step ``winnable``, ``left`` and the ``lines`` found)."""
    winnable: list[bool | None] = found["winnable"]
    left: list[int | None] = found["left"]
    positions = [
        {
            "step": step,
            "operation": record[step - 1] if step else None,
            "winnable": winnable[step],
            "moves_left": left[step],
            "on_shortest_line": _on_shortest(winnable, left, step),
        }
        for step in range(len(record) + 1)
    ]
    lost = [step for step, won in enumerate(winnable) if won is False]
    body: dict[str, object] = {
        "id": game_id,
        "status": status,
        "steps": len(record),
        "point_of_no_return": lost[0] if lost and winnable[-1] is not True else None,
        "positions": positions,
        "continuation": None if start is None else _continuation(found, start),
    }
    return body


def _on_shortest(winnable: list[bool | None], left: list[int | None], step: int) -> bool | None:
    """Whether the move that led to ``step`` was on a shortest winning line from the step before (``None`` when
    that is not known: the step before was lost or not decided, or this one is not decided)."""
    before, after = left[step - 1] if step else None, left[step]
    if before is None:
        return None
    if after is not None:
        return after == before - 1
    return False if winnable[step] is False else None


def _continuation(found: dict[str, Any], start: int) -> dict[str, object]:
    """A shortest winning line from ``start``: the line found at the last step at or before it where one was
    searched for, less the moves played along it since (``line`` null when none is known)."""
    lines: dict[str, list[str]] = found["lines"]
    line: list[str] | None = None
    if found["left"][start] is not None:
        at = start
        while str(at) not in lines:
            at -= 1
        line = lines[str(at)][start - at :]
    return {"step": start, "line": line, "moves": None if line is None else len(line)}
