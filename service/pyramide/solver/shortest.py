"""Shortest winning lines under every rule set: the fewest moves (removals, draws and turn-overs) that win.

A* over the positions where removals happen, each step a removal with the draws and turn-overs it needs (its cost),
instead of a breadth-first search through every draw: a draw only moves the stock forward, so the fewest needed to
bring a card to the top are known in advance, and the searched space is the removals'. The estimate never
overestimates, so the first win taken off the queue is a shortest one. Why it never does, what a state holds and
which positions are cut: docs/solver.md, "Why the shortest line is shortest".
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final

from pyramide.engine.cards import KING_VALUE as KING
from pyramide.engine.moves import DRAW, RECYCLE, Move, RemoveKing, RemovePair
from pyramide.engine.pyramid import SLOTS, free_slots
from pyramide.solver.bounds import Bounds, pyramid_pairs
from pyramide.solver.collector import collector_paused
from pyramide.solver.position import (
    DRAWN_AT,
    FRESH_AT,
    ORDER,
    OUTSIDE,
    PRESENT_AT,
    RECYCLES_AT,
    Deal,
    KeyedInside,
    Position,
    cards_in,
    inside_afters,
    key_of,
    last_partners,
    position_of,
)
from pyramide.solver.twins import pair, partner_of, won


def shortest_line(deal: Deal, start: Position, budget: int, deadline: float) -> list[Move] | None:
    """A winning line with the fewest moves from ``start``, or ``None`` when there is none or the budget of
    positions or the deadline ran out first."""
    with collector_paused():
        return _a_star(deal, start, budget, deadline)


def _a_star(deal: Deal, start: Position, budget: int, deadline: float) -> list[Move] | None:
    """The search (:class:`_Search`)."""
    search = _Search(deal)
    return search.run(start, budget, deadline)


class _Sink:
    """Where :meth:`_Shapes.steps` puts each step it finds (:data:`STEP_SIZE`): a method of a compiled class, so
    that the step's integers reach it as they are, where a list would box each one and the search unbox it."""

    def add(self, cost: int, after: int, how: int) -> None:
        raise NotImplementedError


class _Listed(_Sink):
    """The steps of one state in a list, :data:`STEP_SIZE` integers each: for the line at the end."""

    def __init__(self) -> None:
        self.found: list[int] = []

    def add(self, cost: int, after: int, how: int) -> None:
        found = self.found
        found.append(cost)
        found.append(after)
        found.append(how)


class _Search(_Sink):
    """The A*. A state is kept as one integer (:func:`.position.key_of`), and so are the steps from it
    (:meth:`_Shapes.steps`, which hands each to :meth:`add`). Each state keeps the fewest moves known to reach it
    and the state before, in one number (:data:`SPENT_BITS`); the line is worked out again from those at the end.
    The estimate and the steps are called as methods of their objects: a native call, where a bound method is a
    Python call (every argument and answer boxed)."""

    def __init__(self, deal: Deal) -> None:
        self.deal = deal
        self.estimate = _Estimate(deal, Bounds(deal))
        self.shapes = _Shapes(deal)
        self.reached: dict[int, int] = {}
        self.queue = _Queue()
        self.key = 0
        """The state whose steps :meth:`add` is handed."""
        self.spent = 0
        """The moves spent to reach it."""

    def run(self, start: Position, budget: int, deadline: float) -> list[Move] | None:
        """A shortest winning line from ``start``; ``None`` when there is none, or past the budget or deadline."""
        deal, reached, queue = self.deal, self.reached, self.queue
        first_key = key_of(start_state(deal, start))
        reached[first_key] = first_key << SPENT_BITS  # the start is its own state before
        queue.push(self.estimate.of_key(first_key), 0, first_key)
        strict = deal.rules.strict_win
        while queue.size:
            spent, key = queue.pop()
            if spent > reached[key] & SPENT_MASK:
                continue
            if won(key >> PRESENT_AT, key & ORDER, strict):
                return _line(deal, self.shapes, reached, key)
            if len(reached) >= budget or (not len(reached) % 1024 and time.perf_counter() > deadline):
                return None
            self.key, self.spent = key, spent
            self.shapes.steps(key, self)
        return None

    def add(self, cost: int, after: int, how: int) -> None:  # noqa: ARG002 - read only for the line
        """A step from the state at hand: ``after`` is queued when it is new, or reached in fewer moves than
        before, and the estimate does not find it lost."""
        total = self.spent + cost
        known = self.reached.get(after)
        if known is None or total < known & SPENT_MASK:
            remaining = self.estimate.of_key(after)
            if remaining < DEAD:
                self.reached[after] = self.key << SPENT_BITS | total
                self.queue.push(total + remaining, total, after)


