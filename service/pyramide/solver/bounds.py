"""A sound upper bound on the pyramid cards a game can still have removed, the smaller of two:

- a card none of whose possible partners is left can never go, nor any card beneath it (two pyramid cards pair only
  when neither lies on the other, except a card with its last covering card under the covering-card variant);
- in each class of values that make 13 (A+Q, 2+J, …), every removal takes one card of each value: with ``a`` and
  ``b`` pyramid cards and ``p`` and ``q`` other cards of the two values, at most ``2·k + min(a − k, q) +
  min(b − k, p)`` of the pyramid's go, with ``k = min(a, b)`` pairs inside it (one more pair inside never loses:
  it takes two more pyramid cards and leaves at most two fewer to pair with cards outside).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from pyramide.engine.cards import KING_VALUE as KING
from pyramide.engine.pyramid import COVERERS, SLOTS
from pyramide.solver.position import Deal


def _cone(slot: int, step: dict[int, tuple[int, ...]]) -> int:
    mask, todo = 0, list(step[slot])
    while todo:
        s = todo.pop()
        if not mask >> s & 1:
            mask |= 1 << s
            todo.extend(step[s])
    return mask


_COVERED_BY = {s: COVERERS[s] for s in range(SLOTS)}
_COVERS = {s: tuple(t for t in range(SLOTS) if s in COVERERS[t]) for s in range(SLOTS)}
ON_TOP: tuple[int, ...] = tuple(_cone(s, _COVERED_BY) for s in range(SLOTS))
"""For each slot, every slot lying on it, directly or not."""
BENEATH: tuple[int, ...] = tuple(_cone(s, _COVERS) for s in range(SLOTS))
"""For each slot, every slot it lies on, directly or not."""
ADJACENT: tuple[int, ...] = tuple(
    sum(1 << c for c in COVERERS[s]) | sum(1 << t for t in _COVERS[s]) for s in range(SLOTS)
)
"""For each slot, the slots directly on it or directly under it: its partners under the covering-card variant."""


class Bounds:
    """At most how many pyramid cards the whole game can have removed, for one search, remembered: it depends only
    on the pyramid and how many cards of each value are left outside it, which many positions share (they differ
    in which cards of a value are left, how far the stock is drawn, the turn-overs used)."""

    def __init__(self, deal: Deal) -> None:
        self.pyramid_masks, self.order_masks = deal.pyramid_masks, deal.order_masks
        self.cover_pairs = deal.rules.cover_pairs
        self._inside: dict[int, tuple[tuple[int, ...], list[int]]] = {}
        self._outside: dict[int, tuple[tuple[int, ...], int, int]] = {}
        self._kind_of_counts: dict[tuple[int, ...], int] = {}
        self._known: dict[int, int] = {}
        self._partners: dict[int, int] = {}
        """For each pyramid, a number naming its :func:`waste_partners` (pyramids with the same counts share it)."""
        self._partner_counts: dict[int, tuple[tuple[int, int], ...]] = {}
        self._pair_kinds: dict[int, int] = {}
        self._pair_names: dict[tuple[tuple[int, int], ...], int] = {}
        self._pair_counts: list[tuple[tuple[int, int], ...]] = []
        self._stuck_with_pairs: dict[int, int] = {}
        """:meth:`stuck_with_pairs`, kept: a number per partners, stock and fresh top, and the stuck cards per that
        number and the waste."""
        self.stuck_known: dict[int, int] = {}
        """:meth:`stuck_with` by ``partners << 32 | waste``, for hot loops to look up before they call it."""

    def removable(self, present: int, left: int) -> int:
        key = (self._outside.get(left) or self.outside(left))[2] << SLOTS | present
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = self._compute(present, left)
        return known

    def _compute(self, present: int, left: int) -> int:
        inside, slots_of_value = self.pyramid(present)
        outside, signature, _ = self.outside(left)
        dead = dead_cone_bound(present, signature, slots_of_value, self.cover_pairs)
        return min(class_bound(present, inside, outside), dead)

    def playable(self, present: int, left: int, drawn: int) -> int:
        """The cards of ``left`` that may still be played from a position with no turn-over left, under rules
        without stock–waste pairing: those stuck in the waste never will."""
        return left & ~self.stuck(present, left & ((1 << drawn) - 1))

    def playable_with_pairs(self, present: int, left: int, drawn: int, fresh: bool, top_value: int) -> int:
        """:meth:`playable` under stock–waste pairing (:meth:`stuck_with_pairs`)."""
        waste = left & ((1 << drawn) - 1)
        if not waste:
            return left
        return left & ~self.stuck_with_pairs(self.partners(present), waste, left ^ waste, top_value if fresh else 0)

    def stuck_with_pairs(self, partners: int, waste: int, stock: int, fresh_value: int) -> int:
        """The cards of ``waste`` that stay there until the next turn-over under stock–waste pairing, for the
        pyramids named ``partners`` (:meth:`partners`), the ``stock`` and the value of the fresh top (0: the top is
        not fresh). A waste card then leaves with a pyramid card, with a stock card drawn onto it, or with the fresh
        top when it lies directly beneath it, each partner once; where a value's cards from the top of the waste
        down outnumber all those partners, one stays, and every card beneath (:func:`stuck_in_waste`). Kept per
        partners, stock counts and fresh top, then per waste."""
        stock_counts, _, stock_kind = self.outside(stock)
        kind_key = (partners << 32 | stock_kind) << 5 | fresh_value
        named = self._pair_kinds.get(kind_key)
        if named is None:
            pairs_fresh = (fresh_value, KING - fresh_value) if fresh_value else ()  # the top and the card beneath
            counts = []
            for value, count in self._partner_counts[partners]:
                total = count + stock_counts[KING - value] + (value in pairs_fresh)
                if total < 4:  # four of a value at most: never stuck
                    counts.append((value, total))
            named = self._pair_kinds[kind_key] = self._pair_names.setdefault(tuple(counts), len(self._pair_names))
            if named == len(self._pair_counts):
                self._pair_counts.append(tuple(counts))
        key = named << 24 | waste
        stuck = self._stuck_with_pairs.get(key)
        if stuck is None:
            counts_named = self._pair_counts[named]
            stuck = stuck_in_waste(waste, counts_named, self.order_masks) if counts_named else 0
            self._stuck_with_pairs[key] = stuck
        return stuck

    def stuck(self, present: int, waste: int) -> int:
        """The cards of ``waste`` that stay there until the next turn-over with this pyramid, under rules without
        stock–waste pairing (:func:`stuck_in_waste`)."""
        return self.stuck_with(self.partners(present), waste)

    def partners(self, present: int) -> int:
        """A number naming the pyramid's :func:`waste_partners`: pyramids with the same counts share it."""
        partners = self._partners.get(present)
        if partners is None:
            counts = waste_partners(self.pyramid(present)[0])
            partners = self._partners[present] = sum(count + 1 << 3 * value for value, count in counts)
            self._partner_counts[partners] = counts
        return partners

    def partner_counts(self, partners: int) -> tuple[tuple[int, int], ...]:
        """The :func:`waste_partners` that :meth:`partners` named ``partners``."""
        return self._partner_counts[partners]

    def stuck_with(self, partners: int, waste: int) -> int:
        """:meth:`stuck` for the pyramids named ``partners`` (:meth:`partners`), kept per those and the waste."""
        key = partners << 32 | waste
        stuck = self.stuck_known.get(key)
        if stuck is None:
            stuck = self.stuck_known[key] = stuck_in_waste(waste, self._partner_counts[partners], self.order_masks)
        return stuck

    def pyramid(self, present: int) -> tuple[tuple[int, ...], list[int]]:
        """The counts of each value in the pyramid, and the mask of the slots holding each value."""
        cached = self._inside.get(present)
        if cached is None:
            slots_of_value = [present & mask for mask in self.pyramid_masks]
            cached = self._inside[present] = (tuple(held.bit_count() for held in slots_of_value), slots_of_value)
        return cached

    def outside(self, left: int) -> tuple[tuple[int, ...], int, int]:
        """The counts of each value among the cards left outside the pyramid, :func:`outside_signature`, and a
        number naming those counts (sets of cards with the same counts share it: the bound is kept per it)."""
        cached = self._outside.get(left)
        if cached is None:
            counts = tuple((left & mask).bit_count() for mask in self.order_masks)
            kind = self._kind_of_counts.setdefault(counts, len(self._kind_of_counts))
            cached = self._outside[left] = (counts, outside_signature(counts), kind)
        return cached


