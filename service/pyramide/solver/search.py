"""The search: every reachable position once, pruned by a sound bound, with a budget that answers "unknown"
rather than guess.

``solve`` explores depth first, removals before draws (the last pass from its most promising starts first:
:class:`_Entries`), and stops at the first win (then 28 cards are removable); otherwise it exhausts the reachable
positions whose bound can still beat the best found, which proves both that the deal cannot be won and the exact
maximum. ``shortest=True`` adds the A* search of :mod:`.shortest` for a winning line with the fewest moves as the
rules count them (removals, draws and turn-overs). The full search keeps each position as one integer
(:func:`.position.search_key`) and steps between them without making moves.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Final, NamedTuple, cast

from pyramide.engine import Game, Move, RemoveKing, RemovePair
from pyramide.engine.cards import Card
from pyramide.engine.pyramid import SLOTS, free_slots
from pyramide.solver.bounds import Bounds, enough
from pyramide.solver.collector import collector_paused
from pyramide.solver.pool import PoolSearch
from pyramide.solver.position import (
    DRAWN_AT,
    FRESH_AT,
    ORDER,
    PRESENT_AT,
    RECYCLES_AT,
    SAME_DRAWN,
    Deal,
    Position,
    cards_in,
    from_game,
    is_draw,
    moves,
    normalise,
    pyramid_removals,
    search_key,
    stock_moves,
    successors,
    waste_removals,
    waste_top,
)
from pyramide.solver.shortest import shortest_line as a_star_shortest_line
from pyramide.solver.twins import partner_of, won

DEFAULT_BUDGET: Final = 2_000_000
RELAXATION_BUDGET: Final = 10_000
"""Positions the pool model's first search may take (:func:`_full_search`): most of its answers come well within
it, and where it needs more (under the strict win with stock–waste pairs its pool cards pair among themselves in
countless ways) the full search's targets answer sooner (docs/benchmarks.md)."""
RELAXED_BUDGET: Final = 200_000
"""Positions one relaxed search may visit to bound a position of the full search (past it the cheap bound is used)."""
RELAXED_RECALL: Final = 48
"""How many of the latest pool searches with a pyramid the relaxed bound looks through for an answer before it
searches again: the nearest in the depth-first search answer most often, and looking further costs more than it
finds."""
RELAXED_TRIAL: Final = 200
RELAXED_USEFUL: Final = 0.3
"""After ``RELAXED_TRIAL`` relaxed searches, if fewer than this share of them cut anything the counting bound did
not, the full search goes on with the counting bound (and what the searches proved): with few turn-overs the pool
model is too generous to cut, and asking it cost more than the search it was meant to save (with one turn-over,
even while nearly one search in three cut: docs/benchmarks.md)."""
START_TRIAL: Final = 200
START_USEFUL: Final = 0.05
"""The same for the positions that start the last pass (:class:`_Trial`), asked on their own: there the pool
model often cuts where it did not before (the cards the earlier passes used are gone), and an answer serves every
start with the same pyramid and as many cards of each value left, hundreds of starts in the slowest deals; under
stock–waste pairing it seldom does, and is given up."""


class _Trial:
    """Whether the pool model is still worth asking, for one kind of position: after ``trial`` searches, only
    while at least the share ``useful`` of them cut something (proved no more than the threshold)."""

    def __init__(self, trial: int, useful: float, *, asked: bool) -> None:
        self.trial, self.useful = trial, useful
        self.searches = self.refusals = 0
        self.given_up = not asked

    def worth_asking(self) -> bool:
        """Whether to search the pool model once more (once given up, never again)."""
        if self.searches >= self.trial and self.refusals < self.searches * self.useful:
            self.given_up = True
        return not self.given_up