SPENT_BITS: Final = 10
SPENT_MASK: Final = (1 << SPENT_BITS) - 1
"""What the search keeps of a state: the state before it ``<< SPENT_BITS``, and the fewest moves known to reach it;
one number in one dictionary, as memory is what a long search runs out of."""


class _Queue:
    """The states waiting, by estimated total (smallest first), then moves spent (most first: the state furthest
    along), then last in, first out: a list of keys per total and moves spent. Totals and moves are small numbers,
    so a push and a pop take a few steps, and an entry is the state's key alone."""

    def __init__(self) -> None:
        self.buckets: list[list[list[int]]] = []
        """``buckets[total][spent]``: the keys queued with that estimated total and moves spent."""
        self.lowest = 0
        """No total below this has a key queued."""
        self.size = 0

    def push(self, total: int, spent: int, key: int) -> None:
        buckets = self.buckets
        while len(buckets) <= total:
            buckets.append([])
        by_spent = buckets[total]
        while len(by_spent) <= spent:
            by_spent.append([])
        by_spent[spent].append(key)
        self.lowest = min(self.lowest, total)
        self.size += 1

    def pop(self) -> tuple[int, int]:
        """The moves spent and the key of the next state; only while ``size`` is not 0."""
        buckets = self.buckets
        while True:
            by_spent = buckets[self.lowest]
            while by_spent:
                keys = by_spent[-1]
                if keys:
                    self.size -= 1
                    return len(by_spent) - 1, keys.pop()
                by_spent.pop()
            self.lowest += 1


def start_state(deal: Deal, start: Position) -> Position:
    """The search's state for a position: the turn-overs used count only under a limit, freshness only under
    stock–waste pairing. Kept by its key (:func:`.position.key_of`)."""
    rules = deal.rules
    used = 0 if rules.recycles is None else start.recycles
    fresh = start.fresh and rules.stock_waste_pairs
    return Position(start.present, start.left, start.drawn, used, fresh)


_Pyramid = tuple[int, tuple[tuple[int, int], ...], int, int]
"""What the estimate reads of a pyramid, in one lookup: the fewest removals it takes; how many cards of each value
it needs from outside (by the mask of the outside positions holding that value); the values its cards pair with
(:func:`_wanted`); the outside positions whose cards no pyramid card can take (:meth:`_Estimate._alone`)."""


