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
of the nearest ones. A waste card other than a king leaves only with a pyramid card of the partner value, so
where a value's cards, from the top of the waste down, outnumber the pyramid's partners for it, one of them stays
until the next turn-over, and so does every card beneath: those are not counted as uncoverable, and when the
pyramid needs more of a value than the stock and the rest of the waste hold, the estimate adds the whole stock, the
turn-over and the draws up to the nearest such card after it. A free king in the pyramid, or two free cards that
are each other's last partner, is removed at once without trying anything else (some shortest line does so). Among
states of equal estimate the one furthest along is taken first. Positions that cannot clear the pyramid are cut
with the bound of :mod:`pyramide.solver.bounds` when they come off the queue.
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass

from pyramide.engine.cards import KING_VALUE as KING
from pyramide.engine.moves import DRAW, RECYCLE, Move, RemoveKing, RemovePair
from pyramide.engine.pyramid import SLOTS, free_slots
from pyramide.solver.bounds import Bounds, pyramid_pairs
from pyramide.solver.collector import collector_paused
from pyramide.solver.position import Deal, Position, last_partners

State = tuple[int, int, int]  # pyramid mask, remaining stock and waste cards, how far drawn


def shortest_line(deal: Deal, start: Position, budget: int, deadline: float) -> list[Move] | None:
    """A winning line with the fewest moves from ``start``, or ``None`` when there is none or the budget of
    positions or the deadline ran out first."""
    with collector_paused():
        return _a_star(deal, start, budget, deadline)


def _a_star(deal: Deal, start: Position, budget: int, deadline: float) -> list[Move] | None:
    bounds = Bounds(deal)
    bound = bounds.removable
    estimate = _Estimate(bounds).of  # a bound method: calling the instance itself costs more
    shapes = _Shapes(deal)
    first: State = (start.present, start.left, start.drawn)
    reached: dict[State, Reached] = {first: (0, None)}
    tie = itertools.count()
    queue = [(estimate(first), 0, next(tie), first)]
    pop, push, steps, strict = heapq.heappop, heapq.heappush, shapes.steps, deal.rules.strict_win
    while queue:
        _, negative_spent, _, state = pop(queue)
        spent = -negative_spent
        if spent > reached[state][0]:
            continue
        present, left, _ = state
        if present == 0 and (not strict or left == 0):
            return _line(deal, reached, state)
        if len(reached) >= budget or (not len(reached) % 1024 and time.perf_counter() > deadline):
            return None
        if bound(present, left) < SLOTS:  # checked when taken, not when queued: most queued states never are
            continue
        for step in steps(state):
            after = step[4]
            total = spent + step[0]
            known = reached.get(after)
            if known is None or total < known[0]:
                reached[after] = (total, (state, step))
                push(queue, (total + estimate(after), -total, next(tie), after))
    return None


