"""A sound upper bound on the pyramid cards a game can still have removed, the smaller of two:

- a card none of whose possible partners is left can never go, nor any card beneath it (two pyramid cards pair only
  when neither lies on the other, except a card with its last covering card under the covering-card variant);
- in each class of values that make 13 (A+Q, 2+J, …), every removal takes one card of each value: with ``a`` and
  ``b`` pyramid cards and ``p`` and ``q`` other cards of the two values, at most ``2·k + min(a − k, q) +
  min(b − k, p)`` of the pyramid's go, with ``k`` pairs inside it as many as can be made at once: a maximum
  matching between its cards of the two values that may pair (:func:`pyramid_pairs`), at most ``min(a, b)`` (one
  more pair inside never loses: it takes two more pyramid cards and leaves at most two fewer to pair with cards
  outside, so the most pairs any line makes inside bound it).

Both count only the pyramid cards that can ever go (:meth:`Bounds.reach`): the others are never removed, so they
partner nothing either.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from pyramide.engine.cards import KING_VALUE as KING
from pyramide.engine.pyramid import COVERERS, SLOTS
from pyramide.solver.position import Deal, cards_in
from pyramide.solver.twins import lying_on, pair, partner_of


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
ON_TOP: Final[tuple[int, ...]] = tuple(_cone(s, _COVERED_BY) for s in range(SLOTS))
"""For each slot, every slot lying on it, directly or not."""
BENEATH: Final[tuple[int, ...]] = tuple(_cone(s, _COVERS) for s in range(SLOTS))
"""For each slot, every slot it lies on, directly or not."""
ADJACENT: Final[tuple[int, ...]] = tuple(
    sum(1 << c for c in COVERERS[s]) | sum(1 << t for t in _COVERS[s]) for s in range(SLOTS)
)
"""For each slot, the slots directly on it or directly under it: its partners under the covering-card variant."""
PAIRABLE: Final[tuple[tuple[int, ...], tuple[int, ...]]] = (
    tuple((1 << SLOTS) - 1 & ~(ON_TOP[s] | BENEATH[s]) for s in range(SLOTS)),
    tuple((1 << SLOTS) - 1 & ~(ON_TOP[s] | BENEATH[s]) | ADJACENT[s] for s in range(SLOTS)),
)
"""Indexed by the covering-card variant (0 or 1), then by slot: the slots whose card may pair with the slot's card
inside the pyramid (neither lies on the other; under the variant, also directly on or under it)."""
FIELD: Final[tuple[int, ...]] = (0, *(1 << 5 * (value - 1) for value in range(1, KING)), 0)
"""For each value, a one in its five-bit field of a packed count (values 1-12; kings, which need no partner,
count nowhere): :meth:`Bounds.unusable` compares counts of every value at once."""
PARTNER_FIELD: Final[tuple[int, ...]] = (0, *(1 << 5 * (partner_of(value) - 1) for value in range(1, KING)), 0)
"""For each value, a one in its partner value's field."""
MUST: Final = KING + 1
"""Where :meth:`Bounds._facts` holds the packed counts of the pyramid cards that must go first."""
_NO_FACTS: Final[tuple[int, ...]] = (0,) * (MUST + 1)
GUARDS: Final = sum(16 << 5 * (value - 1) for value in range(1, KING))
"""The top bit of every field: ``((a | GUARDS) - b) & GUARDS == GUARDS`` when each field of ``a`` is at least
``b``'s (no field holds more than 15)."""