class _Estimate:
    """At least how many moves clear the pyramid from a state: removals, and the cheapest way to bring each card the
    pyramid needs from outside to the top (see the module's docstring and :meth:`_draws`)."""

    def __init__(self, deal: Deal, bounds: Bounds) -> None:
        rules = deal.rules
        self.bounds, self.order_masks = bounds, bounds.order_masks
        self.cover_pairs = rules.cover_pairs
        self.clearings: dict[int, int] = {}
        self.clearing_steps: dict[int, tuple[int, ...]] = {}
        self.limit = rules.recycles
        self.inside: dict[int, _Pyramid] = {}
        self.strict = rules.strict_win
        self.strict_removals: dict[int, int] = {}

    def of(self, state: Position) -> int:
        return self.of_key(key_of(state))

    def of_key(self, key: int) -> int:
        """:meth:`of` the state of that key (:func:`.position.key_of`)."""
        present, left, drawn = key >> PRESENT_AT, key & ORDER, key >> DRAWN_AT & 31
        removals, needed, wanted, alone = self.inside.get(present) or self._inside(present)
        clearing = self._clearing(present, self.bounds.signature(left) & wanted)
        if clearing >= DEAD:
            return DEAD
        used = key >> RECYCLES_AT & 15
        flags = key >> FRESH_AT & 1 | (LAST_PASS if self.limit is not None and used >= self.limit else 0)
        if self.strict:
            return self._strict(present, left, drawn, needed, flags, clearing, wanted)
        removals = max(removals, clearing)
        if not needed:
            return removals
        return removals + self._draws(present, left, drawn, needed, flags, alone, wanted)

    def _clearing(self, present: int, signature: int) -> int:
        """The fewest removals that clear ``present`` when any card of a value in ``signature`` (the values left
        outside) may be brought whenever it is wanted: a king alone, a pair inside the pyramid, or a free card with
        an outside partner; each step only on free cards, in an order the pyramid allows (:data:`DEAD` when no order
        clears it). Stronger than the matching count of :meth:`_inside`, which lets any two cards that do not lie on
        each other pair at once, whatever must go before them. Kept per signature and pyramid: there are at most
        1,430 pyramids. Each step's pyramid reads only the values its cards pair with (and bit 0, which keeps a
        pyramid without such values from reading as none), so pyramids share their counts across signatures."""
        if not present:
            return 0
        key = signature << SLOTS | present
        known = self.clearings.get(key)
        if known is not None:
            return known
        best = DEAD
        steps = self.clearing_steps.get(present) or self._clearing_steps(present)
        for at in range(0, len(steps), 3):
            allowed = steps[at]
            if not allowed or signature & allowed:
                best = min(best, self._clearing(steps[at + 1], signature & steps[at + 2]))
        best = best + 1 if best < DEAD else DEAD
        self.clearings[key] = best
        return best

    def _clearing_steps(self, present: int) -> tuple[int, ...]:
        """The steps :meth:`_clearing` takes from ``present``, three integers each, worked out once per pyramid:
        the values that allow it (0 for a removal inside the pyramid, which needs none; the free card's partner
        value for one with an outside partner), the pyramid it leaves, and the values that pyramid reads."""
        steps: list[int] = []
        values = self.bounds.pyramid_values
        for after in inside_afters(values, present, self.cover_pairs):
            steps += (0, after, self._wanted_by(after))
        for slot in free_slots(present):
            after = present & ~(1 << slot)
            steps += (1 << partner_of(values[slot]), after, self._wanted_by(after))
        known = self.clearing_steps[present] = tuple(steps)
        return known

    def _wanted_by(self, present: int) -> int:
        """:func:`_wanted` of a pyramid, read off its mask."""
        wanted, masks = 1, self.bounds.pyramid_masks
        for value in range(1, KING):
            if present & masks[value]:
                wanted |= 1 << partner_of(value)
        return wanted

    def _strict(  # noqa: PLR0917 - the state's parts, as the hot path has them
        self,
        present: int,
        left: int,
        drawn: int,
        needed: tuple[tuple[int, int], ...],
        flags: int,
        clearing: int,
        wanted: int,
    ) -> int:
        """Under the strict win: removals for every card left (digging costs nothing more), at least every stock
        card drawn, and if some waste cards stay there until the next turn-over (:meth:`_stuck`), that turn-over
        and the draws back through them."""
        counts, _, kind, _ = self.bounds.outside(left)
        key = kind << SLOTS | present
        total = self.strict_removals.get(key)
        if total is None:
            counts_inside, slots_of_value = self.bounds.pyramid(present)
            pairs = pyramid_pairs(slots_of_value, self.bounds.cover_pairs)
            total = counts_inside[KING] + counts[KING]
            for v in range(1, 7):
                a, b = counts_inside[v], counts_inside[partner_of(v)]
                total += max(a + counts[v], b + counts[partner_of(v)], a + b - pairs[v])
            self.strict_removals[key] = total
        total = max(total, clearing)
        waste = left & ((1 << drawn) - 1)
        stock = left ^ waste
        floor = cards_in(stock)
        stuck = self._stuck(present, waste, stock, flags & FRESH, wanted)
        if stuck:  # they must leave too: only after a turn-over, and drawn again
            if flags & LAST_PASS:
                return DEAD
            floor += 1 + cards_in(stuck)
        draws = self._costliest(left, stock, stuck, needed, flags, 0) if needed else 0
        return total + (draws if draws > floor else floor)

    def _draws(  # noqa: PLR0917 - the state's parts, as the hot path has them
        self,
        present: int,
        left: int,
        drawn: int,
        needed: tuple[tuple[int, int], ...],
        flags: int,
        alone: int,
        wanted: int,
    ) -> int:
        """At least how many more moves than the pyramid's removals bring the cards it needs from outside to the
        top (:data:`DEAD` when that cannot be done). Each card needed from outside must come to the top at some
        point, the way that costs least: a stock card by drawing up to it; a waste card by removing every card
        above it, which costs a move of its own for each card that no pyramid card can take (``alone``: kings and
        values without a partner left in the pyramid), or by drawing the rest of the stock, turning over and
        drawing up to it past the waste cards that stay until then (:meth:`_stuck`). The ``count`` cheapest cards of
        a value needed ``count`` times cost at least the dearest of them. Not kept: it reads the cards left and how
        far drawn, which few states share."""
        waste = left & ((1 << drawn) - 1)
        stock = left ^ waste
        stuck = self._stuck(present, waste, stock, flags & FRESH, wanted)
        return self._costliest(left, stock, stuck, needed, flags, alone & waste)

    def _costliest(  # noqa: PLR0917 - the state's parts, as the hot path has them
        self, left: int, stock: int, stuck: int, needed: tuple[tuple[int, int], ...], flags: int, alone: int
    ) -> int:
        """The dearest of the cards :meth:`_draws` must bring to the top. For a value needed once or twice the
        cheapest one or two are kept as they come (no list to sort: this runs for every state queued)."""
        turn = DEAD if flags & LAST_PASS else cards_in(stock) + 1
        most = 0
        for of_value, count in needed:
            cards = left & of_value
            if cards_in(cards) < count:
                return DEAD
            first = second = UNREACHED
            costs: list[int] = [] if count > 2 else NO_COSTS  # no list made for each value of each state
            while cards:
                low = cards & -cards
                cards ^= low
                upto = (low << 1) - 1
                if low & stock:
                    cost = cards_in(stock & upto)
                else:
                    cost = turn + cards_in(left & upto)  # after a turn-over: the cards beneath it stay while it does
                    if not low & stuck:
                        above = cards_in(alone & ~upto)
                        if above and flags & FRESH:
                            above -= 1  # the fresh top may take the card beneath it with it
                        cost = min(above, cost)
                if count > 2:
                    costs.append(cost)
                elif cost < first:
                    first, second = cost, first
                elif cost < second:
                    second = cost
            dearest = first if count == 1 else second if count == 2 else sorted(costs)[count - 1]
            most = max(most, dearest)
        return most

    def _alone(self, counts: tuple[int, ...]) -> int:
        """The outside positions whose cards no pyramid card can take, for a pyramid of these ``counts`` of each
        value: kings, and values whose partners have all left the pyramid. Such a card leaves the waste only by a
        move that removes no pyramid card."""
        alone = self.order_masks[KING]
        for value in range(1, KING):
            if not counts[partner_of(value)]:
                alone |= self.order_masks[value]
        return alone

    def _stuck(self, present: int, waste: int, stock: int, fresh: int, wanted: int) -> int:
        """The waste cards that stay there until the next turn-over (:meth:`Bounds.blocked`), for a pyramid whose
        cards pair with the values of ``wanted``."""
        return self.bounds.blocked(present, waste, stock, fresh, wanted) if waste else 0

    def _inside(self, present: int) -> _Pyramid:
        """What the estimate reads of a pyramid (:data:`_Pyramid`), worked out once."""
        known = self.inside.get(present)
        if known is None:
            counts, slots_of_value = self.bounds.pyramid(present)
            pairs = pyramid_pairs(slots_of_value, self.bounds.cover_pairs)
            removals = counts[KING] + sum(counts[v] + counts[partner_of(v)] - pairs[v] for v in range(1, 7))
            needed = tuple(
                (self.order_masks[partner_of(v)], counts[v] - pairs[min(v, partner_of(v))])
                for v in range(1, KING)
                if counts[v] > pairs[min(v, partner_of(v))]
            )
            known = self.inside[present] = (removals, needed, _wanted(counts), self._alone(counts))
        return known