class RelaxedBound:
    """The bound of the full search (limited turn-overs, stock–waste pairing): the most pyramid cards the pool
    model removes from the same pyramid and the same cards left, found by searching it, and never more than
    :class:`Bounds` allows. The pool model lets any remaining card pair with the pyramid at any time, so every
    line under the real rules is a line there, less its pairs of two stock or waste cards (those only take cards
    away, which never helps where there is no order): what it cannot remove, no real line can. It counts pyramid
    cards only, so it plays to the plain win even under the strict one (and keeps its shortcuts). It knows the
    order of nothing, yet is far tighter than counting values: it knows which cards cover which. Its answer
    depends on the pyramid and how many cards of each value are left, which many positions of the full search
    share (they differ in which cards of a value, how far the stock is drawn and the turn-overs used), and each
    answer is kept so. The positions that start the last pass are asked on their own trial (:data:`START_TRIAL`)."""

    def __init__(self, deal: Deal, deadline: float, budget: int, *, ask_pool: bool = True) -> None:
        """``ask_pool=False``: the pool model is never searched, only the counting bound read (both trials given
        up from the start)."""
        self.bounds = Bounds(deal)
        self.budget = budget
        self.pool = PoolSearch(deal.pyramid, deal.order, deal.rules.cover_pairs, strict=False)
        self.deadline = deadline
        self.states = 0
        self.anywhere = _Trial(RELAXED_TRIAL, RELAXED_USEFUL, asked=ask_pool)
        self.starts = _Trial(START_TRIAL, START_USEFUL, asked=ask_pool)
        self._by_counts: dict[int, list[int]] = {}
        """For each pyramid and counts of the values 1-12 left (``packed << SLOTS | present``, the counts packed as
        :meth:`Bounds.outside` packs them): the most the pool model can remove, as far as known, and the most it was
        seen to reach. Kings left are not counted: the pool model's answer does not depend on them."""
        self._known: dict[int, list[int]] = {}
        """The same lists by pyramid and cards left (the position's key with nothing drawn, :func:`.position.key_of`):
        one look-up for a position seen before, as most are, where the counts would take two."""
        self._searched: dict[int, list[tuple[int, list[int]]]] = {}
        """For each pyramid, the packed counts it was searched with and what that proved (the same lists)."""

    def most(self, present: int, left: int, threshold: int, *, start: bool = False) -> int:
        """At most how many pyramid cards the whole game can have removed from this pyramid and these cards left,
        as far as it takes to tell whether that is more than ``threshold``: the pool search is asked just that (it
        cuts at the threshold, which is far quicker than finding its most). What each answer proves is kept: a
        most it cannot beat, a count it reached. ``start``: the position starts the last pass."""
        key = present << PRESENT_AT | left
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = self._answer(present, left)
        most, reached = known
        trial = self.starts if start else self.anywhere
        if most <= threshold or reached > threshold or trial.given_up:
            return most
        packed = self.bounds.outside(left)[3]
        searched = self._searched.setdefault(present, [])
        for at in range(len(searched) - 1, max(len(searched) - RELAXED_RECALL, 0) - 1, -1):  # the latest first
            cards, other = searched[at]
            # With at least as many cards of each value left the pool model removes at least as much (a card it
            # holds need never be used).
            if other[0] <= threshold and enough(cards, packed):
                known[0] = other[0]
                return other[0]
            if other[1] > threshold and enough(packed, cards):
                known[1] = other[1]
                return most
        if self.states >= self.budget:
            self.anywhere.given_up = self.starts.given_up = True
            return most
        if not trial.worth_asking():  # the pool model keeps agreeing with the counting bound
            return most
        trial.searches += 1
        searched.append((packed, known))
        return self._search(present, left, threshold, known=known, trial=trial)

    def _answer(self, present: int, left: int) -> list[int]:
        """What is known of the pool model from this pyramid and the counts of these cards left, shared by every
        position with them: at first the counting bound, and the cards already gone."""
        key = self.bounds.outside(left)[3] << SLOTS | present
        known = self._by_counts.get(key)
        if known is None:
            known = self._by_counts[key] = [self.bounds.removable(present, left), SLOTS - cards_in(present)]
        return known

    def _search(self, present: int, left: int, threshold: int, *, known: list[int], trial: _Trial) -> int:
        """:meth:`most` by a pool search within :data:`RELAXED_BUDGET` positions and the budget left, what it
        proves noted in ``known`` (and for every position on its way, when it reaches past the threshold) and in
        ``trial``."""
        trail: list[int] = []
        allowance = min(RELAXED_BUDGET, self.budget - self.states)
        won, best, _, states, exhausted = self.pool.explore(
            present, left, allowance, self.deadline, floor=threshold, cap=threshold + 1, trail=trail
        )
        self.states += states
        if won or best > threshold:
            reached = SLOTS if won else best
            for step in trail:  # every position on the way reaches as far
                on_way = self._answer(step >> PRESENT_AT, step & ORDER)
                on_way[1] = max(on_way[1], reached)
            return known[0]
        if exhausted:  # nothing above the threshold anywhere: that is the most now known
            known[0] = threshold
            trial.refusals += 1
            return threshold
        return known[0]  # out of budget or time: no answer, nothing cut


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