class Bounds:
    """At most how many pyramid cards the whole game can have removed, for one search, remembered: it depends only
    on the pyramid and how many cards of each value are left outside it, which many positions share (they differ
    in which cards of a value are left, how far the stock is drawn, the turn-overs used)."""

    def __init__(self, deal: Deal) -> None:
        self.pyramid_masks, self.order_masks = deal.pyramid_masks, deal.order_masks
        self.pyramid_values, self.order_values = deal.pyramid_values, deal.order_values
        self.stock_waste_pairs = deal.rules.stock_waste_pairs
        self._reach: dict[int, int] = {}
        self._uncoverable_known: dict[int, tuple[int, ...]] = {}
        self.cover_pairs = deal.rules.cover_pairs
        self._inside: dict[int, tuple[tuple[int, ...], list[int]]] = {}
        self._outside: dict[int, tuple[tuple[int, ...], int, int, int]] = {}
        self._kind_of_counts: dict[tuple[int, ...], int] = {}
        self._known: dict[int, int] = {}
        self._value_bits = _value_bits(deal.order_values)
        self._dead: dict[int, int] = {}
        self._seeded: dict[int, int] = {}
        self._forced_known: dict[int, tuple[tuple[int, ...], int]] = {}
        self._facts_known: dict[int, tuple[int, ...]] = {}

    def removable(self, present: int, left: int) -> int:
        key = (self._outside.get(left) or self.outside(left))[2] << SLOTS | present
        known = self._known.get(key)
        if known is None:
            known = self._known[key] = self._compute(present, left)
        return known

    def _compute(self, present: int, left: int) -> int:
        """The bounds over the cards of :meth:`reach`, the rest of ``present`` counted as staying."""
        outside, signature, _, _ = self.outside(left)
        reach = self.reach(present, signature)
        inside, slots_of_value = self.pyramid(reach)
        dead = dead_cone_bound(reach, signature, slots_of_value, self.cover_pairs)
        matched = pyramid_pairs(slots_of_value, self.cover_pairs)
        return min(class_bound(reach, inside, outside, matched), dead) - cards_in(present) + cards_in(reach)

    def playable(self, present: int, left: int, drawn: int, fresh: bool) -> int:
        """The cards of ``left`` that may still be played from a position with no turn-over left: those that stay
        in the waste until the next turn-over (:meth:`blocked`) never will."""
        waste = left & ((1 << drawn) - 1)
        return left & ~self.blocked(present, waste, left ^ waste, int(fresh)) if waste else left

    def blocked(self, present: int, waste: int, stock: int, fresh: int, wanted: int = -1) -> int:
        """The cards of ``waste`` that stay there until the next turn-over: going down from the top, the first card
        that cannot leave, and every card beneath it. A waste card leaves alone if a king, else with a pyramid card
        of the partner value, each pyramid card once, and only once the cards on it are gone, which only cards
        already removable can do, with the stock's cards and the waste cards above it (:meth:`reach`): so where a
        value's cards from the top down to a card outnumber the pyramid cards of the partner value that can be
        uncovered so, that card cannot leave. Under stock–waste pairing a waste card may also leave with a stock
        card drawn onto it (the stock's cards of the partner value count as partners too), or the fresh top
        (``fresh``) with the card directly beneath it (those two are then never counted stuck). ``wanted``, when
        the caller knows it: bit ``v`` for each value ``v`` some card of ``present`` pairs with; the reach reads
        nothing else of a signature, so the rest is dropped, and the counts kept per pyramid and signature are
        shared by more states (the A*'s estimate: docs/benchmarks.md)."""
        values, masks, drawn_onto = self.order_values, self.order_masks, self.stock_waste_pairs
        signature = self.signature(stock) & wanted
        # The partners grow with the values above (more cards usable uncover more), so the count for a smaller
        # signature is a lower bound: it is brought up to date only when a card would be stuck by it.
        partners_for = signature
        partners = self._uncoverable(present, signature)
        seen = 0  # four bits per value: how many of its cards are above (no list made for each call)
        rest, depth = waste, 0
        spared = 2 if fresh and self._pairs_with_beneath(waste) else 0
        while rest:
            index = rest.bit_length() - 1
            value = values[index]
            if value != KING and depth >= spared:
                seen += 1 << 4 * value
                count = seen >> 4 * value & 15
                need = partner_of(value)
                if count > partners[need]:  # the stock's partners are counted only then
                    extra = cards_in(stock & masks[need]) if drawn_onto else 0
                    if count > partners[need] + extra and partners_for != signature:
                        partners_for, partners = signature, self._uncoverable(present, signature)
                    if count > partners[need] + extra:
                        return rest
            signature |= 1 << value & wanted
            rest ^= 1 << index
            depth += 1
        return 0

    def signature(self, cards: int) -> int:
        """:func:`outside_signature` of ``cards`` (positions outside the pyramid), read off the mask: cheaper than
        counting them (:meth:`outside`) for sets of cards seen once, as most states' are."""
        table = self._value_bits
        return table[cards & 255] | table[256 | cards >> 8 & 255] | table[512 | cards >> 16 & 255]

    def _pairs_with_beneath(self, waste: int) -> bool:
        """Whether the top of ``waste`` and the card directly beneath it make 13."""
        top = waste.bit_length() - 1
        beneath = (waste ^ 1 << top).bit_length() - 1
        return beneath >= 0 and pair(self.order_values[top], self.order_values[beneath])

    def _uncoverable(self, present: int, signature: int) -> tuple[int, ...]:
        """For each value, how many pyramid cards of it can be uncovered when the cards outside the pyramid that can
        be used are of the values in ``signature``: those whose covering cards are all in :meth:`reach`. Kept per
        pyramid and signature."""
        key = signature << SLOTS | present
        known = self._uncoverable_known.get(key)
        if known is None:
            reach = self.reach(present, signature)
            counts = [0] * (KING + 1)
            rest = present
            while rest:
                low = rest & -rest
                rest ^= low
                slot = low.bit_length() - 1
                if not lying_on(present, slot) & ~reach:
                    counts[self.pyramid_values[slot]] += 1
            known = self._uncoverable_known[key] = tuple(counts)
        return known

    def reach(self, present: int, signature: int) -> int:
        """The pyramid cards that may be removed when the cards outside the pyramid that can be used are of the
        values in ``signature`` (bit ``v`` for value ``v``): the largest set of present cards in which every card
        has the cards on it in the set, and is a king, or has a partner value outside, or a partner in the set
        that neither lies on it nor under it (under the covering-card variant: or directly on or under it). Any
        set of cards some line removes is such a set, so it is a subset of this one. Kept per pyramid and
        signature."""
        key = signature << SLOTS | present
        known = self._reach.get(key)
        if known is None:
            known = self._reach[key] = self._reach_of(present, signature)
        return known

    def _reach_of(self, present: int, signature: int, seed: int = 0) -> int:
        """:meth:`reach`, every card of ``seed`` kept whatever its partners (:meth:`phased_reach`)."""
        values, masks, pairable = self.pyramid_values, self.pyramid_masks, PAIRABLE[self.cover_pairs]
        kept, changed = present, True
        while changed:
            changed = False
            rest = kept & ~seed
            while rest:
                low = rest & -rest
                rest ^= low
                slot = low.bit_length() - 1
                value = values[slot]
                if lying_on(present, slot) & ~kept:
                    keep = False
                elif value == KING:
                    keep = True
                else:
                    need = partner_of(value)
                    keep = bool(signature >> need & 1 or kept & masks[need] & pairable[slot])
                if not keep:
                    kept ^= low
                    changed = True
        return kept

    def phased_reach(self, present: int, left: int, drawn: int, turn_overs: int, *, dead: int, most: int) -> int:
        """:meth:`reach` in the order the cards outside the pyramid come up, ``turn_overs`` left: a subset of it,
        worked out only until it holds more than ``most`` cards (what it then is, or more, is returned).

        A card outside the pyramid that can never leave (``dead``, those of ``left`` in :meth:`dead_cards`) buries,
        once on the waste, every card beneath it until the next turn-over, and the stock cannot be drawn past it
        without. So the cards left fall into runs between such cards, in their order, and a pass reaches them one
        run after another: first the waste above its highest such card with the stock up to the first, then each
        later run of the stock, then, after each turn-over, each run of all the cards left. Only the cards of the
        run at hand can partner a pyramid card, whatever came before (cards used up are still counted: it stays an
        upper bound), and what earlier runs could remove stays removable: the reach grows run by run."""
        waste = left & ((1 << drawn) - 1)
        stock = left ^ waste
        highest = (waste & dead).bit_length()  # the runs of this pass start above it
        kept = self._runs(present, stock, stock & dead, waste >> highest << highest, kept=0, most=most)
        for _ in range(turn_overs):
            before = kept
            if cards_in(kept) > most:
                break
            kept = self._runs(present, left, dead, 0, kept=kept, most=most)
            if kept == before:  # the same runs again reach no further
                break
        return kept

    def dead_cards(self, present: int, left: int) -> int:
        """The positions outside the pyramid whose card can never leave, were it left: no pyramid card of the
        partner value in :meth:`reach` (of ``present`` with the values of ``left``) and, under stock–waste pairing,
        no card of it in ``left`` either. Kings always can. Kept per pyramid and values left."""
        signature = self.signature(left)
        key = signature << SLOTS | present
        known = self._dead.get(key)
        if known is None:
            reach = self.reach(present, signature)
            known = 0
            for value in range(1, KING):
                partner = partner_of(value)
                if reach & self.pyramid_masks[partner]:
                    continue
                if not (self.stock_waste_pairs and signature >> partner & 1):
                    known |= self.order_masks[value]
            self._dead[key] = known
        return known

    def unusable(self, present: int, cards: int, drawn: int) -> int:
        """On the last pass without stock–waste pairing, the cards of the waste (``cards`` below ``drawn``; ``cards``
        those still to play) that can never leave: the highest such card and all beneath it. A waste card leaves,
        unless a king, with a pyramid card of the partner value once every card on that one is gone and every card
        on it in the waste is gone, each of those with a pyramid card of its own partner value (no two of them with
        the same one) once that one's cards on it were gone, and so is every card drawn onto it by then. So some
        window of the cards from the waste's top down to it, and the stock's first ones up to before the first that
        can never leave (:meth:`dead_cards`), must make that possible: a pyramid card of the partner value
        uncovered using the pyramid's and the window's cards; and, per value, as many pyramid partners as the
        window has cards, and partners enough for them and the pyramid cards that must go first (:meth:`_must`)
        among the pyramid's and the window's cards."""
        waste = cards & ((1 << drawn) - 1)
        if not waste:
            return 0
        stock = cards ^ waste
        dead = stock & self.dead_cards(present, cards)
        run = stock & ((dead & -dead) - 1) if dead else stock
        _, pyramid_partners = self._forced(present)
        window = partners = wanted = 0
        rest, values = waste, self.order_values
        asked, facts = -1, _NO_FACTS  # the last values asked about, and what is known of them
        while rest:
            index = rest.bit_length() - 1
            rest ^= 1 << index
            value = values[index]
            window += FIELD[value]
            partners += PARTNER_FIELD[value]
            wanted |= 1 << value
            if value == KING:
                continue
            if wanted != asked:
                asked, facts = wanted, self._facts(present, wanted)
            if not self._may_leave(present, value, (window, partners, wanted, pyramid_partners), run, facts):
                return waste & ((2 << index) - 1)
        return 0

    def _may_leave(
        self, present: int, value: int, above: tuple[int, int, int, int], stock: int, facts: tuple[int, ...]
    ) -> bool:
        """Whether a waste card of ``value`` may leave (:meth:`unusable`), as it is or after drawing some of the
        cards of ``stock`` in order: ``above`` holds the packed counts, partners and values of it and the waste
        cards on it, and the pyramid's partners; ``facts``, :meth:`_facts` for those values."""
        values, need = self.order_values, partner_of(value)
        window, partners, wanted, pyramid_partners = above
        asked, uncovered = wanted, bool(facts[need])
        while enough(pyramid_partners, window):  # more cards of a value than pyramid partners: drawing never helps
            if wanted != asked:
                asked, facts = wanted, self._facts(present, wanted)
                uncovered = uncovered or bool(facts[need])
            if uncovered and enough(pyramid_partners + partners, window + facts[MUST]):
                return True
            if not stock:
                return False
            low = stock & -stock
            stock ^= low
            other = values[low.bit_length() - 1]
            window += FIELD[other]
            partners += PARTNER_FIELD[other]
            wanted |= 1 << other
        return False

    def _facts(self, present: int, wanted: int) -> tuple[int, ...]:
        """What :meth:`unusable` reads of a pyramid and the values of a window: :meth:`_uncoverable`'s counts, and
        at :data:`MUST` :meth:`_must`'s. Kept per pyramid and values."""
        key = wanted << SLOTS | present
        known = self._facts_known.get(key)
        if known is None:
            known = self._facts_known[key] = (*self._uncoverable(present, wanted), self._must(present, wanted))
        return known

    def _forced(self, present: int) -> tuple[tuple[int, ...], int]:
        """For each value, the pyramid cards that must go before a card of it outside the pyramid can leave: those
        lying on every pyramid card of the partner value (and that card, when it is the only one); and the packed
        counts of the pyramid's partners for each value. Kept per pyramid."""
        known = self._forced_known.get(present)
        if known is None:
            forced = [0] * (KING + 1)
            partners = 0
            for value in range(1, KING):
                candidates = present & self.pyramid_masks[partner_of(value)]
                partners += cards_in(candidates) * FIELD[value]
                if not candidates:
                    continue
                common, rest = (1 << SLOTS) - 1, candidates
                while rest:
                    low = rest & -rest
                    rest ^= low
                    common &= ON_TOP[low.bit_length() - 1]
                forced[value] = present & (common | (candidates if cards_in(candidates) == 1 else 0))
            known = self._forced_known[present] = (tuple(forced), partners)
        return known

    def _must(self, present: int, wanted: int) -> int:
        """Packed counts, per value, of the pyramid cards that must go before cards outside it of the values
        ``wanted`` can all leave (:meth:`_forced`), kings not counted."""
        forced, _ = self._forced(present)
        cards = 0
        for value in range(1, KING):
            if wanted >> value & 1:
                cards |= forced[value]
        counts = 0
        while cards:
            low = cards & -cards
            cards ^= low
            counts += FIELD[self.pyramid_values[low.bit_length() - 1]]
        return counts

    def _runs(self, present: int, cards: int, dead: int, first: int, *, kept: int, most: int) -> int:
        """:meth:`phased_reach` over one pass: ``cards`` split at the ``dead`` ones, ``first`` joining the first
        run; ``kept`` what the runs before could remove. A run whose values are among those of a run worked out
        since the reach last grew reaches nothing more (what it could remove, that one could), and is skipped."""
        run, rest = first, cards & ~dead
        seen: list[int] = []
        while True:
            low = dead & -dead
            below = rest & (low - 1) if low else rest
            signature = self.signature(run | below)
            for other in seen:
                if signature | other == other:
                    break
            else:
                grown = self._seeded_reach(present, signature, kept)
                if grown != kept:
                    if cards_in(grown) > most:
                        return grown
                    kept, seen = grown, []
                seen.append(signature)
            if not low:
                return kept
            dead ^= low
            rest ^= below
            run = 0

    def _seeded_reach(self, present: int, signature: int, seed: int) -> int:
        """:meth:`_reach_of` with a ``seed``, kept per pyramid, seed and values; without one it is :meth:`reach`,
        whose table it shares."""
        if not seed:
            return self.reach(present, signature)
        key = (seed << SLOTS | present) << 14 | signature
        known = self._seeded.get(key)
        if known is None:
            known = self._seeded[key] = self._reach_of(present, signature, seed)
        return known

    def pyramid(self, present: int) -> tuple[tuple[int, ...], list[int]]:
        """The counts of each value in the pyramid, and the mask of the slots holding each value."""
        cached = self._inside.get(present)
        if cached is None:
            slots_of_value = [present & mask for mask in self.pyramid_masks]
            cached = self._inside[present] = (tuple(cards_in(held) for held in slots_of_value), slots_of_value)
        return cached

    def outside(self, left: int) -> tuple[tuple[int, ...], int, int, int]:
        """The counts of each value among the cards left outside the pyramid, :func:`outside_signature`, a number
        naming those counts (sets of cards with the same counts share it: the bound is kept per it), and the
        counts of values 1-12 packed (:data:`FIELD`)."""
        cached = self._outside.get(left)
        if cached is None:
            counts = tuple(cards_in(left & mask) for mask in self.order_masks)
            kind = self._kind_of_counts.setdefault(counts, len(self._kind_of_counts))
            packed = sum(FIELD[value] * counts[value] for value in range(1, KING))
            cached = self._outside[left] = (counts, outside_signature(counts), kind, packed)
        return cached


