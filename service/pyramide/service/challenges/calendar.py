"""Daily challenges' names and hours: one challenge per rule preset per UTC day, open from midnight to midnight.

A challenge's id is its day and its preset's segment, ``2026-12-01-N``; its candidates' sealed identities are
``2026-12-01/N#0``, ``2026-12-01/N#1``, … (see ``docs/deal-codes.md``, Sealed deals).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Final

from pyramide.engine import Rules
from pyramide.engine.errors import InvalidRulesError

DAY_MS: Final = 24 * 3600 * 1000
_ID: Final = re.compile(r"(?P<day>[0-9]{4}-[0-9]{2}-[0-9]{2})-(?P<preset>[0-9A-Z]{1,4})")


def moment(ms: int) -> datetime:
    """A moment in ms since the epoch, in UTC."""
    return datetime.fromtimestamp(ms / 1000, UTC)


def day_of(moment_ms: int) -> date:
    """The UTC day of a moment."""
    return datetime.fromtimestamp(moment_ms / 1000, UTC).date()


@dataclass(frozen=True, slots=True)
class ChallengeId:
    day: date
    preset: str
    """The rule set's deal-code segment (``N``, ``2S``, ``0W``, …)."""

    def __str__(self) -> str:
        return f"{self.day.isoformat()}-{self.preset}"

    @classmethod
    def parse(cls, text: str) -> ChallengeId | None:
        """The id ``text`` names, or ``None`` when it is not one (a malformed date, an unknown segment)."""
        match = _ID.fullmatch(text)
        if match is None:
            return None
        try:
            day = date.fromisoformat(match["day"])
            rules = Rules.from_segment(match["preset"])
        except (ValueError, InvalidRulesError):
            return None
        if rules.segment != match["preset"]:
            return None
        return cls(day, match["preset"])

    @property
    def rules(self) -> Rules:
        return Rules.from_segment(self.preset)

    @property
    def opens_ms(self) -> int:
        """Midnight UTC at the start of its day."""
        return int(datetime(self.day.year, self.day.month, self.day.day, tzinfo=UTC).timestamp() * 1000)

    @property
    def closes_ms(self) -> int:
        """Midnight UTC at the end of its day: from then on it is closed and its deal code public."""
        return self.opens_ms + DAY_MS

    def is_open(self, now: int) -> bool:
        return self.opens_ms <= now < self.closes_ms

    def identity(self, candidate: int) -> str:
        """The sealed identity of its ``candidate``-th deal."""
        return f"{self.day.isoformat()}/{self.preset}#{candidate}"

    def next_day(self) -> ChallengeId:
        return ChallengeId(self.day + timedelta(days=1), self.preset)
