"""Daily challenges' bodies."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from pyramide.service.deals.schemas import PAR, PAR_STATUS, RuleSet
from pyramide.service.http.schemas import Count
from pyramide.service.stats.schemas import LeaderboardEntry
from pyramide.service.status import GameStatus

ChallengeParStatus = Literal["known", "unwinnable", "unknown", "pending", "sealed"]
CHALLENGE_PAR = PAR + " Null while the challenge is open (`par_status`: `sealed`)."
CHALLENGE_PAR_STATUS = (
    PAR_STATUS + " `sealed`: the challenge is open, and nothing of its par is shown (nor worked out) until the close;"
    " the first read after the close starts working it out."
)


class ChallengeAttempt(BaseModel):
    """The caller's attempt at the challenge."""

    game_id: UUID
    status: GameStatus | None = Field(
        description="As the game lists show it (`lost`, never `stuck`); null: the game is no longer kept."
    )
    moves: Count | None
    elapsed_ms: Count | None
    score: Count | None
    rank: Annotated[int, Field(ge=1)] | None = Field(description="The place on the challenge's board; null: not on it.")


class Challenge(BaseModel):
    """A daily challenge: one deal per rule preset per UTC day, the same for everyone, dealt from a server secret
    and proven winnable. Each player plays it once; its cards stay sealed until it closes."""

    id: str = Field(description="The UTC day and the preset's segment, e.g. 2026-12-01-N.")
    rules: RuleSet
    opens_at: datetime
    closes_at: datetime
    open: bool
    players: Count = Field(description="Players who started it.")
    commitment: str | None = Field(
        description="Hex SHA-256 over the ASCII bytes `<code>:<nonce>`, published from the moment the deal was"
        " chosen (at least 7 days ahead) and never changed; null for a challenge chosen before commitments existed.",
        examples=["9f2c5e0b7d1a4c3e8b6f0a2d4c6e8f1a3b5d7f9e1c3a5b7d9f1e3c5a7b9d1f3e"],
    )
    committed_at: datetime | None = Field(description="When the deal was chosen and committed to.")
    code: str | None = Field(description="The deal code, once the challenge has closed; null while it is open.")
    nonce: str | None = Field(
        description="The commitment's nonce (64 hex digits), once the challenge has closed; null before.",
        examples=[None],
    )
    par: Annotated[int, Field(ge=1)] | None = Field(description=CHALLENGE_PAR)
    par_status: ChallengeParStatus = Field(description=CHALLENGE_PAR_STATUS)
    you: ChallengeAttempt | None = Field(description="The caller's attempt; null without a token or without one.")


class ChallengeLeaderboard(BaseModel):
    """The challenge's wins, clean ones (no undo) first, then by time, moves and the earlier finish; only wins before
    the close count, and only at a human pace (faster ones wait for a moderator's review). Verified: nobody could
    know the cards in advance, and hints were refused. Final once the challenge closes."""

    challenge: str
    rules: RuleSet
    verified: Literal[True] = Field(True, description="Always true: the cards were sealed while it was played.")
    final: bool = Field(description="The challenge has closed: no win enters the board any more.")
    par: Annotated[int, Field(ge=1)] | None = Field(description=CHALLENGE_PAR)
    par_status: ChallengeParStatus = Field(description=CHALLENGE_PAR_STATUS)
    entries: list[LeaderboardEntry] = Field(
        description="Each entry's `par` and `over_par` are null until the challenge has closed."
    )
    next_cursor: str | None
    rank: Annotated[int, Field(ge=1)] | None = Field(
        description="With `around=me`: the caller's rank; null when not on the board, or without `around=me`."
    )
    percentile: Annotated[float, Field(ge=0, le=100)] | None = Field(
        description="With `around=me`: the share of the board's entries, in percent, the caller ranks level with or"
        " above; null when not on the board, or without `around=me`."
    )


class CalendarChallenge(BaseModel):
    """A chosen challenge in the calendar: its commitment from the moment it was chosen, its code and nonce after
    the close, so that anyone can check the deal played was the one committed before its day."""

    id: str
    rules: RuleSet
    opens_at: datetime
    closes_at: datetime
    open: bool
    commitment: str | None = Field(description="Hex SHA-256 over the ASCII bytes `<code>:<nonce>`.")
    committed_at: datetime | None
    code: str | None = Field(description="After the close only.")
    nonce: str | None = Field(description="After the close only.")


class ChallengeCalendar(BaseModel):
    """Every challenge chosen from ``from`` to ``to`` (UTC days, both included), by day then preset, at most 31 days
    a page."""

    first_day: date = Field(description="The request's `from` (default: today).")
    last_day: date = Field(
        description="The last day this page covers: the request's `to`, or the 31st day from `from` when the range is"
        " longer (then `next_from` says where the rest starts). A `to` before `from` is an empty range."
    )
    challenges: list[CalendarChallenge]
    next_from: date | None = Field(description="The `from` of the next page; null: the range ends on this page.")