class _Estimate:
    """At least how many moves clear the pyramid from a state: removals, and the draws to the nearest card of each
    value the pyramid needs from outside (see the module's docstring)."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds, self.order_masks = bounds, bounds.order_masks
        self.inside: dict[int, tuple[int, tuple[tuple[int, int], ...], int]] = {}
        self.stuck_known = bounds.stuck_known  # looked up here first: a call costs more than a look-up

    def of(self, state: State) -> int:
        present, left, drawn = state
        removals, needed, partners = self.inside.get(present) or self._inside(present)
        if not needed:
            return removals
        waste = left & ((1 << drawn) - 1)
        stock = left ^ waste
        stuck = self.stuck_known.get(partners << 32 | waste, -1) if waste else 0
        if stuck < 0:
            stuck = self.bounds.stuck_with(partners, waste)
        free = waste ^ stuck
        furthest = after_turn = 0
        for of_value, count in needed:
            short = count - (free & of_value).bit_count()  # free waste cards may be uncovered by removals
            if short <= 0:
                continue
            cards = stock & of_value
            have = cards.bit_count()
            if have >= short:  # the nearest ones in the stock must be drawn
                if short > 1:
                    cards = _drop_lowest(cards, short - 1)
                nearest = cards & -cards
                if nearest > furthest:  # noqa: PLR1730 - the estimate runs for every state queued; max() costs more
                    furthest = nearest
                continue
            cards = stuck & of_value  # the rest only after a turn-over
            if short - have > 1:
                cards = _drop_lowest(cards, short - have - 1)
            wanted = cards & -cards
            if wanted:
                through = (stuck & ((wanted << 1) - 1)).bit_count()
                if through > after_turn:  # noqa: PLR1730 - as above
                    after_turn = through
        if after_turn:
            return removals + stock.bit_count() + 1 + after_turn  # the whole stock, the turn-over, then the draws
        if not furthest:
            return removals
        return removals + (stock & ((furthest << 1) - 1)).bit_count()  # the stock must be drawn at least this far

    def _inside(self, present: int) -> tuple[int, tuple[tuple[int, int], ...], int]:
        """For a pyramid: the fewest removals it takes, how many cards of each value it needs from outside (by the
        mask of the outside positions holding that value), and its waste partners (:meth:`Bounds.partners`)."""
        known = self.inside.get(present)
        if known is None:
            counts, slots_of_value = self.bounds.pyramid(present)
            pairs = pyramid_pairs(slots_of_value, self.bounds.cover_pairs)
            removals = counts[KING] + sum(counts[v] + counts[KING - v] - pairs[v] for v in range(1, 7))
            needed = tuple(
                (self.order_masks[KING - v], counts[v] - pairs[min(v, KING - v)])
                for v in range(1, KING)
                if counts[v] > pairs[min(v, KING - v)]
            )
            known = self.inside[present] = (removals, needed, self.bounds.partners(present))
        return known


def _drop_lowest(cards: int, count: int) -> int:
    """The mask ``cards`` without its ``count`` lowest cards."""
    for _ in range(count):
        cards &= cards - 1
    return cards


Step = tuple[int, Move | None, int, int, State]
"""A removal: the moves it takes (the draws and turn-overs it needs first, and itself), the move (``None`` for one
with a stock or waste card, made only for the line found), the pyramid slot and the stock or waste index of the
card it takes (-1: none), and the state it leads to."""


Reached = tuple[int, tuple[State, Step] | None]
"""How a state was reached the cheapest way known: the moves it took, and the state and step before (none: the
start)."""


@dataclass(frozen=True, slots=True)
class _Shape:
    """What the steps need of one pyramid, worked out once: its removals inside it, a free king's, its pairs with
    the value of one of their cards, and the free slots that each value outside would pair with."""

    inside: tuple[tuple[Move, int], ...]
    king: tuple[Move, int] | None
    pairs: tuple[tuple[Move, int, int], ...]
    wanted: dict[int, tuple[int, ...]]
    useful: int
    """The positions outside the pyramid whose cards could be removed with it: kings and the wanted values."""


class _Shapes:
    def __init__(self, deal: Deal) -> None:
        self.deal = deal
        self.known: dict[int, _Shape] = {}

    def shape(self, present: int) -> _Shape:
        known = self.known.get(present)
        if known is None:
            known = self.known[present] = self._shape(present)
        return known

    def _shape(self, present: int) -> _Shape:
        deal, values = self.deal, self.deal.pyramid_values
        inside = deal.inside(present)
        king = next(((m, a) for m, a in inside if isinstance(m, RemoveKing)), None)
        pairs = tuple((m, a, values[(present ^ a).bit_length() - 1]) for m, a in inside if isinstance(m, RemovePair))
        wanted: dict[int, list[int]] = {}
        for slot in free_slots(present):
            wanted.setdefault(KING - values[slot], []).append(slot)
        useful = deal.order_masks[KING]
        for value in wanted:
            useful |= deal.order_masks[value]
        return _Shape(inside, king, pairs, {v: tuple(s) for v, s in wanted.items()}, useful)

    def steps(self, state: State) -> list[Step]:
        """Every removal from ``state`` (see :data:`Step`). A king outside the pyramid may go too: taking one off
        the waste uncovers the card beneath without a turn-over."""
        present, left, drawn = state
        shape = self.shape(present)
        forced = self._forced(shape, present, left)
        if forced is not None:
            return [(1, forced[0], -1, -1, (forced[1], left, drawn))]
        result: list[Step] = [(1, move, -1, -1, (after, left, drawn)) for move, after in shape.inside]
        order_values, wanted = self.deal.order_values, shape.wanted
        below = (1 << drawn) - 1
        top = (left & below).bit_length() - 1
        to_turn_over = (left >> drawn).bit_count() + 1
        rest = left & shape.useful
        while rest:  # the moves of _reach, worked out here: this runs for every card of every state taken
            low = rest & -rest
            rest ^= low
            index = low.bit_length() - 1
            value = order_values[index]
            slots = wanted.get(value, ())
            remaining = left ^ low
            if index == top:
                reach, after_drawn = 0, (remaining & below).bit_length()
            else:
                upto = (low << 1) - 1
                reach = (
                    (left & upto & ~below).bit_count() if index >= drawn else to_turn_over + (left & upto).bit_count()
                )
                after_drawn = (remaining & upto).bit_length()  # one name for one waste
            if value == KING:
                result.append((reach + 1, None, -1, index, (present, remaining, after_drawn)))
            for slot in slots:
                result.append((reach + 1, None, slot, index, (present & ~(1 << slot), remaining, after_drawn)))
        return result

    def _forced(self, shape: _Shape, present: int, left: int) -> tuple[Move, int] | None:
        """A removal inside the pyramid that some shortest line makes now, if there is one: a free king, or two
        free cards that are each other's last partner anywhere. Either must be made sooner or later, costs one
        move whenever it is made, and only frees cards: made at once, every other move of the line stays legal."""
        if shape.king is not None:
            return shape.king
        for move, after, value in shape.pairs:
            if last_partners(self.deal, present, left, value):
                return move, after
        return None


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


def _line(deal: Deal, reached: dict[State, Reached], state: State) -> list[Move]:
    line: list[Move] = []
    step = reached[state][1]
    while step is not None:
        state, (_, move, slot, index, _) = step
        if move is None:
            card = deal.order[index]
            move = RemoveKing(card) if slot < 0 else RemovePair(deal.pyramid[slot], card)
        line[:0] = (*_bring_to_top(state[1], state[2], index), move)
        step = reached[state][1]
    return line