def enough(offered: int, wanted: int) -> bool:
    """Whether each field of the packed counts ``offered`` (:data:`FIELD`) is at least that of ``wanted``."""
    return ((offered | GUARDS) - wanted) & GUARDS == GUARDS


def _value_bits(values: tuple[int, ...]) -> tuple[int, ...]:
    """For each byte of a mask of positions outside the pyramid (the first 256 entries for positions 0-7, then
    8-15, then 16-23), the bits of the values those positions hold, as in :func:`outside_signature`."""
    table = []
    for chunk in range(3):
        for byte in range(256):
            bits = 0
            for offset in range(8):
                position = 8 * chunk + offset
                if byte >> offset & 1 and position < len(values):
                    bits |= 1 << values[position]
            table.append(bits)
    return tuple(table)


def class_bound(
    present: int, inside: tuple[int, ...], outside: tuple[int, ...], matched: tuple[int, ...] | None = None
) -> int:
    """The count per value class: ``inside`` and ``outside`` count the values in the pyramid and outside it;
    ``matched`` (:func:`pyramid_pairs`), when given, the most pairs each class can make inside it at once."""
    total = SLOTS - cards_in(present) + inside[KING]
    for value in range(1, 7):
        need = partner_of(value)
        a, b, p, q = inside[value], inside[need], outside[value], outside[need]
        pairs = a if a < b else b  # pairs inside first: each takes two pyramid cards, one outside partner only one
        if matched is not None and matched[value] < pairs:
            pairs = matched[value]
        rest_a, rest_b = a - pairs, b - pairs
        total += 2 * pairs + (rest_a if rest_a < q else q) + (rest_b if rest_b < p else p)
    return total