def _wanted(counts: tuple[int, ...]) -> int:
    """Bit ``v`` for each value ``v`` some card of a pyramid with these ``counts`` of each value pairs with, and
    bit 0 (:meth:`_Estimate._clearing`)."""
    wanted = 1
    for value in range(1, KING):
        if counts[value]:
            wanted |= 1 << partner_of(value)
    return wanted


def _drop_lowest(cards: int, count: int) -> int:
    """The mask ``cards`` without its ``count`` lowest cards."""
    for _ in range(count):
        cards &= cards - 1
    return cards


STEP_SIZE: Final = 3
"""A step (a removal) is three integers in the list :meth:`_Shapes.steps` returns: the moves it takes (the draws
and turn-overs it needs first, and itself), the key of the state it leads to (:func:`.position.key_of`), and how it
is made (``how``, read only for the line found): ``INSIDE | i`` for the pyramid's ``i``-th removal
(:meth:`Deal.inside`); else the pyramid slot the stock or waste card pairs with plus 2 (1: none, a king; 0,
:data:`WITH_BENEATH`: the waste card beneath it), the card's stock or waste index ``<< 6``, and ``AROUND`` when the
card is brought to the top by going round the stock although it is on top already (to draw it fresh)."""
INSIDE: Final = 1 << 12
AROUND: Final = 1 << 11