def waste_partners(pyramid_counts: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """For each value a waste card may have (kings aside, they always go), how many pyramid cards could take one,
    where that is fewer than four (four always suffice)."""
    return tuple((v, pyramid_counts[KING - v]) for v in range(1, KING) if pyramid_counts[KING - v] < 4)


def stuck_in_waste(waste: int, partners: tuple[tuple[int, int], ...], order_masks: Sequence[int]) -> int:
    """The cards of ``waste`` that stay there until the next turn-over, under rules without stock–waste pairing.
    A waste card other than a king then leaves only with a pyramid card of the partner value, each pyramid card
    once (``partners``: :func:`waste_partners`): where a value's cards from the top of the waste down outnumber the
    pyramid's partners for it, one of them stays, and every card beneath."""
    highest = 0
    for value, count in partners:
        cards = waste & order_masks[value]
        if cards.bit_count() > count:
            for _ in range(count):
                cards ^= 1 << (cards.bit_length() - 1)
            highest = max(highest, cards.bit_length() - 1)
    return waste & ((1 << highest) - 1) if highest else 0


def class_bound(present: int, inside: Sequence[int], outside: Sequence[int]) -> int:
    """The count per value class: ``inside`` and ``outside`` count the values in the pyramid and outside it."""
    total = SLOTS - present.bit_count() + inside[KING]
    for value in range(1, 7):
        a, b, p, q = inside[value], inside[KING - value], outside[value], outside[KING - value]
        pairs = a if a < b else b  # pairs inside first: each takes two pyramid cards, one outside partner only one
        rest_a, rest_b = a - pairs, b - pairs
        total += 2 * pairs + (rest_a if rest_a < q else q) + (rest_b if rest_b < p else p)
    return total


def pyramid_pairs(slots_of_value: Sequence[int], cover_pairs: bool) -> tuple[int, ...]:
    """For each value 1-6, the most disjoint pairs its class can make inside the pyramid: a maximum matching
    between the slots of the two values, a pair allowed only when neither card lies on the other (or, under the
    covering-card variant, when one lies directly on the other)."""
    return tuple(
        _class_pairs(slots_of_value[value], slots_of_value[KING - value], cover_pairs) if value else 0
        for value in range(7)
    )


@lru_cache(maxsize=1 << 16)
def _class_pairs(ones: int, others: int, cover_pairs: bool) -> int:
    """:func:`pyramid_pairs` for one class, by the masks of its two values (the same masks recur in every deal)."""
    if not ones or not others:
        return 0
    first, second = _slots_of(ones), _slots_of(others)
    allowed = [
        [
            j
            for j, b in enumerate(second)
            if not (ON_TOP[a] | BENEATH[a]) >> b & 1 or (cover_pairs and ADJACENT[a] >> b & 1)
        ]
        for a in first
    ]
    partner_of: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in allowed[i]:
            if j not in seen:
                seen.add(j)
                if j not in partner_of or augment(partner_of[j], seen):
                    partner_of[j] = i
                    return True
        return False

    return sum(augment(i, set()) for i in range(len(first)))


def _slots_of(mask: int) -> list[int]:
    slots = []
    while mask:
        low = mask & -mask
        slots.append(low.bit_length() - 1)
        mask ^= low
    return slots


def outside_signature(outside: Sequence[int]) -> int:
    """Bit ``v`` set when some card of value ``v`` is left outside the pyramid."""
    return sum(1 << value for value in range(1, 14) if outside[value])


def dead_cone_bound(present: int, outside: int, slots_of_value: Sequence[int], cover_pairs: bool) -> int:
    """The dead cards' bound: ``outside`` is :func:`outside_signature`, ``slots_of_value`` the mask of the present
    slots holding each value."""
    stuck = 0
    for value in range(1, KING):
        if outside >> (KING - value) & 1:
            continue  # a partner is still outside the pyramid
        slots, partners = slots_of_value[value], slots_of_value[KING - value]
        while slots:
            low = slots & -slots
            slot = low.bit_length() - 1
            slots ^= low
            usable = partners & ~ON_TOP[slot] & ~BENEATH[slot]
            if cover_pairs:
                usable |= partners & ADJACENT[slot]
            if not usable:
                stuck |= low | (BENEATH[slot] & present)
    return SLOTS - stuck.bit_count()
