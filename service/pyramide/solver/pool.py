"""The fast path for unlimited turn-overs without stock–waste pairing (the app's rules among them): the stock and
waste are an unordered pool, so a position is its pyramid and the cards left, kept as the key
:func:`.position.key_of` makes of it with nothing drawn, and the search is a tight loop.
Same answers as the general search (the tests compare both with brute force), for a fraction of its work."""

from __future__ import annotations

import time

from pyramide.engine.cards import KING_VALUE as KING
from pyramide.engine.cards import Card, card_value
from pyramide.engine.moves import Move, RemoveKing, RemovePair
from pyramide.engine.pyramid import SLOTS, free_slots
from pyramide.solver.bounds import class_bound, dead_cone_bound, outside_signature
from pyramide.solver.paths import path_to
from pyramide.solver.position import ORDER, PRESENT_AT, cards_in, masks_of_values, pyramid_only
from pyramide.solver.twins import partner_of, won

Inside = tuple[tuple[int, ...], tuple[tuple[Move, int], ...], tuple[int, ...], list[int]]


class PoolSearch:
    """Depth-first search over (pyramid mask, pool mask) with a per-search cache of everything that depends on one
    mask only."""

    def __init__(
        self,
        pyramid: tuple[Card, ...],
        pool: tuple[Card, ...],
        cover_pairs: bool,
        strict: bool,
        *,
        pool_pairs: bool = False,
        relaxed: bool = False,
    ) -> None:
        """``pool_pairs`` lets any two pool cards pair: no rule set allows that, but it makes the search a
        relaxation of stock–waste pairing (see :func:`search.solve`); it only matters under the strict win.
        ``relaxed``: searching as the relaxation of :func:`search._full_search`, whose line should stay easy to
        play under the real rules."""
        self.pyramid, self.pool = pyramid, pool
        self.cover_pairs, self.strict = cover_pairs, strict
        self.pool_pairs = pool_pairs and strict
        self.relaxed = relaxed
        self.pyramid_values = tuple(card_value(c) for c in pyramid)
        self.pool_values = tuple(card_value(c) for c in pool)
        self.pyramid_masks = masks_of_values(self.pyramid_values)
        self.pool_masks = masks_of_values(self.pool_values)
        self._pairs: dict[int, Move] = {}
        self._inside: dict[int, Inside] = {}
        self._outside: dict[int, tuple[tuple[int, ...], tuple[int, ...], int]] = {}
        self._dead: dict[int, int] = {}

    # -- what depends on the pyramid alone -----------------------------------------------------------------

    def inside(self, present: int) -> Inside:
        """Counts of values in the pyramid, the removals inside it (with the mask each leaves), the free slots,
        and for each value the mask of the slots holding it."""
        cached = self._inside.get(present)
        if cached is None:
            slots_of_value = [present & mask for mask in self.pyramid_masks]
            free = free_slots(present)
            counts = tuple(cards_in(held) for held in slots_of_value)
            cached = (counts, pyramid_only(self.pyramid, present, self.cover_pairs), free, slots_of_value)
            self._inside[present] = cached
        return cached

    # -- what depends on the pool alone --------------------------------------------------------------------

    def outside(self, left: int) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        """Counts of values in the pool, the first pool card of each value (-1: none; equal values are
        interchangeable), and :func:`outside_signature` of the counts."""
        cached = self._outside.get(left)
        if cached is None:
            held = [left & mask for mask in self.pool_masks]
            first = tuple((cards & -cards).bit_length() - 1 for cards in held)
            counts = tuple(cards_in(cards) for cards in held)
            cached = (counts, first, outside_signature(counts))
            self._outside[left] = cached
        return cached

    # -- the search ----------------------------------------------------------------------------------------

    def beats(self, present: int, left: int, best: int) -> bool:
        """Whether the bounds of :mod:`pyramide.solver.bounds` let this position remove more than ``best``: the
        cheap count per value class first, the dead-card cone only when that is not enough."""
        inside, _, _, slots_of_value = self.inside(present)
        outside, _, signature = self.outside(left)
        if class_bound(present, inside, outside) <= best:
            return False
        key = signature << SLOTS | present
        dead = self._dead.get(key)
        if dead is None:
            dead = self._dead[key] = dead_cone_bound(present, signature, slots_of_value, self.cover_pairs)
        return dead > best

    def children(self, present: int, left: int) -> list[tuple[Move, int, int]]:
        """Moves from (present, left): pyramid removals first, then pool pairs (and pool kings under the strict
        win)."""
        inside, pyramid_moves, free, _ = self.inside(present)
        if pyramid_moves and isinstance(pyramid_moves[0][0], RemoveKing):
            move, after = pyramid_moves[0]
            return [(move, after, left)]  # a free king: removing it now never loses anything
        outside, first, _ = self.outside(left)
        values = self.pyramid_values
        if not self.strict:
            for slot in free:
                value = values[slot]
                need = partner_of(value)
                spare = outside[need] >= inside[value] and outside[value] >= inside[need]
                if spare and first[need] >= 0 and not (self.relaxed and inside[need]):
                    # The pool holds a partner for every pyramid card of its value, and one for every pyramid card
                    # of the other value too (in a whole deck the first implies the second, but not once cards
                    # stuck in the waste are left out): pairing it with one now is safe, as a line pairing it with
                    # a pyramid card instead can pair that one with a spare pool card. The relaxation for limited
                    # turn-overs keeps to classes without pyramid partners: its line is played under the real rules
                    # next, where pairs inside the pyramid are the ones that need no digging through the stock.
                    index = first[need]
                    return [(self._pair(slot, index), present & ~(1 << slot), left & ~(1 << index))]
        result = [(move, after, left) for move, after in pyramid_moves]
        king = first[KING]
        if king >= 0 and self.strict:
            result.append((RemoveKing(self.pool[king]), present, left & ~(1 << king)))
        if self.pool_pairs:
            for value in range(1, 7):
                a, b = first[value], first[partner_of(value)]
                if a >= 0 and b >= 0:
                    result.append((RemovePair(self.pool[a], self.pool[b]), present, left & ~(1 << a) & ~(1 << b)))
        for slot in free:
            partner = first[partner_of(values[slot])]
            if partner >= 0 and values[slot] != KING:
                result.append((self._pair(slot, partner), present & ~(1 << slot), left & ~(1 << partner)))
        return result

    def _pair(self, slot: int, index: int) -> Move:
        """The move pairing a pyramid slot's card with a pool card, made once per search."""
        key = slot << 5 | index
        move = self._pairs.get(key)
        if move is None:
            move = self._pairs[key] = RemovePair(self.pyramid[slot], self.pool[index])
        return move

    def explore(
        self,
        present: int,
        left: int,
        budget: int,
        deadline: float,
        *,
        prune: bool = True,
        floor: int = -1,
        cap: int = SLOTS + 1,
        trail: list[int] | None = None,
    ) -> tuple[bool | None, int, list[Move], int, bool]:
        """(won, best removed, line to the best, positions, exhausted), as :func:`search._explore`: positions that
        cannot beat the best found, nor ``floor``, are cut; ``prune=False`` visits every reachable position (the
        tests' check on the bound); reaching ``cap`` ends the search as if exhausted. ``trail``, when given, gets
        the positions (by keys, :func:`.position.key_of`) of the line that won or reached the cap, each of which can
        therefore remove as many.

        Unless the win needs the pool emptied too, a position is also cut when another with the same pyramid and
        more of the pool left (a superset: equal values are used lowest index first, so more cards of a value
        always include fewer) is known: a spare pool card never hurts, so it does at least as well. Taking pairs
        inside the pyramid first reaches the positions that keep more of the pool first."""
        start = present << PRESENT_AT | left
        parents: dict[int, tuple[int, Move] | None] = {start: None}
        best, best_at = SLOTS - cards_in(present), start
        stack = [start]
        dominance = prune and not self.strict
        pools: dict[int, list[int]] = {present: [left]}  # for each pyramid, the pools known with it
        while stack:
            key = stack.pop()
            present, left = key >> PRESENT_AT, key & ORDER
            if won(present, left, self.strict):
                _follow(parents, key, trail)
                return True, SLOTS, path_to(parents, key), len(parents), True
            if dominance and _has_superset(pools[present], left):
                continue  # a position with more of the pool left was found after this one was queued
            removed = SLOTS - cards_in(present)
            if removed > best:
                best, best_at = removed, key
                if best >= cap:
                    _follow(parents, key, trail)
                    return False, best, path_to(parents, best_at), len(parents), True
            if prune and not self.beats(present, left, min(max(best, floor), SLOTS - 1)):
                continue
            if len(parents) >= budget or (not len(parents) % 1024 and time.perf_counter() > deadline):
                return None, best, path_to(parents, best_at), len(parents), False
            for move, after_present, after_left in reversed(self.children(present, left)):
                after = after_present << PRESENT_AT | after_left
                if after in parents:
                    continue
                if dominance:
                    known = pools.setdefault(after_present, [])
                    if any(after_left | other == other for other in known):
                        continue
                    known.append(after_left)
                parents[after] = (key, move)
                stack.append(after)
        return False, best, path_to(parents, best_at), len(parents), True


def _follow(parents: dict[int, tuple[int, Move] | None], key: int, trail: list[int] | None) -> None:
    while trail is not None:
        trail.append(key)
        step = parents[key]
        if step is None:
            return
        key = step[0]


def _has_superset(pools: list[int], left: int) -> bool:
    return any(other != left and left | other == other for other in pools)
