"""Rule sets: the app's rules (``N``) and every combination of the variants the rules document lists.

A rule set has a compact segment for deal codes: ``N`` for the app's rules, otherwise, in this fixed order, an
optional digit (limited turn-overs; absent means unlimited), ``S`` (stock–waste pairing), ``C`` (pairing with the
covering card) and ``W`` (strict win). So ``2S`` is two turn-overs with stock–waste pairing, ``0W`` no turn-over
and the strict win. Each rule set has exactly one segment and each segment exactly one rule set.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyramide.engine.errors import InvalidRulesError

MAX_RECYCLES = 9
APP_SEGMENT = "N"
_SEGMENT = re.compile(r"(?P<recycles>[0-9])?(?P<sw>S)?(?P<cover>C)?(?P<strict>W)?")
_JSON_KEYS = frozenset({"recycles", "stock_waste_pairs", "cover_pairs", "strict_win"})


@dataclass(frozen=True, slots=True)
class Rules:
    """One rule set. The defaults are the app's rules, ``N``."""

    recycles: int | None = None
    """How many times the waste may be turned over into the stock; ``None`` is without limit."""
    stock_waste_pairs: bool = False
    """The card just drawn may pair with the waste card directly beneath it."""
    cover_pairs: bool = False
    """A card may pair with the single card still covering it, when that card is free."""
    strict_win: bool = False
    """All 52 cards must go, not only the pyramid."""

    def __post_init__(self) -> None:
        recycles = self.recycles
        if recycles is not None and (type(recycles) is not int or not 0 <= recycles <= MAX_RECYCLES):
            raise InvalidRulesError(f"recycles must be null or an integer from 0 to {MAX_RECYCLES}")
        for name in ("stock_waste_pairs", "cover_pairs", "strict_win"):
            if type(getattr(self, name)) is not bool:
                raise InvalidRulesError(f"{name} must be true or false")

    @property
    def segment(self) -> str:
        """The deal-code segment for these rules."""
        text = "" if self.recycles is None else str(self.recycles)
        text += "S" * self.stock_waste_pairs + "C" * self.cover_pairs + "W" * self.strict_win
        return text or APP_SEGMENT

    @classmethod
    def from_segment(cls, segment: str) -> Rules:
        """Parse a segment (any case); ``InvalidRulesError`` for anything but a canonical one."""
        text = segment.strip().upper()
        if text == APP_SEGMENT:
            return cls()
        match = _SEGMENT.fullmatch(text)
        if not text or match is None:
            raise InvalidRulesError(f"not a rule-set segment: {segment!r}")
        recycles = match["recycles"]
        return cls(
            recycles=None if recycles is None else int(recycles),
            stock_waste_pairs=match["sw"] is not None,
            cover_pairs=match["cover"] is not None,
            strict_win=match["strict"] is not None,
        )

    def to_json(self) -> dict[str, Any]:
        """The rules as the CLI and API show them."""
        return {
            "recycles": self.recycles,
            "stock_waste_pairs": self.stock_waste_pairs,
            "cover_pairs": self.cover_pairs,
            "strict_win": self.strict_win,
        }

    @classmethod
    def from_json(cls, data: object) -> Rules:
        """Read rules JSON strictly: unknown keys and wrongly typed values are errors; missing keys take ``N``."""
        if not isinstance(data, Mapping):
            raise InvalidRulesError("rules must be a JSON object")
        unknown = set(data) - _JSON_KEYS
        if unknown:
            raise InvalidRulesError(f"unknown rule keys: {', '.join(sorted(map(str, unknown)))}")
        return cls(**data)

    @property
    def recycles_unlimited(self) -> bool:
        return self.recycles is None


APP_RULES = Rules()


def all_rule_sets() -> tuple[Rules, ...]:
    """Every supported rule set: turn-overs unlimited or 0..9, times the three on/off variants (88 in all)."""
    return tuple(
        Rules(recycles, sw, cover, strict)
        for recycles in (None, *range(MAX_RECYCLES + 1))
        for sw in (False, True)
        for cover in (False, True)
        for strict in (False, True)
    )
