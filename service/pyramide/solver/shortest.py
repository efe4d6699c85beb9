"""Shortest winning lines under unlimited turn-overs without stock–waste pairing (the app's rules among them).

Moves count as the rules count them: removals, draws and turn-overs. Without stock–waste pairing a draw does
nothing but move the stock forward, so a line is its removals plus the draws and turn-overs that bring each stock
or waste card it uses to the top, and the fewest of those are known in advance: draw up to the card if it lies
ahead; if it lies behind and is not on top, draw the rest, turn over, and draw up to it. The search is therefore A*
over the positions where removals happen, each step a removal with the draws it needs (its cost), instead of a
breadth-first search through every draw; a king outside the pyramid may be removed too, as taking one off the
waste uncovers the card beneath it without a turn-over. The estimate never overestimates, so the first win taken
off the queue is a shortest one: every king left in the pyramid takes a removal, and in each class of values that
make 13 (A+Q, 2+J, …) a removal takes at most two cards, both from the pyramid only if neither lies on the other
(or, with covering-card pairs, one lies directly on the other): with ``a`` and ``b`` pyramid cards of the two
values and at most ``m`` such pairs (a maximum matching), the class takes at least ``a + b - m`` removals; the
``a - m`` and ``b - m`` cards left over need stock or waste cards of the partner value on top: those the waste
holds may be uncovered by removals, the rest must be drawn, so the stock must be drawn at least as far as the last
of the nearest ones. Among states of equal estimate the one furthest along is taken first. Positions that cannot
clear the pyramid are cut with the bound of :mod:`pyramide.solver.bounds`.
"""

from __future__ import annotations

import heapq
import itertools
import time

from pyramide.engine.moves import DRAW, RECYCLE, Move, RemoveKing, RemovePair
from pyramide.engine.pyramid import SLOTS, free_slots
from pyramide.solver.bounds import Bounds, pyramid_pairs
from pyramide.solver.position import Deal, Position

KING = 13
State = tuple[int, int, int]  # pyramid mask, remaining stock and waste cards, how far drawn


def shortest_line(deal: Deal, start: Position, budget: int, deadline: float) -> list[Move] | None:
    """A winning line with the fewest moves from ``start``, or ``None`` when there is none or the budget of
    positions or the deadline ran out first."""
    bounds = Bounds(deal)
    bound = bounds.removable
    estimate = _Estimate(bounds)
    first: State = (start.present, start.left, start.drawn)
    cost: dict[State, int] = {first: 0}
    parents: dict[State, tuple[State, Move, int] | None] = {first: None}
    tie = itertools.count()
    queue = [(estimate(first), 0, next(tie), first)]
    while queue:
        _, negative_spent, _, state = heapq.heappop(queue)
        spent = -negative_spent
        if spent > cost[state]:
            continue
        present, left, _ = state
        if present == 0 and (not deal.rules.strict_win or left == 0):
            return _line(parents, state)
        if len(cost) >= budget or (not len(cost) % 1024 and time.perf_counter() > deadline):
            return None
        for moves, move, index, after in _steps(deal, state):
            total = spent + moves
            if total < cost.get(after, total + 1) and bound(after[0], after[1]) == SLOTS:
                cost[after], parents[after] = total, (state, move, index)
                heapq.heappush(queue, (total + estimate(after), -total, next(tie), after))
    return None


