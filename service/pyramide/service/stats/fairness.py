"""Who and what may rank on a daily challenge's board: the fair-play rules (issue 42, ``docs/fair-play.md``).

A challenge's cards are sealed, but once a card is drawn the game holds no secret: a program can learn the deal
with one player and play the solver's line with another. What the board can still hold a win to is who won
(``challenge_players``: with ``app``, only players an app vouches for rank) and how fast the moves came: a win
whose median interval between operations, or whose mean interval over the whole game, is below
``min_move_ms`` is faster than a person plays; it does not enter the board but waits in the review list for a
moderator. A win these cheap rules would enter is then screened by the solver off the request path
(``games.screening``): held with the screen's reasons, or entered. Per-code boards are unverified (their codes are
open) and take every win.
"""

from __future__ import annotations

import enum
import itertools
import statistics
from dataclasses import dataclass

from pyramide.service.stats.results import GameResult


@enum.unique
class HoldReason(enum.StrEnum):
    """Why a win waits in the review list (a review lists every one that applies)."""

    CADENCE = "cadence"
    """Its operations came faster than ``min_move_ms`` each (median or mean interval)."""
    FASTER_THAN_KNOWN_LINE = "faster_than_known_line"
    """Won in less time than the deal's par took a person who knew the shortest line (``min_line_move_ms`` a move)."""
    FORESIGHT = "foresight"
    """Its early choices paid off only for the stock order still hidden when they were made."""
    NOT_DECIDED = "not_decided"
    """A line near par that the screening could not judge in time (or at all)."""


class Verdict(enum.Enum):
    ENTER = "enter"
    """The win goes on its board."""
    REVIEW = "review"
    """Faster than a person: held for a moderator (see ``stats.reviews``)."""
    REFUSED = "refused"
    """The board does not take this player's wins (an anonymous player under ``challenge_players=app``)."""


@dataclass(frozen=True, slots=True)
class Cadence:
    """How fast a game's operations came: the median interval between two (``None`` with fewer than two) and the
    mean interval, the time from the first operation to the last over the intervals between them (one fewer than
    the operations: evenly spaced 152 ms moves are 152 ms, not 149.5)."""

    median_interval_ms: int | None
    per_move_ms: int

    @classmethod
    def of(cls, result: GameResult) -> Cadence:
        times = result.times or []
        intervals = [later - earlier for earlier, later in itertools.pairwise(times)]
        median = round(statistics.median(intervals)) if intervals else None
        operations = len(times) if times else result.moves
        return cls(median, result.elapsed_ms // max(1, operations - 1))

    def below(self, floor_ms: int) -> bool:
        """Faster than ``floor_ms`` per move, over the median interval or over the whole game."""
        median = self.median_interval_ms
        return self.per_move_ms < floor_ms or (median is not None and median < floor_ms)


class FairPlay:
    """The settings' fair-play rules for challenge boards."""

    def __init__(self, challenge_players: str, min_move_ms: int) -> None:
        self.challenge_players = challenge_players
        self.min_move_ms = min_move_ms

    def verdict(self, result: GameResult) -> Verdict:
        """What becomes of a win: entered, held for review, or refused. Only challenge boards are judged."""
        if result.challenge is None or result.board is None:
            return Verdict.ENTER
        if self.challenge_players == "app" and result.app_id is None:
            return Verdict.REFUSED
        if self.min_move_ms > 0 and Cadence.of(result).below(self.min_move_ms):
            return Verdict.REVIEW
        return Verdict.ENTER