class Explored(NamedTuple):
    """What one depth-first search of :class:`_Search` found."""

    won: bool | None
    best: int  # the most pyramid cards removed on a line found (in this search or an earlier one of the same)
    line: list[Move]  # to the win, or to the best
    states: int  # positions this search added
    exhausted: bool  # every position not cut was visited (or the cap was reached)
    stuck: bool = False  # ``win_only`` cut a position for a card that can no longer leave


def _removed(position: Position) -> int:
    return SLOTS - cards_in(position.present)


def _explore(
    deal: Deal,
    start: Position,
    budget: int,
    deadline: float,
    *,
    prune: bool = True,
    floor: int = -1,
    cap: int = SLOTS + 1,
    relaxed: RelaxedBound | None = None,
    win_only: bool = False,
) -> Explored:
    """One depth-first search from ``start`` (:meth:`_Search.run`)."""
    return _Search(deal, start, prune=prune, relaxed=relaxed).run(
        budget, deadline, floor=floor, cap=cap, win_only=win_only
    )


class _Search:
    """Depth-first search over the reachable positions of one deal, which one search for a target after another
    resumes: each search visits only what the ones before it cut and it no longer does. Positions are kept by key
    (:func:`search_key`), each with the key of the one before it; the moves of a line are named only at the end
    (:func:`_line`). A position is cut when its bound cannot beat the best found, nor the search's ``floor``, and
    kept with the bound's value: a later search with a lower floor takes up exactly those it no longer cuts, and
    the positions it visited before need no second visit (everything they reach was visited or is kept so). So
    the targets from the relaxation's cap down cost, together, one search to the lowest, and a target no kept
    position can reach is not searched at all. Positions seen with fewer turn-overs used, or (reached by a
    removal) less far drawn, are cut for good: the other one is in the search (``prune=False`` visits every
    reachable position). The bound is ``relaxed`` when given (its answers are kept from one search to the next),
    else the counting bound of :class:`Bounds`.

    Under limited turn-overs the positions that start the last pass wait in :attr:`entries` (:class:`_Entries`)."""

    def __init__(self, deal: Deal, start: Position, *, prune: bool = True, relaxed: RelaxedBound | None = None) -> None:
        self.deal, self.prune, self.start = deal, prune, start
        self.relaxed = relaxed if relaxed is not None else RelaxedBound(deal, float("inf"), 0, ask_pool=False)
        first = search_key(deal, start)
        self.parents: dict[int, int] = {first: first}
        self.least_drawn = {first & SAME_DRAWN: first >> DRAWN_AT & 31}  # see _dominated
        self.best, self.best_at = _removed(start), first
        self.bounds = self.relaxed.bounds
        self.unvisited = [first]
        self.cut: dict[int, list[int]] = {}
        """Positions cut by their bound, by its value: none of them can have more pyramid cards removed."""
        self.stuck: list[int] = []
        """Positions cut by a search for the strict win alone: a card left can no longer leave."""
        self.entries = _Entries()

    def highest_cut(self) -> int:
        """The most pyramid cards any position cut so far may reach (-1: none is cut)."""
        return max(self.cut, default=-1)

    def run(self, budget: int, deadline: float, *, floor: int, cap: int, win_only: bool) -> Explored:
        """Search on from where the last search left off, cutting positions whose bound is at most the best found
        or ``floor``; reaching ``cap`` removed cards, an upper bound known from elsewhere, ends the search as if
        exhausted. With ``win_only`` (the strict win) the search asks only whether the game can be won, and also
        cuts positions with cards that can no longer leave; when it cut none (not ``stuck``) it was the search for
        28 pyramid cards too. Within ``budget`` positions (those of the relaxed bound's searches counted)."""
        deal, parents, relaxed, prune = self.deal, self.parents, self.relaxed, self.prune
        bounds, cut_at = self.bounds, self.cut
        best, best_at = self.best, self.best_at
        threshold = min(max(best, floor), SLOTS - 1)  # what a position must be able to beat (changes with the best)
        stack = self.unvisited = self._resumed(threshold, win_only)  # what is left on it stays for the next search
        stored_stack = cast("list[object]", stack)  # seen as holding objects: see :meth:`_push`
        # With the turn-overs used up, cards stuck in the waste are out of the game.
        last_pass = deal.limit
        waste_cut = win_only and not deal.waste_pairs  # cards no window lets go lose the strict win (Bounds.unusable)
        spent_before = relaxed.states
        known_before = len(parents)
        stuck = False
        strict = deal.strict
        entries = self.entries
        entries.start()
        while stack or entries.waiting:
            entries.take(stack)
            key = stack.pop()
            present, left = key >> PRESENT_AT, key & ORDER
            if won(present, left, strict):
                self.best, self.best_at = SLOTS, key
                return self._found(True, key, known_before, True, stuck)
            removed = SLOTS - cards_in(present)
            if removed > best:
                best, best_at = self.best, self.best_at = removed, key
                if best >= cap:
                    stack.append(key)  # not yet searched on from: a later search takes it up
                    return self._found(False, best_at, known_before, True, stuck)
                threshold = min(max(best, floor), SLOTS - 1)
            recycles = key >> RECYCLES_AT & 15
            playable = self._playable(key, recycles)
            if win_only and _cannot_win(deal, bounds, present, left, playable):
                self.stuck.append(key)
                stuck = True
                continue
            if prune and (reachable := self._bound(key, playable, removed, threshold)) <= threshold:
                # (under the strict win a cleared pyramid is not yet a win: still cut what cannot clear it)
                cut_at.setdefault(reachable, []).append(key)
                continue
            if waste_cut and recycles == last_pass and bounds.unusable(present, playable, key >> DRAWN_AT & 31):
                self.stuck.append(key)
                stuck = True
                continue
            spent = len(parents) - known_before + relaxed.states - spent_before
            if spent >= budget or (not len(parents) % 1024 and time.perf_counter() > deadline):
                stack.append(key)
                return self._found(None, best_at, known_before, False, stuck)
            children = successors(deal, key)
            if last_pass < 0 or recycles < last_pass:
                key, children = _draw_on(deal, parents, key, children)
            self._push(key, cast("list[object]", children), stored_stack)
        return self._found(False, best_at, known_before, True, stuck)

    def _push(self, key: int, children: list[object], stack: list[object]) -> None:
        """Stack the ``children`` of the position ``key`` not yet in the search nor cut for good (:func:`_dominated`),
        the first last, noting ``key`` as the position before each; a position a turn-over to the last pass reaches
        waits among :attr:`entries` instead. Each child's
        key, boxed once by :func:`successors`, is looked up, kept and stacked as that one object, and ``key`` is
        boxed once for them all (as ints, compiled code made a new integer object for every use)."""
        parents, stored_parents = self.parents, cast("dict[object, object]", self.parents)
        recycles = key >> RECYCLES_AT & 15
        turns_to_last = recycles + 1 == self.deal.limit  # a turn-over from here starts the last pass
        boxed: object = key
        for after in reversed(children):
            if after in parents or (self.prune and _dominated(parents, self.least_drawn, cast(int, after), key)):
                continue
            stored_parents[after] = boxed
            if turns_to_last and cast(int, after) >> RECYCLES_AT & 15 != recycles:
                self.entries.add(cast(int, after))
            else:
                stack.append(after)

    def _playable(self, key: int, recycles: int) -> int:
        """The cards left that may still be played: on the last pass, what is buried now stays buried."""
        left = key & ORDER
        if not 0 <= self.deal.limit <= recycles:
            return left
        return self.bounds.playable(key >> PRESENT_AT, left, key >> DRAWN_AT & 31, bool(key >> FRESH_AT & 1))

    def _bound(self, key: int, playable: int, removed: int, threshold: int) -> int:
        """At most how many pyramid cards the position ``key`` (with ``removed`` gone, the cards of ``playable``
        still to play) can have removed, as far as it takes to tell whether that is more than ``threshold``: the
        relaxed bound (a position with the whole stock of the last pass ahead asked as a start of it), and, under
        limited turn-overs without stock–waste pairing, the reach run by run (:meth:`Bounds.phased_reach`) where a
        card left can never leave. Under stock–waste pairing any card of the partner value left outside saves a
        card from that, so it rarely cuts there and is not asked."""
        present = key >> PRESENT_AT
        start = not key >> DRAWN_AT & 31 and key >> RECYCLES_AT & 15 == self.deal.limit > 0
        reachable = self.relaxed.most(present, playable, threshold, start=start)
        if reachable <= threshold or self.deal.limit < 0 or self.deal.waste_pairs:
            return reachable
        dead = playable & self.bounds.dead_cards(present, playable)
        if not dead:
            return reachable
        drawn, turn_overs = key >> DRAWN_AT & 31, self.deal.limit - (key >> RECYCLES_AT & 15)
        phased = self.bounds.phased_reach(present, playable, drawn, turn_overs, dead=dead, most=threshold - removed)
        return min(reachable, removed + cards_in(phased))

    def _resumed(self, threshold: int, win_only: bool) -> list[int]:
        """The positions this search starts from: those never visited, those cut that a bound above
        ``threshold`` no longer cuts (the highest bound last, so first taken) and, unless ``win_only``, those cut
        for a card that can no longer leave."""
        stack = self.unvisited
        self.unvisited = []
        if not win_only:
            stack += _most_removed_last(self.stuck)
            self.stuck = []
        for value in sorted(v for v in self.cut if v > threshold):
            stack += _most_removed_last(self.cut.pop(value))
        return stack

    def _found(self, won: bool | None, key: int, known_before: int, exhausted: bool, stuck: bool) -> Explored:
        states = len(self.parents) - known_before
        return Explored(won, self.best, _line(self.deal, self.parents, key, self.start), states, exhausted, stuck)