WITH_BENEATH: Final = -2
FRESH: Final = 1
LAST_PASS: Final = 2
"""The estimate's flags: the top was just drawn; no turn-over is left."""
DEAD: Final = 1_000
"""The estimate of a state that can no longer win: far above any line (A* takes it last, if ever)."""
NO_COSTS: Final[list[int]] = []
"""The list :meth:`_Estimate._costliest` leaves empty for a value needed once or twice."""
UNREACHED: Final = 1 << 20
"""Above any cost :meth:`_Estimate._costliest` counts (one through a turn-over that is not left is :data:`DEAD` and
more)."""


@dataclass(frozen=True, slots=True)
class _Shape:
    """What the steps need of one pyramid, worked out once: its removals inside it (:meth:`Deal.keyed_inside`),
    and the free slots that each value outside would pair with."""

    inside: KeyedInside
    wanted: dict[int, tuple[int, ...]]
    useful: int
    """The positions outside the pyramid whose cards could be removed with it: kings and the wanted values."""


class _Shapes:
    def __init__(self, deal: Deal) -> None:
        self.deal = deal
        self.known: dict[int, _Shape] = {}
        self.limit = deal.rules.recycles
        self.waste_pairs = int(deal.rules.stock_waste_pairs)
        self.on_beneath: dict[int, int] = {}

    def shape(self, present: int) -> _Shape:
        known = self.known.get(present)
        if known is None:
            known = self.known[present] = self._shape(present)
        return known

    def _shape(self, present: int) -> _Shape:
        deal, values = self.deal, self.deal.pyramid_values
        inside = deal.keyed_inside(present)
        wanted: dict[int, list[int]] = {}
        for slot in inside[3]:
            wanted.setdefault(partner_of(values[slot]), []).append(slot)
        useful = deal.order_masks[KING]
        for value in wanted:
            useful |= deal.order_masks[value]
        return _Shape(inside, {v: tuple(s) for v, s in wanted.items()}, useful)

    def steps(self, key: int, sink: _Sink) -> None:
        """Every removal from the state ``key`` (:func:`.position.key_of`), as :data:`STEP_SIZE` integers each: inside
        the pyramid; a stock or waste card brought to the top with a free pyramid card, alone if a king (taking one off
        the waste uncovers the card beneath without a turn-over), or under stock–waste pairing, fresh, with the card
        beneath it. Integers, not tuples of moves and states, each step handed to ``sink`` as it is found: this runs for
        every state taken."""
        present, left = key >> PRESENT_AT, key & ORDER
        shape = self.shape(present)
        outside = key & OUTSIDE
        forced = self._forced(shape, present, left)
        if forced >= 0:
            sink.add(1, outside | shape.inside[2][forced] << PRESENT_AT, INSIDE | forced)
            return
        for i, after in enumerate(shape.inside[2]):
            sink.add(1, outside | after << PRESENT_AT, INSIDE | i)
        self._with_outside(key, shape, sink)

    def _with_outside(self, key: int, shape: _Shape, sink: _Sink) -> None:
        """The steps of :meth:`steps` with a stock or waste card, handed to ``sink``."""
        pyramid, left = key >> PRESENT_AT << PRESENT_AT, key & ORDER
        drawn, used, fresh = key >> DRAWN_AT & 31, key >> RECYCLES_AT & 15, key >> FRESH_AT & 1
        values, wanted, limit, waste_pairs = self.deal.order_values, shape.wanted, self.limit, self.waste_pairs
        below = (1 << drawn) - 1
        top = (left & below).bit_length() - 1
        to_turn_over = cards_in(left >> drawn) + 1
        turned = used if limit is None else used + 1
        can_turn = limit is None or used < limit
        on_beneath = (self.on_beneath.get(left, -1) if waste_pairs else 0) or 0
        if on_beneath < 0:
            on_beneath = self._on_beneath(left)
        rest = left & shape.useful | on_beneath
        while rest:  # this runs for every card of every state taken: kept lean
            low = rest & -rest
            rest ^= low
            index = low.bit_length() - 1
            upto = (low << 1) - 1
            if index == top:
                cost, now_used, now_fresh = 1, used, fresh
            elif index >= drawn:
                cost, now_used, now_fresh = cards_in(left & upto & ~below) + 1, used, waste_pairs
            elif can_turn:
                cost, now_used, now_fresh = to_turn_over + cards_in(left & upto) + 1, turned, waste_pairs
            else:
                continue  # behind, and no turn-over left to reach it
            remaining = left ^ low
            after_drawn = (remaining & upto).bit_length()  # one name for one waste
            taken = pyramid | remaining | after_drawn << DRAWN_AT | now_used << RECYCLES_AT  # not fresh after a removal
            value = values[index]
            if value == KING:
                sink.add(cost, taken, 1 | index << 6)
            for slot in wanted.get(value, ()):
                sink.add(cost, taken ^ 1 << PRESENT_AT + slot, slot + 2 | index << 6)
            if low & on_beneath:
                around = not now_fresh
                if around:  # a top not drawn fresh: round the stock to draw it again, if a turn-over is left
                    if index != top or not can_turn:
                        continue
                    cost, now_used = to_turn_over + cards_in(left & upto) + 1, turned
                rest_after = remaining ^ (1 << (left & (low - 1)).bit_length() - 1)
                after = pyramid | rest_after | (rest_after & upto).bit_length() << DRAWN_AT | now_used << RECYCLES_AT
                sink.add(cost, after, index << 6 | (AROUND if around else 0))

    def _on_beneath(self, left: int) -> int:
        """The cards of ``left`` that pair with the card left directly before them (beneath them, once both are in
        the waste): the stock–waste pairs these cards could ever make."""
        values, found, previous, rest = self.deal.order_values, 0, -1, left
        while rest:
            low = rest & -rest
            rest ^= low
            index = low.bit_length() - 1
            if previous >= 0 and pair(values[previous], values[index]):
                found |= low
            previous = index
        self.on_beneath[left] = found
        return found

    def _forced(self, shape: _Shape, present: int, left: int) -> int:
        """Which of the removals inside the pyramid some shortest line makes now, if one (-1: none): a free king, or
        two free cards that are each other's last partner anywhere. Either must be made sooner or later, costs one
        move whenever it is made, and only frees cards: made at once, every other move of the line stays legal."""
        king, pairs = shape.inside[0], shape.inside[1]
        if king >= 0:
            return king
        for i, value in pairs:
            if last_partners(self.deal, present, left, value):
                return i
        return -1