class _Estimate:
    """At least how many moves clear the pyramid from a state: removals, and the draws to the nearest card of each
    value the pyramid needs from outside (see the module's docstring)."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds, self.order_masks = bounds, bounds.order_masks
        self.inside: dict[int, tuple[int, tuple[tuple[int, int], ...]]] = {}

    def __call__(self, state: State) -> int:
        present, left, drawn = state
        removals, needed = self._inside(present)
        if not needed:
            return removals
        waste = left & ((1 << drawn) - 1)
        stock = left ^ waste
        furthest = 0
        for value, count in needed:
            of_value = self.order_masks[value]
            short = count - (waste & of_value).bit_count()  # cards in the waste may be uncovered by removals: free
            cards = stock & of_value
            while short > 0 and cards:  # the nearest ones in the stock must be drawn
                nearest = cards & -cards
                cards ^= nearest
                short -= 1
                furthest = max(furthest, nearest)
        if not furthest:
            return removals
        return removals + (stock & ((furthest << 1) - 1)).bit_count()  # the stock must be drawn at least this far

    def _inside(self, present: int) -> tuple[int, tuple[tuple[int, int], ...]]:
        known = self.inside.get(present)
        if known is None:
            counts, slots_of_value = self.bounds.pyramid(present)
            pairs = pyramid_pairs(slots_of_value, self.bounds.cover_pairs)
            removals = counts[KING] + sum(counts[v] + counts[KING - v] - pairs[v] for v in range(1, 7))
            needed = tuple(
                (KING - v, counts[v] - pairs[min(v, KING - v)])
                for v in range(1, KING)
                if counts[v] > pairs[min(v, KING - v)]
            )
            known = self.inside[present] = (removals, needed)
        return known


def _steps(deal: Deal, state: State) -> list[tuple[int, Move, int, State]]:
    """Every removal from ``state`` with how many moves it takes (the draws and turn-overs it needs first, and
    itself), the move, the index of the stock or waste card it takes (-1: none), and the state it leads to. A king
    outside the pyramid may go too: taking one off the waste uncovers the card beneath without a turn-over."""
    present, left, drawn = state
    result: list[tuple[int, Move, int, State]] = [
        (1, move, -1, (after, left, drawn)) for move, after in deal.inside(present)
    ]
    pyramid_values, order_values = deal.pyramid_values, deal.order_values
    wanted: dict[int, list[int]] = {}
    for slot in free_slots(present):
        wanted.setdefault(KING - pyramid_values[slot], []).append(slot)
    rest = left
    while rest:
        low = rest & -rest
        rest ^= low
        index = low.bit_length() - 1
        value = order_values[index]
        slots = wanted.get(value, ())
        if not slots and value != KING:
            continue
        reach, after_drawn = _reach(left, drawn, index)
        remaining = left & ~low
        card = deal.order[index]
        if value == KING:
            result.append((reach + 1, RemoveKing(card), index, (present, remaining, after_drawn)))
        for slot in slots:
            move = RemovePair(deal.pyramid[slot], card)
            result.append((reach + 1, move, index, (present & ~(1 << slot), remaining, after_drawn)))
    return result


def _reach(left: int, drawn: int, index: int) -> tuple[int, int]:
    """How many draws and turn-overs make the card at ``index`` the waste top (the fewest), and how far drawn then."""
    waste = left & ((1 << drawn) - 1)
    if index < drawn and waste.bit_length() - 1 == index:
        return 0, drawn
    upto = (1 << (index + 1)) - 1
    if index >= drawn:
        return (left & upto & ~((1 << drawn) - 1)).bit_count(), index + 1
    return (left >> drawn).bit_count() + 1 + (left & upto).bit_count(), index + 1


def _bring_to_top(left: int, drawn: int, index: int) -> tuple[Move, ...]:
    """The moves of :func:`_reach`: draws up to the card, or the rest of the stock, a turn-over, and draws to it."""
    if index < 0:
        return ()
    if index >= drawn:
        return (DRAW,) * _reach(left, drawn, index)[0]
    count = _reach(left, drawn, index)[0]
    if not count:
        return ()
    ahead = (left >> drawn).bit_count()
    return (DRAW,) * ahead + (RECYCLE,) + (DRAW,) * (count - ahead - 1)


def _line(parents: dict[State, tuple[State, Move, int] | None], state: State) -> list[Move]:
    line: list[Move] = []
    step = parents[state]
    while step is not None:
        state, move, index = step
        line[:0] = (*_bring_to_top(state[1], state[2], index), move)
        step = parents[state]
    return line
