"""The API's request and response bodies as pydantic models: strict (no ``false`` as ``0``, no extra keys) and with
every constraint in annotated types, so that the OpenAPI schema says exactly what the service accepts."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints
from typing_extensions import TypedDict

from pyramide.engine.rules import MAX_RECYCLES
from pyramide.service.players.name_chars import NAME_CHARACTERS

SPACE_CHARACTERS = (0x20, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x202F, 0x205F, 0x3000)
"""Unicode's space separators (category Zs)."""

_SEPARATORS = r"[\s\-‐‑‒–—―−_]*"
CARD_PATTERN = r"^(10|[2-9AJQKTajqkt])[CDHScdhs♣♦♥♠]$"
DEAL_CODE_PATTERN = (
    rf"^\s*[Pp][Yy]1{_SEPARATORS}(?:[Nn]|[0-9][Ss]?[Cc]?[Ww]?|[Ss][Cc]?[Ww]?|[Cc][Ww]?|[Ww]){_SEPARATORS}"
    r"(?:[A-Za-z]{7}|[Ll][A-Ya-y][A-Za-z]{48})\s*$"
)
IDEMPOTENCY_KEY_PATTERN = r"^[\x21-\x7e]{1,200}$"
CREATE_PLAYER_KEY_PATTERN = r"^[\x21-\x7e]{32,200}$"
"""createPlayer's Idempotency-Key is the only secret between a retry and the new player's token: at least 32
characters, such as a UUID or 32 random hex digits (122-128 random bits)."""

CardCode = Annotated[str, StringConstraints(pattern=CARD_PATTERN)]
DealCodeText = Annotated[str, StringConstraints(pattern=DEAL_CODE_PATTERN, max_length=80)]
Locale = Literal["hu", "en"]


def _whole_number(value: object) -> object:
    """JSON Schema's ``integer`` includes ``6.0``; ``true`` and ``"6"`` are not integers (and stay refused)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Recycles = Annotated[int, Field(ge=0, le=MAX_RECYCLES, strict=True), BeforeValidator(_whole_number)]
Count = Annotated[int, Field(ge=0)]


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RulesBody(StrictModel):
    """A rule set. Missing keys take the app's rules (``N``)."""

    recycles: Recycles | None = Field(None, description="Turn-overs of the waste allowed; null: without limit.")
    stock_waste_pairs: bool = Field(False, description="The card just drawn may pair with the waste card beneath.")
    cover_pairs: bool = Field(False, description="A card may pair with the single free card still covering it.")
    strict_win: bool = Field(False, description="All 52 cards must go, not only the pyramid.")


Row1 = Annotated[list[CardCode], Field(min_length=1, max_length=1)]
Row2 = Annotated[list[CardCode], Field(min_length=2, max_length=2)]
Row3 = Annotated[list[CardCode], Field(min_length=3, max_length=3)]
Row4 = Annotated[list[CardCode], Field(min_length=4, max_length=4)]
Row5 = Annotated[list[CardCode], Field(min_length=5, max_length=5)]
Row6 = Annotated[list[CardCode], Field(min_length=6, max_length=6)]
Row7 = Annotated[list[CardCode], Field(min_length=7, max_length=7)]
OtherCards = Annotated[list[CardCode], Field(max_length=24)]


class LayoutBody(StrictModel):
    """The JSON that ``pyramide deal --json`` prints: each of the 52 cards exactly once."""

    code: DealCodeText | None = Field(None, description="Kept when it deals exactly these cards.")
    rules: RulesBody | None = Field(None, description="Default: the code's rules, else N.")
    pyramid: tuple[Row1, Row2, Row3, Row4, Row5, Row6, Row7] = Field(description="Rows from the top, left to right.")
    waste: OtherCards = Field(description="Bottom to top.")
    stock: OtherCards = Field(description="In draw order, the next card first.")


class DealLayout(BaseModel):
    """A deal: its code, rules and cards."""

    code: str
    rules: RulesBody
    pyramid: list[list[str]]
    waste: list[str]
    stock: list[str]


# -- players ---------------------------------------------------------------------------------------------------


_SPACES = "".join(chr(c) for c in SPACE_CHARACTERS)
NAME_PATTERN = f"^[{_SPACES}]*[{NAME_CHARACTERS}][{_SPACES}{NAME_CHARACTERS}]*$"
_SPACE_RUNS = re.compile(f"[{_SPACES}]+")


def normalise_name(name: str) -> str:
    """NFC, every kind of space as one plain space, trimmed: what a leaderboard shows. Names that differ only in
    composition or spacing are the same name."""
    return _SPACE_RUNS.sub(" ", unicodedata.normalize("NFC", name)).strip()


PlayerName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=24, pattern=NAME_PATTERN),
    AfterValidator(normalise_name),
    Field(
        description="1-24 characters: letters, marks, digits, punctuation, symbols and spaces, at least one not a"
        " space. Kept in NFC, trimmed, each run of spaces as one. Control, format (bidi overrides, zero-width),"
        " private-use and unassigned characters are refused (422)."
    ),
]


class PlayerSettingsBody(StrictModel):
    locale: Locale | None = Field(None, description="Language of messages when Accept-Language names none.")
    explain_errors: bool | None = Field(None, description="Default for new games: explain refused taps.")
    name: PlayerName | None = Field(None, description="Shown beside the player's wins on leaderboards.")


class CreatePlayerBody(StrictModel):
    locale: Locale = "hu"
    explain_errors: bool = False
    name: PlayerName | None = Field(None, description="Shown beside the player's wins on leaderboards.")


class Player(BaseModel):
    id: UUID
    locale: Locale
    explain_errors: bool
    name: str | None = Field(description="Shown beside the player's wins on leaderboards; null: none chosen.")
    created_at: datetime


