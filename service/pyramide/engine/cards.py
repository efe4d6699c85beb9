"""Cards as small integers, with the codes players and clients type.

A card is an ``int`` from 0 to 51: ``suit * 13 + (rank - 1)``, suits in the order clubs, diamonds, hearts,
spades. Integers keep the engine and the solver fast and the serialised state small; codes such as ``10C`` or
``QS`` are the only form that crosses the engine's boundary.
"""

from __future__ import annotations

from typing import Final, NewType

from pyramide.engine.errors import InvalidCardError

Card = NewType("Card", int)

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("C", "D", "H", "S")
SUIT_SYMBOLS = {"♣": "C", "♦": "D", "♥": "H", "♠": "S", "♧": "C", "♢": "D", "♡": "H", "♤": "S"}

DECK: tuple[Card, ...] = tuple(Card(i) for i in range(52))
KING_VALUE: Final = 13
PAIR_SUM: Final = 13

_CODES = tuple(rank + suit for suit in SUITS for rank in RANKS)
_VALUES = tuple(rank for _suit in SUITS for rank in range(1, 14))
_BY_CODE = {code: Card(i) for i, code in enumerate(_CODES)}
_BY_CODE.update({code.replace("10", "T"): card for code, card in list(_BY_CODE.items()) if "10" in code})


def card_code(card: Card) -> str:
    """The canonical code: rank ``A 2 … 10 J Q K`` then suit ``C D H S``, e.g. ``10H``."""
    return _CODES[card]


def card_value(card: Card) -> int:
    """Ace 1, number cards their number, jack 11, queen 12, king 13."""
    return _VALUES[card]


def is_king(card: Card) -> bool:
    """Kings are removed on their own."""
    return _VALUES[card] == KING_VALUE


def parse_card(text: str) -> Card:
    """Read a card code as a person types it: any case, ``T`` for 10, suit symbols; else ``InvalidCardError``."""
    if not isinstance(text, str):
        raise InvalidCardError(repr(text))
    cleaned = text.strip().upper()
    if cleaned and cleaned[-1] in SUIT_SYMBOLS:
        cleaned = cleaned[:-1] + SUIT_SYMBOLS[cleaned[-1]]
    try:
        return _BY_CODE[cleaned]
    except KeyError:
        raise InvalidCardError(text) from None


def values_pair(first: int, second: int) -> bool:
    """Whether cards of these two values are removed together: they make 13. The one statement of the pairing
    rule; which cards may meet (free, covering, just drawn) is the game's to say."""
    return first + second == PAIR_SUM


def partner(value: int) -> int:
    """The value that pairs with ``value`` (``values_pair(value, partner(value))``; 0 for a king, which needs
    none): the engine's one place that works the partner out, so the sum is stated nowhere else."""
    return PAIR_SUM - value


def complement(card: Card) -> int:
    """The value a partner of ``card`` must have (0 for a king, which needs none)."""
    return partner(_VALUES[card])