def pyramid_pairs(slots_of_value: list[int], cover_pairs: bool) -> tuple[int, ...]:
    """For each value 1-6, the most disjoint pairs its class can make inside the pyramid: a maximum matching
    between the slots of the two values, a pair allowed only when neither card lies on the other (or, under the
    covering-card variant, when one lies directly on the other)."""
    return tuple(
        _class_pairs(slots_of_value[value], slots_of_value[partner_of(value)], cover_pairs) if value else 0
        for value in range(7)
    )


@lru_cache(maxsize=1 << 16)
def _class_pairs(ones: int, others: int, cover_pairs: bool) -> int:
    """:func:`pyramid_pairs` for one class, by the masks of its two values (the same masks recur in every deal)."""
    if not ones or not others:
        return 0
    first, second = _slots_of(ones), _slots_of(others)
    pairable = PAIRABLE[cover_pairs]
    allowed = [[j for j, b in enumerate(second) if pairable[a] >> b & 1] for a in first]
    matched_to: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in allowed[i]:
            if j not in seen:
                seen.add(j)
                if j not in matched_to or augment(matched_to[j], seen):
                    matched_to[j] = i
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


def outside_signature(outside: tuple[int, ...]) -> int:
    """Bit ``v`` set when some card of value ``v`` is left outside the pyramid."""
    return sum(1 << value for value in range(1, 14) if outside[value])


def dead_cone_bound(present: int, outside: int, slots_of_value: list[int], cover_pairs: bool) -> int:
    """The dead cards' bound: ``outside`` is :func:`outside_signature`, ``slots_of_value`` the mask of the present
    slots holding each value."""
    stuck = 0
    for value in range(1, KING):
        if outside >> partner_of(value) & 1:
            continue  # a partner is still outside the pyramid
        slots, partners = slots_of_value[value], slots_of_value[partner_of(value)]
        while slots:
            low = slots & -slots
            slot = low.bit_length() - 1
            slots ^= low
            if not partners & PAIRABLE[cover_pairs][slot]:
                stuck |= low | (BENEATH[slot] & present)
    return SLOTS - cards_in(stuck)