class _Entries:
    """The positions a turn-over to the last pass reached, not yet searched. They are not searched as they come:
    whenever the positions taken from them so far are no more than those of the rest of the search, or nothing
    else is left, the most promising is taken, and what it reaches searched to its end before the rest goes on.
    The most promising has the fewest pyramid cards left and, among those, the most cards outside it. A deal that
    cannot be won visits the same positions in another order; a won one tries the last passes most likely to win
    first instead of the first met, which for the slowest won deals were thousands of lost ones."""

    def __init__(self) -> None:
        self.waiting: list[int] = []
        """A heap of positions by promise: each key below the pyramid cards left and the cards outside missing."""
        self.below = -1
        """While the positions one entry reaches are searched: the stack's height beneath them (-1: none)."""
        self.taken = self.others = 0
        """The positions taken off the stack since :meth:`start`, from entries and not."""

    def start(self) -> None:
        """A search begins: nothing is taken yet (what a search left on its stack is the rest of the next one)."""
        self.below, self.taken, self.others = -1, 0, 0

    def add(self, key: int) -> None:
        """A position a turn-over to the last pass reached, to wait its turn."""
        promise = cards_in(key >> PRESENT_AT) << 5 | 31 - cards_in(key & ORDER)
        heapq.heappush(self.waiting, promise << PRESENT_AT + SLOTS | key)

    def take(self, stack: list[int]) -> None:
        """Before a position is taken off ``stack``: put the most promising entry on it when it is its turn, and
        count the position about to be taken."""
        if len(stack) <= self.below:
            self.below = -1
        if self.waiting and (not stack or (self.below < 0 and self.taken <= self.others)):
            self.below = len(stack)
            stack.append(heapq.heappop(self.waiting) & KEYS)
        if self.below < 0:
            self.others += 1
        else:
            self.taken += 1