def _bring_to_top(left: int, drawn: int, index: int, around: bool) -> tuple[Move, ...]:
    """The draws and turn-overs of a step: none for the card on top; draws up to a card ahead; else (or going round
    for a top to draw fresh) the rest of the stock, a turn-over, and draws up to it."""
    if index < 0:
        return ()
    below = (1 << drawn) - 1
    upto = (2 << index) - 1
    if not around and index == (left & below).bit_length() - 1:
        return ()
    if not around and index >= drawn:
        return (DRAW,) * cards_in(left & upto & ~below)
    return (DRAW,) * cards_in(left >> drawn) + (RECYCLE,) + (DRAW,) * cards_in(left & upto)


def _line(deal: Deal, shapes: _Shapes, reached: dict[int, int], key: int) -> list[Move]:
    """The line to the state ``key``: back through the states before it, each step found again among the steps of
    the state before (the one that leads to it at the cost it took), and made into moves (see :data:`STEP_SIZE`)."""
    line: list[Move] = []
    while reached[key] >> SPENT_BITS != key:
        previous = reached[key] >> SPENT_BITS
        state = position_of(previous)
        cost = (reached[key] & SPENT_MASK) - (reached[previous] & SPENT_MASK)
        listed = _Listed()
        shapes.steps(previous, listed)
        found = listed.found
        how = next(found[at + 2] for at in range(0, len(found), STEP_SIZE) if found[at : at + 2] == [cost, key])
        if how & INSIDE:
            line[:0] = (deal.inside(state.present)[how & ~INSIDE][0],)
        else:
            slot, index, around = (how & 63) - 2, how >> 6 & 31, bool(how & AROUND)
            card = deal.order[index]
            if slot == WITH_BENEATH:
                move: Move = RemovePair(deal.order[(state.left & ((1 << index) - 1)).bit_length() - 1], card)
            else:
                move = RemoveKing(card) if slot < 0 else RemovePair(deal.pyramid[slot], card)
            line[:0] = (*_bring_to_top(state.left, state.drawn, index, around), move)
        key = previous
    return line
