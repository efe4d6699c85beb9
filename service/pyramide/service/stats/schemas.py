"""Statistics' and leaderboards' bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, Field

from pyramide.service.deals.schemas import PAR, PAR_STATUS, ParStatusText, RuleSet
from pyramide.service.http.schemas import Count, StrictModel
from pyramide.service.stats.fairness import HoldReason


class PlayerStats(BaseModel):
    """A game counts once a move has been made; won, or lost when stuck or abandoned (once, for good)."""

    played: Count = Field(description="Games in which a move was made.")
    won: Count
    lost: Count = Field(description="Games that reached a dead end or were abandoned.")
    in_progress: Count = Field(
        description="Games played but neither won nor lost: still open, or left unfinished until they expired."
    )
    win_rate: Annotated[float, Field(ge=0, le=1)] = Field(description="won / played; 0 before any game.")
    current_streak: Count = Field(description="Wins in a row, up to the latest result.")
    best_streak: Count
    best_time_ms: Count | None = Field(description="The fastest win, first move to win; null before any win.")
    fewest_moves: Count | None = Field(description="The win with the fewest moves; null before any win.")
    average_time_ms: Count | None
    average_moves: Annotated[float, Field(ge=0)] | None
    hints_used: Count
    par_hits: Count = Field(
        description="Wins in exactly the deal's par (its shortest line's length). A win counts once its par is"
        " known (worked out after the win, counted on a later read); a daily challenge's win, after the close."
    )
    best_over_par: int | None = Field(
        description="The fewest moves over par among the wins whose par is known (0: a win at par); null before"
        " any such win."
    )
    since: datetime | None = Field(description="When the statistics were last reset; null if never.")


class RankedWin(BaseModel):
    """A won game in a ranked list: by time, then moves, then the earlier finish."""

    rank: Annotated[int, Field(ge=1)]
    elapsed_ms: Count = Field(description="Server time from the first move to the win.")
    moves: Count = Field(description="Removals, draws and turn-overs.")
    undos: Count
    hints: Count
    score: Count
    finished_at: datetime


class WonGame(RankedWin):
    game_id: UUID
    code: str | None = Field(description="The deal code; null for a daily challenge's game (see `challenge`).")
    challenge: str | None = Field(None, description="The daily challenge the game was an attempt at.")


Tier = Literal["clean", "assisted"]
Identity = Literal["app", "anonymous"]


class LeaderboardEntry(RankedWin):
    """A player's best win on a board: clean wins (no undo, no hint) rank before every assisted one, then by time,
    moves and the earlier finish."""

    player: UUID = Field(description="The player's id (each player appears once, with their best win).")
    name: str | None = Field(None, description="The player's name when the win was entered; null: none chosen.")
    tier: Tier = Field(
        "clean", description="`clean`: won without an undo and without a hint; `assisted`: used either (ranks after)."
    )
    identity: Identity = Field(
        "anonymous", description="`app`: a player an app vouches for (see `app`); `anonymous`: any other player."
    )
    app: str | None = Field(None, description="The app's name when the win was entered (`identity` `app`).")
    par: Annotated[int, Field(ge=1)] | None = Field(
        description="The deal's par (its shortest winning line's moves) once known; always null on a daily"
        " challenge's board.",
    )
    over_par: Annotated[int, Field(ge=0)] | None = Field(
        description="`moves` minus `par`: 0 is a win at par; null while the par is not known."
    )


class WonGamesPage(BaseModel):
    """The caller's won games, best first. Pass ``next_cursor`` as ``cursor`` for the next page; null at the end."""

    entries: list[WonGame]
    next_cursor: str | None