KEYS: Final = (1 << PRESENT_AT + SLOTS) - 1
"""The bits of a number in :attr:`_Entries.waiting` that hold the position's key."""


def _most_removed_last(keys: list[int]) -> list[int]:
    """``keys`` ordered by the pyramid cards their positions have removed, the most last (so first taken off a
    stack); in the order given, latest first, among those with as many removed."""
    by_removed: list[list[int]] = [[] for _ in range(SLOTS + 1)]
    for key in reversed(keys):
        by_removed[SLOTS - cards_in(key >> PRESENT_AT)].append(key)
    ordered: list[int] = []
    for same in by_removed:
        ordered += same
    return ordered


def _line(deal: Deal, parents: dict[int, int], key: int, start: Position) -> list[Move]:
    """The moves from the search's ``start`` to the position ``key``: back through the positions before it, each
    move found again among the moves of the one before (the one that leads to it). The moves are made from the
    real start, not from the keys: a key may stand for its position with other cards of the same values."""
    keys = []
    while parents[key] != key:
        keys.append(key)
        key = parents[key]
    line: list[Move] = []
    position = start
    for after in reversed(keys):
        move, position = next((m, p) for m, p in moves(deal, position) if search_key(deal, p) == after)
        line.append(move)
    return line


def _dominated(seen: Container[int], least_drawn: dict[int, int], after: int, before: int) -> bool:
    """Whether a position the search has (or had) can do all ``after`` (reached from ``before``) can: the same
    with fewer turn-overs used, or, for a position a removal reaches, the same pyramid, cards left and turn-overs
    used less far drawn (drawing on from there reaches it). A draw's position is never cut so: it is how the less
    drawn one gets there. Notes how far each pyramid, cards left and turn-overs used were drawn: every position
    of the search is noted so or drawn on from one that is (the start is noted from the outset), so a draw's
    position needs no look-up. By keys (:func:`search_key`)."""
    if after >> RECYCLES_AT & 15 and _seen_with_fewer_turn_overs(seen, after):
        return True
    if is_draw(before, after):  # its shape is noted already, drawn no further than ``before``
        return False
    shape = after & SAME_DRAWN
    drawn = after >> DRAWN_AT & 31
    least = least_drawn.get(shape)
    if least is None or drawn < least:
        least_drawn[shape] = drawn
        return False
    return least < drawn


