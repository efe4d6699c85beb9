"""Dealing algorithm v1 (the ``PY1`` in deal codes): SplitMix64 and a Fisher–Yates shuffle without bias.

Written so that another language can reproduce it bit for bit; ``docs/deal-codes.md`` gives it as pseudo-code and
``tests/golden/`` pins its output. Changing anything here changes every ``PY1`` deal: don't; add ``PY2`` instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from pyramide.engine.cards import DECK, Card
from pyramide.engine.layout import Layout
from pyramide.engine.pyramid import SLOTS

MASK64 = (1 << 64) - 1
GOLDEN_GAMMA = 0x9E3779B97F4A7C15


def splitmix64(seed: int) -> Iterator[int]:
    """The standard SplitMix64 sequence of 64-bit outputs for ``seed`` (Steele, Lea and Flood, 2014)."""
    state = seed & MASK64
    while True:
        state = (state + GOLDEN_GAMMA) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def below(outputs: Iterator[int], bound: int) -> int:
    """A uniform integer in ``[0, bound)``: reject outputs in the incomplete last block, then take the remainder."""
    limit = (1 << 64) - (1 << 64) % bound
    while True:
        value = next(outputs)
        if value < limit:
            return value % bound


def shuffled_deck(number: int) -> list[Card]:
    """The deck (clubs, diamonds, hearts, spades; ace to king in each) shuffled by Fisher–Yates from the top."""
    deck = list(DECK)
    outputs = splitmix64(number)
    for i in range(len(deck) - 1, 0, -1):
        j = below(outputs, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@lru_cache(maxsize=8192)
def deal_layout(number: int) -> Layout:
    """Deal number ``number``: pyramid rows top to bottom, left to right, then one card to the waste, 23 to the
    stock in draw order. Cached: a service loads the same few thousand games again and again."""
    deck = shuffled_deck(number)
    return Layout(tuple(deck[:SLOTS]), (deck[SLOTS],), tuple(deck[SLOTS + 1 :]))
