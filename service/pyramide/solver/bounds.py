"""A sound upper bound on the pyramid cards a game can still have removed, the smaller of two:

- a card none of whose possible partners is left can never go, nor any card beneath it (two pyramid cards pair only
  when neither lies on the other, except a card with its last covering card under the covering-card variant);
- in each class of values that make 13 (A+Q, 2+J, …), every removal takes one card of each value: with ``a`` and
  ``b`` pyramid cards and ``p`` and ``q`` other cards of the two values, at most
  ``min(a, q) + min(b, p) + 2·min(a − min(a, q), b − min(b, p))`` of the pyramid's go.
"""

from __future__ import annotations

from functools import lru_cache

from pyramide.engine.cards import card_value
from pyramide.engine.pyramid import COVERERS, SLOTS
from pyramide.solver.position import Deal, Position

KING = 13


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


@lru_cache(maxsize=1 << 12)
def _values(deal: Deal) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(card_value(c) for c in deal.pyramid), tuple(card_value(c) for c in deal.order)


@lru_cache(maxsize=1 << 16)
def _counts(values: tuple[int, ...], mask: int) -> tuple[int, ...]:
    counts = [0] * 14
    index = 0
    while mask:
        if mask & 1:
            counts[values[index]] += 1
        mask >>= 1
        index += 1
    return tuple(counts)


def removable_bound(deal: Deal, position: Position) -> int:
    """At most how many pyramid cards the whole game can have removed, starting from ``position``."""
    pyramid_values, order_values = _values(deal)
    present = position.present
    outside = _counts(order_values, position.left)
    inside = _counts(pyramid_values, present)
    by_class = SLOTS - present.bit_count()
    for value in range(1, 7):
        a, b, p, q = inside[value], inside[KING - value], outside[value], outside[KING - value]
        x, y = min(a, q), min(b, p)
        by_class += x + y + 2 * min(a - x, b - y)
    by_class += inside[KING]
    signature = sum(1 << v for v in range(14) if outside[v])
    return min(by_class, _dead_cone_bound(pyramid_values, present, signature, deal.rules.cover_pairs))


@lru_cache(maxsize=1 << 16)
def _dead_cone_bound(pyramid_values: tuple[int, ...], present: int, outside: int, cover_pairs: bool) -> int:
    slots_of_value = [0] * 14
    for slot in range(SLOTS):
        if present >> slot & 1:
            slots_of_value[pyramid_values[slot]] |= 1 << slot
    stuck = 0
    for slot in range(SLOTS):
        if not present >> slot & 1:
            continue
        value = pyramid_values[slot]
        if value == KING or outside >> (KING - value) & 1:
            continue
        candidates = slots_of_value[KING - value]
        partners = candidates & ~ON_TOP[slot] & ~BENEATH[slot]
        if cover_pairs:
            partners |= candidates & ADJACENT[slot]
        if not partners:
            stuck |= (1 << slot) | (BENEATH[slot] & present)
    return SLOTS - stuck.bit_count()