def _seen_with_fewer_turn_overs(seen: Container[int], key: int) -> bool:
    """The same position with fewer turn-overs used is already in the search (by keys, :func:`search_key`): it can do
    all this one can and more, so this one need not be searched (it is cut for the same reason the other is)."""
    used = key >> RECYCLES_AT & 15
    rest = key & ~(15 << RECYCLES_AT)
    for fewer in range(used):  # noqa: SIM110 - any() over a generator costs more, and this runs per position
        if rest | fewer << RECYCLES_AT in seen:
            return True
    return False


def _draw_on(deal: Deal, parents: dict[int, int], key: int, children: list[int]) -> tuple[int, list[int]]:
    """While the only move is a draw, make it at once: a draw leaves the pyramid and the cards left as they were,
    so the checks a position passed hold for the next one too (the depth-first search would take it next
    anyway), which saves the search's bookkeeping on those positions. The last position drawn to and its
    children (none when a draw reaches a position already seen). By keys (:func:`search_key`)."""
    while len(children) == 1 and is_draw(key, children[0]):
        after = children[0]
        if after in parents:
            return after, []
        parents[after] = key
        key, children = after, successors(deal, after)
    return key, children


def _full_search(
    deal: Deal, start: Position, budget: int, deadline: float
) -> tuple[bool | None, int, list[Move], int, bool]:
    """The search under limited turn-overs or stock–waste pairing. The pool model (with any two pool cards allowed
    to pair where stock–waste pairs are) is a relaxation of these rules (every line here is a line there) and its
    search is fast: the most it removes caps what this deal can, and when it cannot win, neither can the deal
    (under the strict win the target of 28 is then a cleared pyramid). Then, for each target from that cap down,
    the full search asks only "can ``target`` cards be removed?", cutting every position whose bound is below the
    target: the first target reached is the most removable (28: the deal is won), and each target refused is
    proved out of reach. Asking narrow questions cuts far more than one search for the best that raises its cut as
    it goes, and each search after the first visits only what the one before cut (:func:`_targets`). The pool
    model's search gets :data:`RELAXATION_BUDGET` positions: past it the targets start from 28."""
    rules = deal.rules
    relaxed = PoolSearch(
        deal.pyramid, deal.order, rules.cover_pairs, rules.strict_win, pool_pairs=rules.stock_waste_pairs, relaxed=True
    )
    relaxed_won, cap, relaxed_line, states, relaxed_exhausted = relaxed.explore(
        start.present, start.left, min(budget, RELAXATION_BUDGET), deadline
    )
    if relaxed_exhausted or relaxed_won:
        realised = realise(deal, start, relaxed_line)  # often the relaxed best line can simply be played here
        if realised is not None:  # the relaxation's answer holds here too: won, or its most removable
            line, end = realised
            return relaxed_won, _removed(end), line, states, True
    may_win = relaxed_won or not relaxed_exhausted
    if may_win:
        cap = SLOTS
    # Without a turn-over the stock is drawn once, too far from the pool model, free to use any card at any time, for
    # its searches to pay (benchmarks/solver_rates.py, the 0S rule sets at 1 s a deal: 4 of 400 undecided with them,
    # none without).
    bound = RelaxedBound(deal, deadline, budget - states, ask_pool=deal.limit != 0)
    won, best, line, more, exhausted = _targets(
        deal, start, budget - states, deadline, cap=cap, bound=bound, may_win=may_win
    )
    return won, best, line, states + more + bound.states, exhausted


