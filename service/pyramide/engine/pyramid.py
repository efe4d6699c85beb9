"""The pyramid's geometry: 28 slots in 7 rows and which slots cover which.

Slot ``i`` is row ``r`` (0 at the top), column ``c`` (0 at the left) with ``i = r * (r + 1) / 2 + c``. The slot
at (r, c) is covered by (r + 1, c) and (r + 1, c + 1). Which slots still hold a card is a 28-bit mask, so
freedom tests are a single AND.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

ROWS: Final = 7
SLOTS: Final = 28
FULL: Final = (1 << SLOTS) - 1


def slot_index(row: int, col: int) -> int:
    """The slot at 0-based ``row`` and ``col``."""
    return row * (row + 1) // 2 + col


def _position(slot: int) -> tuple[int, int]:
    row = 0
    while slot_index(row + 1, 0) <= slot:
        row += 1
    return row, slot - slot_index(row, 0)


POSITIONS: tuple[tuple[int, int], ...] = tuple(_position(s) for s in range(SLOTS))
"""(row, col) of each slot, both 0-based."""

COVERERS: tuple[tuple[int, ...], ...] = tuple(
    () if row == ROWS - 1 else (slot_index(row + 1, col), slot_index(row + 1, col + 1)) for row, col in POSITIONS
)
"""The slots lying on each slot (none for the bottom row)."""

COVER_MASK: tuple[int, ...] = tuple(sum(1 << c for c in coverers) for coverers in COVERERS)


def is_free(present: int, slot: int) -> bool:
    """A card is free when it is there and no card lies on it any more: the engine's one statement of freeness."""
    return bool(present >> slot & 1) and not present & COVER_MASK[slot]


@lru_cache(maxsize=4096)
def free_slots(present: int) -> tuple[int, ...]:
    """Every slot whose card is free, in slot order (cached: a game reaches at most 1,430 pyramids)."""
    return tuple(s for s in range(SLOTS) if is_free(present, s))


def sole_coverer(present: int, slot: int) -> int | None:
    """The one slot still covering ``slot`` when exactly one does, else ``None``."""
    remaining = [c for c in COVERERS[slot] if present >> c & 1]
    return remaining[0] if len(remaining) == 1 else None


def cover_pair_slots(present: int) -> list[tuple[int, int]]:
    """(covered, cover) for every card covered by one card only, that card being free: the pairs the covering-card
    variant adds, when their values make 13."""
    pairs = []
    for slot in range(SLOTS - ROWS):
        if present >> slot & 1 and present & COVER_MASK[slot]:
            cover = sole_coverer(present, slot)
            if cover is not None and is_free(present, cover):
                pairs.append((slot, cover))
    return pairs