class Leaderboard(BaseModel):
    """The wins on one deal code (its rules included), each player's best once, best first. Pass ``next_cursor``
    as ``cursor`` for the next page; null at the end. Unverified: an open code's cards are known to anyone who has
    it (``GET /v1/deals/{code}`` shows them, the solver plays them), so a program can top this board; the daily
    challenges' boards are the verified ones."""

    code: str
    rules: RuleSet
    verified: Literal[False] = Field(
        False, description="Always false: anyone with the code can know every card. See the daily challenges."
    )
    par: Annotated[int, Field(ge=1)] | None = Field(description=PAR)
    par_status: ParStatusText = Field(description=PAR_STATUS)
    entries: list[LeaderboardEntry]
    next_cursor: str | None
    rank: Annotated[int, Field(ge=1)] | None = Field(
        description="With `around=me`: the caller's rank; null when not on the board, or without `around=me`."
    )
    percentile: Annotated[float, Field(ge=0, le=100)] | None = Field(
        description="With `around=me`: the share of the board's entries, in percent, the caller ranks level with or"
        " above; null when not on the board, or without `around=me`."
    )


ReviewStatus = Literal["pending", "accepted", "rejected"]


class ReviewDecisionBody(StrictModel):
    """Why a moderator accepts or rejects a held win: kept in the review and in the audit log."""

    reason: Annotated[str, Field(max_length=500)] = Field("", description="Why; up to 500 characters.")


class ReviewScreen(BaseModel):
    """What the screening found of a held win (``docs/fair-play.md``, Screening). Shown to moderators only: ``par``
    tells a sealed challenge's depth before its close."""

    par: Annotated[int, Field(ge=1)] | None = Field(description="The deal's par; null when not known in time.")
    length: Count | None = Field(description="The win's moves, as the screening counted them; null: no answer.")
    time_bound_ms: Count | None = Field(
        description="`par` × `line_move_ms`: the least time a person who knew the shortest line needs; null: no bound."
    )
    line_move_ms: Count = Field(description="The pace along a known line (`PYRAMIDE_MIN_LINE_MOVE_MS`); 0: off.")
    hidden_loss: int | None = Field(
        description="How much the win's early choices would have lost had the hidden stock been another order"
        " (compare `world_losses`); null: not weighed."
    )
    world_losses: list[int] = Field(
        description="The same loss in each of the stock orders the player could not tell from the real one."
    )
    worlds: Count = Field(description="Stock orders weighed (`PYRAMIDE_SCREEN_WORLDS`); 0: off.")
    decided: bool = Field(description="Whether the solver judged the win within its time limit.")


class Review(BaseModel):
    """A daily challenge's win held off the board, with why (``reasons``) and what a moderator needs to judge it:
    the player, the record, the moments each operation arrived and what the screening found."""

    id: UUID = Field(description="The review's id: the won game's.")
    challenge: str
    player: UUID
    name: str | None
    identity: Identity
    app: str | None = Field(description="The app's name for an app's player; null for an anonymous one.")
    status: ReviewStatus
    held_at: datetime
    decided_at: datetime | None
    decided_by: str | None = Field(description="`operator` or `app:<id>`; null while pending.")
    reason: str | None = Field(description="The moderator's reason for the decision; null while pending.")
    reasons: list[HoldReason] = Field(
        description="Why it was held: `cadence` (faster than `min_move_ms` a move), `faster_than_known_line` (in"
        " less than `screen.time_bound_ms`), `foresight` (early choices that paid off only for the still hidden"
        " stock order), `not_decided` (the screening could not judge it in time). A review held before reasons were"
        " kept says `cadence`."
    )
    screen: ReviewScreen | None = Field(description="What the screening found; null when it did not screen the win.")
    min_move_ms: Count = Field(description="The floor per move when the win was held.")
    median_interval_ms: Count | None = Field(description="The median interval between two operations.")
    per_move_ms: Count = Field(
        description="The mean interval: time from the first operation to the last over the intervals between them."
    )
    elapsed_ms: Count
    moves: Count
    undos: Count
    hints: Count
    tier: Tier
    operations: Count = Field(description="Operations (moves and undos) the game recorded.")
    times_ms: list[Count] = Field(
        description="When each operation arrived, in ms after the first (the first 500 operations)."
    )
    record: list[str] = Field(description="The operations in order, in move notation (the first 500).")


class ReviewsPage(BaseModel):
    """Held wins, pending first (oldest first), then decided ones (latest first). Pass ``next_cursor`` as ``cursor``
    for the next page; null at the end."""

    entries: list[Review]
    next_cursor: str | None
