"""Games' bodies: dealing, moves, taps, the snapshot, hints and the record."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

from pydantic import BaseModel, Discriminator, Field, StringConstraints, Tag
from typing_extensions import TypedDict

from pyramide.service.deals.schemas import Analysis, LayoutBody, RulesBody, RuleSet
from pyramide.service.http.schemas import CARD_PATTERN, CardCode, ChallengeIdText, Count, DealCodeText, StrictModel
from pyramide.service.status import GameStatus

GameParStatus = Literal["known", "unwinnable", "unknown", "pending", "sealed"]
GAME_PAR = (
    "The deal's par (the moves of its shortest winning line, as `getDeal` gives it) once the game is finished (won,"
    " lost or abandoned) and the par is known; null while the game runs, while its par is not known (see"
    " `par_status`), and for a daily challenge's game until the challenge closes."
)
GAME_PAR_STATUS = (
    "Null while the game runs (the page shows `getDeal`'s par beside the move counter). Once finished: `known`,"
    " `unwinnable`, `unknown` or `pending` as `getDeal`'s `par_status` says (the par is worked out off the request"
    " path from the finish; the move that finishes the game answers `pending`: read the game again);"
    " `sealed` for a daily challenge's game until the challenge closes, whatever is known of its par."
)
OVER_PAR = "For a won game whose par is known: its moves minus the par (0: a game at par); null otherwise."


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


class ChallengeGameBody(StrictModel):
    """The caller's one attempt at an open daily challenge: its cards stay sealed (no code, no hints, no
    analysis) until the challenge closes."""

    challenge: ChallengeIdText
    explain_errors: bool | None = None


def _deal_kind(body: object) -> str:
    """Which body a createGame request is, by the key it carries: so that a mistake is reported against that body
    alone, not against every member of the union."""
    keys = body if isinstance(body, dict) else vars(body) if isinstance(body, BaseModel) else {}
    for key in ("code", "layout", "challenge"):
        if key in keys:
            return f"{key}-body"
    return "random-body"


CreateGameBody = Annotated[
    Annotated[CodeGameBody, Tag("code-body")]
    | Annotated[LayoutGameBody, Tag("layout-body")]
    | Annotated[ChallengeGameBody, Tag("challenge-body")]
    | Annotated[RandomGameBody, Tag("random-body")],
    Discriminator(_deal_kind),
]


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


MoveObject = Annotated[PairMove | KingMove | DrawMove | RecycleMove | UndoMove, Field(discriminator="type")]
_CARD = CARD_PATTERN[1:-1]
MOVE_NOTATION_PATTERN = rf"^(?:[DdRrUu]|{_CARD}(?:\+{_CARD})?)$"
"""A move as the service writes it in ``legal_moves``, hints and records: ``D`` (draw), ``R`` (turn over), ``U``
(undo), a king (``KH``) or a pair (``2S+JH``)."""
MoveNotation = Annotated[
    str,
    StringConstraints(pattern=MOVE_NOTATION_PATTERN, max_length=16),
    Field(description="A move in the service's notation, as `legal_moves` lists it: `2S+JH`, `KH`, `D`, `R`, `U`."),
]


def _move_kind(body: object) -> str:
    """Which move body a request is: notation for a string, else an object, so that a mistake is reported against
    that kind alone (as :func:`_deal_kind` does for createGame)."""
    return "notation" if isinstance(body, str) else "object"


MoveBody = Annotated[
    Annotated[MoveObject, Tag("object")] | Annotated[MoveNotation, Tag("notation")], Discriminator(_move_kind)
]


class CardTap(StrictModel):
    card: CardCode


class StockTap(StrictModel):
    target: Literal["stock"]


def _tap_kind(body: object) -> str:
    keys = body if isinstance(body, dict) else vars(body) if isinstance(body, BaseModel) else {}
    return "card-tap" if "card" in keys else "stock-tap"


TapBody = Annotated[
    Annotated[CardTap, Tag("card-tap")] | Annotated[StockTap, Tag("stock-tap")], Discriminator(_tap_kind)
]


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


class Snapshot(BaseModel):
    """The whole visible state of a game; every game response is one."""

    id: UUID
    code: str | None = Field(
        description="The deal code, to share and replay the deal; null for a daily challenge's game until the"
        " challenge closes (the code would show the face-down cards)."
    )
    challenge: str | None = Field(None, description="The daily challenge this game is an attempt at; null: none.")
    rules: RuleSet
    version: Count = Field(description="Goes up by one with every change; also the ETag.")
    status: GameStatus = Field(
        description="`in_progress`, `won`, `stuck` (no move is left; undo may still bring it back into play) or"
        " `abandoned`; never `lost`."
    )
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
    par: Annotated[int, Field(ge=1)] | None = Field(description=GAME_PAR)
    par_status: GameParStatus | None = Field(description=GAME_PAR_STATUS)
    over_par: int | None = Field(description=OVER_PAR)


class Hint(Analysis):
    move: str | None = Field(description="The next move of that line; null when there is none.")


class GameRecord(BaseModel):
    """Every operation of a game in order, in move notation; replaying it from the code reproduces the game."""

    id: UUID
    code: str | None = Field(
        description="The deal code, to share and replay the deal; null for a daily challenge's game until the"
        " challenge closes (the code would show the face-down cards)."
    )
    challenge: str | None = Field(None, description="The daily challenge this game is an attempt at; null: none.")
    rules: RuleSet
    moves: list[str]
    record: str = Field(description="The moves separated by spaces.")
    par: Annotated[int, Field(ge=1)] | None = Field(description=GAME_PAR)
    par_status: GameParStatus | None = Field(description=GAME_PAR_STATUS)
    over_par: int | None = Field(description=OVER_PAR)


class GameSummary(BaseModel):
    """One of the player's games, as a list of games shows it."""

    id: UUID
    code: str | None = Field(description="The deal code, as the snapshot shows it (null while sealed).")
    challenge: str | None = Field(None, description="The daily challenge this game is an attempt at; null: none.")
    rules: RuleSet
    status: GameStatus = Field(
        description="`in_progress`, `won`, `lost` (no move is left; undo may still bring it back into play) or"
        " `abandoned`; never `stuck`."
    )
    score: Count
    moves: Count
    elapsed_ms: Count | None
    created_at: datetime
    updated_at: datetime = Field(description="The last change.")


