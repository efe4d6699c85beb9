"""The solver's bit-level twins of the engine's rules: which values pair, what lies on a card, when a game is won.

The engine states each rule once (``cards.partner`` and ``cards.values_pair``, ``pyramid.is_free``,
``Game.is_won``); the searches read the same rules on integers and masks millions of times, so they keep one
compiled twin of each here and state them nowhere else. ``tests/unit/solver/test_twins.py`` proves each twin equal
to the engine's function under every rule set, and ``tests/unit/engine/test_messages_and_layers.py`` keeps the
arithmetic of pairing and the cover masks out of every other solver module.
"""

from __future__ import annotations

from typing import Final

from pyramide.engine import pyramid
from pyramide.engine.cards import PAIR_SUM

COVER_MASK: Final = pyramid.COVER_MASK
"""The engine's, held here as a constant of this compiled module (an imported name is looked up at each use)."""


def partner_of(value: int) -> int:
    """The value that pairs with ``value``, 0 for a king: ``cards.partner``'s twin."""
    return PAIR_SUM - value


def pair(first: int, second: int) -> bool:
    """Whether cards of these two values are removed together: ``cards.values_pair``'s twin."""
    return first + second == PAIR_SUM


def lying_on(present: int, slot: int) -> int:
    """The pyramid cards of ``present`` still lying on ``slot``: a card there is free when none is left
    (``pyramid.is_free``'s twin), and becomes free once those are gone."""
    return present & COVER_MASK[slot]


def won(present: int, left: int, strict: bool) -> bool:
    """Whether a position with the pyramid cards ``present`` and the stock and waste cards ``left`` is won: the
    pyramid is cleared and, under the strict win, the stock and waste too (``Game.is_won``'s twin)."""
    return not present and (not strict or not left)