class CreatedPlayer(Player):
    token: str = Field(description="Bearer token for every game route. Shown once; stored only hashed.")


# -- games -----------------------------------------------------------------------------------------------------


class RandomGameBody(StrictModel):
    """A uniformly random deal under ``rules``; with ``winnable_only``, dealt again until the solver proves the
    deal can be won."""

    rules: RulesBody | None = None
    explain_errors: bool | None = None
    winnable_only: bool = False


class CodeGameBody(StrictModel):
    """The deal of a pasted code, under the code's rules."""

    code: DealCodeText
    explain_errors: bool | None = None


class LayoutGameBody(StrictModel):
    """A layout chosen by hand (the JSON that ``pyramide deal --json`` and ``GET /v1/deals/{code}`` give)."""

    layout: LayoutBody
    explain_errors: bool | None = None


CreateGameBody = CodeGameBody | LayoutGameBody | RandomGameBody


class PairMove(StrictModel):
    type: Literal["pair"]
    cards: Annotated[list[CardCode], Field(min_length=2, max_length=2)]


class KingMove(StrictModel):
    type: Literal["king"]
    card: CardCode


class DrawMove(StrictModel):
    type: Literal["draw"]


class RecycleMove(StrictModel):
    type: Literal["recycle"]


class UndoMove(StrictModel):
    type: Literal["undo"]


MoveBody = Annotated[PairMove | KingMove | DrawMove | RecycleMove | UndoMove, Field(discriminator="type")]


class CardTap(StrictModel):
    card: CardCode


class StockTap(StrictModel):
    target: Literal["stock"]


TapBody = CardTap | StockTap


class Slot(TypedDict):
    """A pyramid slot (a typed dict, not a model: 28 of them in every snapshot, validated twice as fast)."""

    row: Annotated[int, Field(ge=1, le=7)]
    col: Annotated[int, Field(ge=1, le=7)]
    card: Annotated[str | None, Field(description="The card, or null once removed.")]
    free: bool


class Waste(TypedDict):
    count: Count
    top: str | None
    cards: Annotated[list[str], Field(description="The face-up waste cards, bottom to top.")]


class Stock(TypedDict):
    count: Annotated[Count, Field(description="Face-down cards; their order is never shown.")]


class RecyclesState(TypedDict):
    used: Count
    left: Annotated[Count | None, Field(description="null: without limit.")]


class Feedback(TypedDict):
    code: str
    message: Annotated[str | None, Field(description="Localised; null when the game does not show it.")]


GameStatus = Literal["in_progress", "won", "stuck", "abandoned"]


class Snapshot(BaseModel):
    """The whole visible state of a game; every game response is one."""

    id: UUID
    code: str
    rules: RulesBody
    version: Count = Field(description="Goes up by one with every change; also the ETag.")
    status: GameStatus
    score: Count
    moves: Count = Field(description="Removals, draws and turn-overs; never goes down.")
    elapsed_ms: Count | None = Field(description="From the first move to the win (or to now); null before it.")
    pyramid: Annotated[list[Slot], Field(min_length=28, max_length=28)]
    waste: Waste
    stock: Stock
    selected: str | None
    undo_available: Count
    recycles: RecyclesState
    legal_moves: list[str] = Field(description="In move notation: KD, 10C+3S, D (draw), R (turn-over).")
    explain_errors: bool
    feedback: Feedback | None = None
    created_at: datetime
    finished_at: datetime | None


class Analysis(BaseModel):
    """What the solver proved; ``winnable`` and ``max_removable`` are null when it ran out of time or budget."""

    winnable: bool | None
    max_removable: Annotated[int, Field(ge=0, le=28)] | None
    line: list[str] = Field(description="A line of play that wins, or removes the most cards, in move notation.")
    states: Count
    elapsed_ms: Annotated[float, Field(ge=0)]


class Hint(Analysis):
    move: str | None = Field(description="The next move of that line; null when there is none.")


class DealAnalysis(Analysis):
    code: str


class GameRecord(BaseModel):
    """Every operation of a game in order, in move notation; replaying it from the code reproduces the game."""

    id: UUID
    code: str
    rules: RulesBody
    moves: list[str]
    record: str = Field(description="The moves separated by spaces.")


# -- statistics and leaderboards -------------------------------------------------------------------------------


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
    code: str


class LeaderboardEntry(RankedWin):
    player: UUID = Field(description="The player's id (each player appears once, with their best win).")
    name: str | None = Field(None, description="The player's name when the win was entered; null: none chosen.")


class WonGamesPage(BaseModel):
    """The caller's won games, best first. Pass ``next_cursor`` as ``cursor`` for the next page; null at the end."""

    entries: list[WonGame]
    next_cursor: str | None


class Leaderboard(BaseModel):
    """The wins on one deal code (its rules included), each player's best once, best first. Pass ``next_cursor``
    as ``cursor`` for the next page; null at the end."""

    code: str
    rules: RulesBody
    entries: list[LeaderboardEntry]
    next_cursor: str | None


# -- rules catalogue, problems, health -------------------------------------------------------------------------


class RulePreset(BaseModel):
    segment: str
    name: str
    description: str
    rules: RulesBody


class RuleVariant(BaseModel):
    key: str
    name: str
    description: str


class RulesCatalogue(BaseModel):
    presets: list[RulePreset]
    variants: list[RuleVariant]


class Problem(BaseModel):
    """RFC 9457 problem details, with a stable ``code``; ``title`` and ``detail`` in the caller's language."""

    type: str
    title: str
    status: int
    detail: str
    code: str


class Health(BaseModel):
    status: Literal["ok"]
