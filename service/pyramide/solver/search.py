"""The search: every reachable position once, pruned by a sound bound, with a budget that answers "unknown"
rather than guess.

``solve`` explores depth first, removals before draws, and stops at the first win (then 28 cards are removable);
otherwise it exhausts the reachable positions whose bound can still beat the best found, which proves both that
the deal cannot be won and the exact maximum. ``shortest=True`` adds a breadth-first search for a winning line with
the fewest moves as the rules count them (removals, draws and turn-overs).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field

from pyramide.engine import DRAW, RECYCLE, Game, Move, RemoveKing, RemovePair
from pyramide.engine.pyramid import SLOTS
from pyramide.solver.bounds import Bounds
from pyramide.solver.paths import path_to
from pyramide.solver.pool import PoolSearch
from pyramide.solver.position import Deal, Position, from_game, is_won, moves

DEFAULT_BUDGET = 2_000_000


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the solver proved. ``winnable`` and ``max_removable`` are ``None`` only when the budget ran out first;
    ``line`` then reaches the best position found (``best_found`` pyramid cards removed)."""

    winnable: bool | None
    max_removable: int | None
    line: list[Move]
    states: int
    elapsed_ms: float
    best_found: int
    shortest: list[Move] | None = field(default=None)

    def to_json(self) -> dict[str, object]:
        result: dict[str, object] = {
            "winnable": self.winnable,
            "max_removable": self.max_removable,
            "line": [m.notation() for m in self.line],
            "states": self.states,
            "elapsed_ms": round(self.elapsed_ms, 3),
        }
        if self.shortest is not None:
            result["shortest"] = [m.notation() for m in self.shortest]
        return result


def _removed(position: Position) -> int:
    return SLOTS - position.present.bit_count()


def _explore(
    deal: Deal, start: Position, budget: int, deadline: float, *, prune: bool = True, floor: int = -1
) -> tuple[bool | None, int, list[Move], int, bool]:
    """Depth-first over reachable positions: (won, best removed, line to the best, states, exhausted). Positions
    whose bound cannot beat the best found, nor ``floor``, are cut."""
    parents: dict[Position, tuple[Position, Move] | None] = {start: None}
    best, best_at = _removed(start), start
    bound = Bounds(deal).removable
    stack = [start]
    while stack:
        position = stack.pop()
        if is_won(deal, position):
            return True, SLOTS, path_to(parents, position), len(parents), True
        removed = _removed(position)
        if removed > best:
            best, best_at = removed, position
        if prune and bound(position.present, position.left) <= min(max(best, floor), SLOTS - 1):
            continue  # (under the strict win a cleared pyramid is not yet a win: still cut what cannot clear it)
        if len(parents) >= budget or (not len(parents) % 1024 and time.perf_counter() > deadline):
            return None, best, path_to(parents, best_at), len(parents), False
        for move, after in reversed(moves(deal, position)):
            if after not in parents:
                parents[after] = (position, move)
                stack.append(after)
    return False, best, path_to(parents, best_at), len(parents), True


def _shortest(deal: Deal, start: Position, budget: int) -> list[Move] | None:
    """Breadth first over full positions (every draw counts): a winning line with the fewest moves."""
    parents: dict[Position, tuple[Position, Move] | None] = {start: None}
    bound = Bounds(deal).removable
    frontier = deque([start])
    while frontier:
        position = frontier.popleft()
        if is_won(deal, position):
            return path_to(parents, position)
        for move, after in moves(deal, position):
            if after in parents or bound(after.present, after.left) < SLOTS:
                continue
            parents[after] = (position, move)
            if len(parents) >= budget:
                return None
            frontier.append(after)
    return None


def expand(game: Game, line: list[Move]) -> list[Move]:
    """Turn a pool-model line into engine moves: before each removal that uses a stock or waste card, draw and
    turn over until that card is the waste top. Other lines come back unchanged."""
    replay, expanded = game.copy(), list[Move]()
    for move in line:
        cards = move.cards if isinstance(move, RemovePair) else (move.card,) if isinstance(move, RemoveKing) else ()
        for card in (c for c in cards if replay.slots[c] < 0):
            for _ in range(2 * 26):
                if replay.waste_top == card:
                    break
                step: Move = DRAW if replay.stock else RECYCLE
                replay.play(step)
                expanded.append(step)
        replay.play(move)
        expanded.append(move)
    return expanded


def solve(
    game: Game, *, budget: int = DEFAULT_BUDGET, shortest: bool = False, time_limit_s: float | None = None
) -> Analysis:
    """Analyse ``game`` from its current position under its own rules, within ``budget`` positions and, if given,
    ``time_limit_s`` seconds (past either the answer is unknown, never a guess)."""
    started = time.perf_counter()
    deadline = started + time_limit_s if time_limit_s is not None else float("inf")
    deal, start = from_game(game)
    if deal.pool:
        pool = PoolSearch(deal.pyramid, deal.order, deal.rules.cover_pairs, deal.rules.strict_win)

        def explore(budget: int, floor: int) -> tuple[bool | None, int, list[Move], int, bool]:
            return pool.explore(start.present, start.left, budget, deadline, floor=floor)
    else:

        def explore(budget: int, floor: int) -> tuple[bool | None, int, list[Move], int, bool]:
            return _explore(deal, start, budget, deadline, floor=floor)

    # The pool search finds the most removable in one pass as fast as two; the full search first asks whether the
    # deal can be won at all, cutting every position that cannot clear the pyramid: far fewer positions to prove
    # a loss, which the limited turn-overs and stock–waste pairing make expensive.
    won, best, line, states, exhausted = explore(budget, -1 if deal.pool else SLOTS - 1)
    if exhausted and not won and best < SLOTS and not deal.pool:
        # It cannot: now the most removable, a second search cutting what cannot beat the best seen so far.
        _, best_again, line_again, more, exhausted = explore(budget - states, best)
        states += more
        if best_again > best:
            best, line = best_again, line_again
        won = False
    winnable = won
    max_removable = best if exhausted or won else None
    shortest_line = None
    if shortest and won:
        full_deal, full_start = from_game(game, pooled=False)
        shortest_line = _shortest(full_deal, full_start, budget)
    return Analysis(
        winnable=winnable,
        max_removable=max_removable,
        line=expand(game, line) if deal.pool else line,
        states=states,
        elapsed_ms=(time.perf_counter() - started) * 1000,
        best_found=best,
        shortest=shortest_line,
    )