class GamesPage(BaseModel):
    entries: list[GameSummary]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null on the last one.")


class Position(BaseModel):
    """A game's board after some of its record's operations, replayed by the service's engine: what a replay
    shows at each step, read-only."""

    step: Count = Field(description="How many operations of the record were played to reach it (0: the deal).")
    steps: Count = Field(description="The number of operations in the record: the last step.")
    operation: str | None = Field(description="The operation that led here, in move notation; null at step 0.")
    status: GameStatus = Field(
        description="`in_progress`, `won` or `stuck` at that moment; the last step carries the game's status"
        " (`abandoned` included)."
    )
    score: Count
    moves: Count = Field(description="Removals, draws and turn-overs up to here; never goes down.")
    pyramid: Annotated[list[Slot], Field(min_length=28, max_length=28)]
    waste: Waste
    stock: Stock
    recycles: RecyclesState


class ReviewedPosition(BaseModel):
    """One position of a finished game's record, as the solver judges it."""

    step: Count = Field(description="How many operations of the record were played to reach it (0: the deal).")
    operation: str | None = Field(description="The operation that led here, in move notation; null at step 0.")
    winnable: bool | None = Field(
        description="Whether the game could still be won from here; null: not decided within the solver's budget."
    )
    moves_left: Count | None = Field(
        description="The fewest moves (removals, draws, turn-overs) that win from here; null when lost or not known."
    )
    on_shortest_line: bool | None = Field(
        description="Whether the operation that led here was on a shortest winning line from the step before (it"
        " left one move fewer); null at step 0 and when that is not known (the step before was lost or undecided)."
    )


class Continuation(BaseModel):
    """A shortest winning line from one step of the record."""

    step: Count = Field(description="The step it starts from (the query's `from`).")
    line: list[str] | None = Field(
        description="The moves, in move notation; replayed from that step they win. Null: lost or not known."
    )
    moves: Count | None = Field(description="How many moves the line has (that step's `moves_left`).")


class GameReview(BaseModel):
    """A finished game's review by the solver: every position of its record, from the deal (step 0) to the end."""

    id: UUID
    status: GameStatus = Field(description="The game's final status: `won`, `stuck` or `abandoned`.")
    steps: Count = Field(description="The number of operations in the record: the last step.")
    point_of_no_return: Count | None = Field(
        description="The first step from which the game could no longer be won (0: the deal itself cannot be won);"
        " null when it was won, or never proven lost."
    )
    positions: list[ReviewedPosition] = Field(description="Every step, 0 to `steps`.")
    continuation: Continuation | None = Field(
        description="With `?from=<step>`: a shortest winning line from that step; null without it."
    )


class CertificateClaims(BaseModel):
    """What a result certificate states (its JWS payload, ``docs/certificates.md``)."""

    v: int = Field(description="The payload's format: 1.")
    game: UUID
    code: str = Field(description="The deal code: replaying `record` from it under `rules` must reach a win.")
    rules: RuleSet
    record: str = Field(description="Every operation in order, in move notation, separated by spaces.")
    moves: int = Field(description="The game's move count (as its snapshot showed it).")
    elapsed_ms: int | None = Field(description="Server time from the first move to the win.")
    started_at: datetime = Field(description="The first move (the deal, for a game won without one).")
    finished_at: datetime = Field(description="The win.")
    player: str | None = Field(description="The player's shown name when signed; null: none chosen.")
    challenge: str | None = Field(description="The daily challenge the game was an attempt at; null: none.")
    tier: Literal["clean", "assisted"] | None = Field(
        description="A challenge win's tier (`clean`: no undo and no hint); null for a game of no challenge."
    )
    hints: int = Field(0, ge=0, description="Hints the game used: the service's word (a hint is not in the record).")
    undos: int = Field(0, ge=0, description="Operations undone (each is a `U` in the record).")
    signed_at: datetime = Field(
        description="When the certificate was signed (not a JWT `iat`: a verifier's clock has no say in it)."
    )


class Certificate(BaseModel):
    """A won game's result certificate: a compact JWS (EdDSA, Ed25519) and what it states, for reading."""

    certificate: str = Field(
        description="The compact JWS: check it with the key of its `kid` from `/.well-known/jwks.json`, then replay"
        " `record` from `code` (`pyramide verify`, or the recipe in docs/certificates.md)."
    )
    kid: str = Field(description="The id of the key that signed it.")
    claims: CertificateClaims = Field(description="The JWS payload as signed (trust it only once verified).")


class JsonWebKey(BaseModel):
    """An Ed25519 public key (RFC 8037) that signs certificates."""

    kty: Literal["OKP"]
    crv: Literal["Ed25519"]
    x: str
    kid: str
    use: Literal["sig"]
    alg: Literal["EdDSA"]


class JsonWebKeySet(BaseModel):
    """Every key whose certificates verify: the signing one first, then those rotated out but still honoured."""

    keys: list[JsonWebKey]