def _targets(
    deal: Deal, start: Position, budget: int, deadline: float, *, cap: int, bound: RelaxedBound, may_win: bool
) -> tuple[bool | None, int, list[Move], int, bool]:
    """The full searches of :func:`_full_search`, one target after the other from ``cap`` down, each resuming the
    one before (:class:`_Search`): after a target is refused, the next is the most any position cut so far may
    reach, and none is left when that is no more than the best found. Unless ``may_win`` the relaxation proved the
    deal lost, so under the strict win target 28 is a cleared pyramid, not a win. Under the strict win the search
    for a win also cuts positions with a card that can no longer leave; if it cut any, target 28 is asked again
    for a cleared pyramid once the deal is proved lost."""
    search = _Search(deal, start, relaxed=bound)
    if cap <= search.best < SLOTS:  # nothing more can go (under the strict win 28 may be reached, not won)
        return False, search.best, [], 0, True
    states, target = 0, cap
    while True:
        found = search.run(
            budget - states - bound.states,
            deadline,
            floor=target - 1,
            cap=target if target < SLOTS or not may_win else SLOTS + 1,
            win_only=may_win and target == SLOTS and deal.rules.strict_win,
        )
        states += found.states
        if found.won:
            return True, SLOTS, found.line, states, True
        if not found.exhausted:  # unknown whether it can be won only if that was the question
            return (None if target == SLOTS and may_win else False), found.best, found.line, states, False
        if found.stuck:  # lost; whether the pyramid can be cleared is asked again without that cut
            may_win = False
            continue
        if found.best >= target:
            return False, found.best, found.line, states, True
        target = search.highest_cut()  # refused: no position reaches it, nor more than any cut one may
        if target <= found.best:
            return False, found.best, found.line, states, True


def realise(deal: Deal, start: Position, pool_line: list[Move]) -> tuple[list[Move], Position] | None:
    """Play a pool-model line under the deal's own rules: before each removal that needs a stock or waste card,
    draw and turn over until it is the waste top (for two such cards, until the second is drawn onto the first).
    The full line and where it ends, or ``None`` when the turn-overs run out first or a removal is not legal."""
    position, line = start, list[Move]()
    for move in pool_line:
        cards = _cards_of(move)
        outside = [c for c in cards if c in deal.order]
        reached = _reach(deal, position, [deal.order.index(c) for c in outside]) if outside else (position, [])
        if reached is None:
            return None
        position, steps = reached
        line += steps
        after = next((a for m, a in _removals(deal, position) if set(_cards_of(m)) == set(cards)), None)
        if after is None:
            return None
        position = normalise(deal, after)
        line.append(move)
    return line, position


def _cards_of(move: Move) -> tuple[Card, ...]:
    if isinstance(move, RemovePair):
        return move.cards
    return (move.card,) if isinstance(move, RemoveKing) else ()


def _removals(deal: Deal, position: Position) -> list[tuple[Move, Position]]:
    return pyramid_removals(deal, position) + waste_removals(deal, position, free_slots(position.present))


