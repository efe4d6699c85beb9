"""A sound upper bound on the pyramid cards still removable: a card none of whose possible partners is left (or
whose only partners lie on top of it) can never go, nor can any card beneath it."""

from __future__ import annotations

from functools import lru_cache

from pyramide.engine.cards import card_value
from pyramide.engine.pyramid import COVERERS, SLOTS
from pyramide.solver.position import Deal, Position


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


@lru_cache(maxsize=1 << 16)
def _values(deal: Deal) -> tuple[tuple[int, ...], tuple[int, ...]]:
    return tuple(card_value(c) for c in deal.pyramid), tuple(card_value(c) for c in deal.order)


def removable_bound(deal: Deal, position: Position) -> int:
    """At most how many pyramid cards the whole game can have removed, starting from ``position``."""
    pyramid_values, order_values = _values(deal)
    present, left = position.present, position.left
    outside = [0] * 14
    index, rest = 0, left
    while rest:
        if rest & 1:
            outside[order_values[index]] += 1
        rest >>= 1
        index += 1
    slots_of_value: list[int] = [0] * 14
    for slot in range(SLOTS):
        if present >> slot & 1:
            slots_of_value[pyramid_values[slot]] |= 1 << slot
    cover_pairs = deal.rules.cover_pairs
    stuck = 0
    for slot in range(SLOTS):
        if not present >> slot & 1:
            continue
        value = pyramid_values[slot]
        if value == 13 or outside[13 - value]:
            continue
        partners = slots_of_value[13 - value] & ~ON_TOP[slot]
        if cover_pairs:
            partners |= slots_of_value[13 - value] & sum(1 << c for c in COVERERS[slot])
        if not partners:
            stuck |= (1 << slot) | (BENEATH[slot] & present)
    return SLOTS - stuck.bit_count()
