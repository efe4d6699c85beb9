"""Dealing algorithm v1 (the ``PY1`` in deal codes): SplitMix64 and a Fisher–Yates shuffle without bias.

Written so that another language can reproduce it bit for bit; ``docs/deal-codes.md`` gives it as pseudo-code and
``tests/golden/`` pins its output. Changing anything here changes every ``PY1`` deal: don't; add ``PY2`` instead.
"""

from __future__ import annotations

import hashlib
import hmac
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


SEALED_CONTEXT = b"pyramide sealed deal v1"
"""Separates sealed-deal seeds from any other use of the same secret."""


def sealed_seed(secret: bytes, identity: str) -> int:
    """The seed of a sealed deal: the first 8 bytes, big-endian, of HMAC-SHA256 keyed with the server's ``secret``
    over ``SEALED_CONTEXT``, a 0x1f byte and ``identity`` (UTF-8), e.g. a daily challenge's ``2026-12-01/N#0``.
    Without the secret nobody can tell which of the 2^64 seeds a challenge uses, so its face-down cards are unknown
    until they are turned; with it, every process deals the same cards."""
    digest = hmac.new(secret, SEALED_CONTEXT + b"\x1f" + identity.encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big")


def sealed_layout(secret: bytes, identity: str) -> Layout:
    """The sealed deal for ``identity``: the deck shuffled exactly as a deal number shuffles it (SplitMix64 and
    Fisher–Yates), seeded with :func:`sealed_seed`, and dealt as :func:`deal_layout` deals."""
    deck = shuffled_deck(sealed_seed(secret, identity))
    return Layout(tuple(deck[:SLOTS]), (deck[SLOTS],), tuple(deck[SLOTS + 1 :]))