def _reach(deal: Deal, position: Position, indices: list[int]) -> tuple[Position, list[Move]] | None:
    """Draw and turn over until the card at ``indices[0]`` is the waste top, or for two cards until one is the top
    with the other just drawn onto it; ``None`` when the turn-overs run out first."""
    steps: list[Move] = []
    for _ in range(4 * len(deal.order) + 4):
        top, beneath = waste_top(position)
        if len(indices) == 1 and top == indices[0]:
            return position, steps
        if len(indices) == 2 and position.fresh and {top, beneath} == set(indices):
            return position, steps
        options = stock_moves(deal, position)
        if not options:
            return None
        move, position = options[0]
        position = normalise(deal, position)
        steps.append(move)
    return None


def expand(game: Game, line: list[Move]) -> list[Move]:
    """Turn a pool-model line into engine moves (:func:`realise` under the game's own rules). With unlimited
    turn-overs and no stock–waste pairing, which the pool model needs, every card can always be brought up."""
    deal, start = from_game(game, pooled=False)
    realised = realise(deal, start, line)
    assert realised is not None, "a pool-model line is always playable under unlimited turn-overs"
    return realised[0]


def solve(
    game: Game, *, budget: int = DEFAULT_BUDGET, shortest: bool = False, time_limit_s: float | None = None
) -> Analysis:
    """Analyse ``game`` from its current position under its own rules, within ``budget`` positions and, if given,
    ``time_limit_s`` seconds (past either the answer is unknown, never a guess)."""
    with collector_paused():
        return _solve(game, budget, shortest, time_limit_s)


def strict_win_out_of_reach(deal: Deal, position: Position) -> bool:
    """Under the strict win without stock–waste pairing, whether counting alone proves the deal lost: a card
    outside the pyramid then leaves only with a pyramid card of the partner value (or alone, a king), so more
    outside cards of a value than pyramid cards of its partner value can never all go. It answers "can it be won?"
    when the search for the most removable runs out of time, and cuts the search for a win."""
    return _counted_out(deal, position.present, position.left)


def _counted_out(deal: Deal, present: int, left: int) -> bool:
    """:func:`strict_win_out_of_reach` by the position's masks."""
    return deal.strict and not deal.waste_pairs and _outnumbered(deal, present, left)


def _cannot_win(deal: Deal, bounds: Bounds, present: int, left: int, playable: int) -> bool:
    """Under the strict win, whether a position is lost for good: a card it has ``left`` outside the pyramid is
    not among those still ``playable`` (stuck in the waste on the last pass) or can never leave at all
    (:meth:`Bounds.dead_cards`), or :func:`strict_win_out_of_reach`."""
    if playable != left or _counted_out(deal, present, left):
        return True
    return bool(left & bounds.dead_cards(present, left))


def _outnumbered(deal: Deal, present: int, left: int) -> bool:
    """Some value has more cards outside the pyramid than the pyramid has of its partner value. A removal takes a
    card of each value of a class, so both values of a class always count alike: looking at one suffices."""
    order_masks, pyramid_masks = deal.order_masks, deal.pyramid_masks
    return any(
        cards_in(left & order_masks[value]) > cards_in(present & pyramid_masks[partner_of(value)])
        for value in range(1, 7)
    )


def _solve(game: Game, budget: int, shortest: bool, time_limit_s: float | None) -> Analysis:
    started = time.perf_counter()
    deadline = started + time_limit_s if time_limit_s is not None else float("inf")
    deal, start = from_game(game)
    if deal.pool:
        pool = PoolSearch(deal.pyramid, deal.order, deal.rules.cover_pairs, deal.rules.strict_win)
        won, best, line, states, exhausted = pool.explore(start.present, start.left, budget, deadline)
    else:
        won, best, line, states, exhausted = _full_search(deal, start, budget, deadline)
    winnable = False if won is None and strict_win_out_of_reach(deal, start) else won
    max_removable = best if exhausted or won else None
    shortest_line = None
    if shortest and won:
        full_deal, full_start = from_game(game, pooled=False)
        shortest_line = a_star_shortest_line(full_deal, full_start, budget, deadline)
    return Analysis(
        winnable=winnable,
        max_removable=max_removable,
        line=expand(game, line) if deal.pool else line,
        states=states,
        elapsed_ms=(time.perf_counter() - started) * 1000,
        best_found=best,
        shortest=shortest_line,
    )
