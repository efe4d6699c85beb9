"""Every removal move of the deck: kings alone and the pairs that make 13."""

from __future__ import annotations

import itertools

from pyramide.engine import (
    Move,
    RemoveKing,
    RemovePair,
)
from pyramide.engine.cards import DECK, card_value, is_king

EVERY_REMOVAL: list[Move] = [RemoveKing(c) for c in DECK if is_king(c)] + [
    RemovePair(a, b) for a, b in itertools.combinations(DECK, 2) if card_value(a) + card_value(b) == 13
]
