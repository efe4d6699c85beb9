"""A finished game's review: for every position of its record, whether it could still be won and in how few moves.

The record is replayed from the deal's code by the engine; each position is decided by :func:`.search.solve` (with
its shortest line), but most need no search of their own: a move played along the shortest line found one step
before leaves that line's rest as a shortest line from the next position (one move fewer), and a position after a
lost one is lost too (only an undo can lead back). So a game played along a shortest line costs one search, and a
game thrown away costs one search per step until the first position proven lost. One time limit covers the whole
review: a position not reached in time is "not decided" (``None``), never a guess.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pyramide.engine import UNDO, Game, Move, parse_move
from pyramide.solver.search import solve


@dataclass(slots=True)
class _Known:
    """What is known of one position: won from there or not (``None``: not decided) and a shortest line."""

    winnable: bool | None
    line: list[Move] | None


def review_record(code: str, record: list[str], budget: int, time_limit_s: float) -> dict[str, object]:
    """The review of the game played as ``record`` (move notation) from ``code``, as JSON: per step ``winnable``
    and ``left`` (the fewest moves left), and ``lines``, the shortest lines found, by the step they start at (the
    line from any later step of a run along it is its rest)."""
    deadline = time.perf_counter() + time_limit_s
    moves = [parse_move(text) for text in record]
    game = Game(code)
    known = _decide(game, None, None, budget, deadline)
    steps = [known]
    lines: dict[str, list[str]] = {}
    if known.line is not None:
        lines["0"] = [m.notation() for m in known.line]
    for step, move in enumerate(moves, start=1):
        game.play(move)
        known = _decide(game, known, move, budget, deadline)
        steps.append(known)
        if known.line is not None and not _follows(steps[-2], move):
            lines[str(step)] = [m.notation() for m in known.line]
    return {
        "winnable": [k.winnable for k in steps],
        "left": [None if k.line is None else len(k.line) for k in steps],
        "lines": lines,
    }


def _follows(before: _Known, move: Move) -> bool:
    """Whether ``move`` is the first move of the shortest line known before it."""
    return before.line is not None and len(before.line) > 0 and before.line[0] == move


def _decide(game: Game, before: _Known | None, move: Move | None, budget: int, deadline: float) -> _Known:
    """What is known of ``game``'s position, reached by ``move`` from the one ``before`` (``None`` at the deal)."""
    if game.is_won:
        return _Known(winnable=True, line=[])
    if before is not None and move is not None:
        if _follows(before, move):
            assert before.line is not None
            return _Known(winnable=True, line=before.line[1:])
        if before.winnable is False and move != UNDO:
            return _Known(winnable=False, line=None)
    left_s = deadline - time.perf_counter()
    if left_s <= 0:
        return _Known(winnable=None, line=None)
    analysis = solve(game, budget=budget, shortest=True, time_limit_s=left_s)
    return _Known(winnable=analysis.winnable, line=analysis.shortest if analysis.winnable else None)
