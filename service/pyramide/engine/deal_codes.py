"""Deal codes: ``PY1-N-AAAAAAS`` names a deal and its rules, so that pasting it deals exactly the same game.

``PY1`` is the game and dealing-algorithm version, the middle segment the rule set (see
:mod:`pyramide.engine.rules`), and the last segment either 7 letters, the deal number in base 26 (``A`` = 0,
most significant first), or, for a layout chosen by hand, ``L``, one letter for the number of waste cards and 48
letters for the layout's rank among all 52! orders of the deck. ``docs/deal-codes.md`` describes both exactly.
"""

from __future__ import annotations

import math
import re
import secrets
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pyramide.engine.cards import DECK, Card
from pyramide.engine.dealing import deal_layout
from pyramide.engine.errors import InvalidDealCodeError, InvalidRulesError
from pyramide.engine.layout import OTHER_CARDS, Layout
from pyramide.engine.pyramid import SLOTS
from pyramide.engine.rules import APP_RULES, Rules

VERSION = "PY1"
NUMBER_LETTERS = 7
DEAL_COUNT = 26**NUMBER_LETTERS
LAYOUT_MARK = "L"
LAYOUT_LETTERS = 48
ALPHABET = string.ascii_uppercase
_DASHES = re.compile(r"[\s\-‐‑‒–—―−_]+")
_SHAPE = re.compile(
    rf"{VERSION}(?P<rules>N|[0-9]?S?C?W?)(?P<deal>[A-Z]{{{NUMBER_LETTERS}}}|{LAYOUT_MARK}[A-Z]{{{LAYOUT_LETTERS + 1}}})"
)


def _to_letters(value: int, width: int) -> str:
    letters = []
    for _ in range(width):
        value, digit = divmod(value, 26)
        letters.append(ALPHABET[digit])
    return "".join(reversed(letters))


def _from_letters(letters: str) -> int:
    value = 0
    for letter in letters:
        value = value * 26 + ALPHABET.index(letter)
    return value


def layout_rank(layout: Layout) -> int:
    """The layout's deck order (pyramid, waste, stock) as its rank among all orders: a Lehmer code."""
    remaining = list(DECK)
    rank = 0
    for card in (*layout.pyramid, *layout.waste, *layout.stock):
        index = remaining.index(card)
        rank = rank * len(remaining) + index
        remaining.pop(index)
    return rank


def layout_from_rank(rank: int, waste_count: int) -> Layout:
    """The inverse of :func:`layout_rank`, splitting the last 24 cards into ``waste_count`` waste cards and the
    stock."""
    digits = []
    for base in range(1, len(DECK) + 1):
        rank, digit = divmod(rank, base)
        digits.append(digit)
    remaining = list(DECK)
    order: list[Card] = [remaining.pop(d) for d in reversed(digits)]
    split = SLOTS + waste_count
    return Layout(tuple(order[:SLOTS]), tuple(order[SLOTS:split]), tuple(order[split:]))


@dataclass(frozen=True, slots=True)
class DealCode:
    """A parsed deal code: the rules and either a deal number or an explicit layout."""

    rules: Rules
    number: int | None = None
    layout: Layout | None = None

    def __post_init__(self) -> None:
        if (self.number is None) == (self.layout is None):
            raise ValueError("a deal code has either a deal number or a layout")
        if self.number is not None and not 0 <= self.number < DEAL_COUNT:
            raise ValueError(f"deal numbers run from 0 to {DEAL_COUNT - 1}")

    def __str__(self) -> str:
        return _code_text(self)

    def _text(self) -> str:
        if self.layout is None:
            assert self.number is not None
            deal = _to_letters(self.number, NUMBER_LETTERS)
        else:
            waste = ALPHABET[len(self.layout.waste)]
            deal = LAYOUT_MARK + waste + _to_letters(layout_rank(self.layout), LAYOUT_LETTERS)
        return f"{VERSION}-{self.rules.segment}-{deal}"

    def deal(self) -> Layout:
        """The cards this code deals."""
        if self.layout is not None:
            return self.layout
        assert self.number is not None
        return deal_layout(self.number)

    @classmethod
    def parse(cls, text: str) -> DealCode:
        """Read a code as a person pastes it: any case, surrounding space, dashes missing, doubled or typographic.
        Anything else raises ``InvalidDealCodeError``."""
        if not isinstance(text, str):
            raise InvalidDealCodeError(repr(text), "a deal code is text")
        match = _SHAPE.fullmatch(_DASHES.sub("", text).upper())
        if match is None:
            raise InvalidDealCodeError(text, f"a deal code looks like {VERSION}-N-AAAAAAS")
        try:
            rules = Rules.from_segment(match["rules"])
        except InvalidRulesError:
            raise InvalidDealCodeError(text, "unknown rule-set segment") from None
        deal = match["deal"]
        if len(deal) == NUMBER_LETTERS:
            return cls(rules, number=_from_letters(deal))
        waste_count = ALPHABET.index(deal[1])
        rank = _from_letters(deal[2:])
        if waste_count > OTHER_CARDS or rank >= math.factorial(len(DECK)):
            raise InvalidDealCodeError(text, "the layout part of the code is out of range")
        return cls(rules, layout=layout_from_rank(rank, waste_count))

    @classmethod
    def for_layout(cls, layout: Layout, rules: Rules = APP_RULES) -> DealCode:
        """The long-form code of a layout chosen by hand."""
        return cls(rules, layout=layout)

    def to_json(self) -> dict[str, Any]:
        """The deal as ``pyramide deal --json`` prints it: code, rules and the layout's cards."""
        return {"code": str(self), "rules": self.rules.to_json(), **self.deal().to_json()}

    @classmethod
    def from_json(cls, data: object) -> DealCode:
        """Read a layout as :meth:`to_json` writes it. ``rules`` default to the code's, else ``N``; the code's
        deal is kept when it deals exactly these cards, otherwise the layout gets its long form."""
        layout = Layout.from_json(data)
        assert isinstance(data, Mapping)
        text = data.get("code")
        given = None if text is None else cls.parse(text)
        if "rules" in data:
            rules = Rules.from_json(data["rules"])
        else:
            rules = APP_RULES if given is None else given.rules
        if given is not None and given.deal() == layout:
            return cls(rules, given.number, given.layout)
        return cls.for_layout(layout, rules)


@lru_cache(maxsize=8192)
def _code_text(code: DealCode) -> str:
    """Codes are written often (every snapshot) and computed in full only once."""
    return code._text()


def random_deal_code(rules: Rules = APP_RULES, randbelow: Callable[[int], int] = secrets.randbelow) -> DealCode:
    """A uniformly random deal number under ``rules``."""
    return DealCode(rules, number=randbelow(DEAL_COUNT))
