"""Deals' bodies: rules, layouts, the solver's analysis, the rules catalogue."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, Field

from pyramide.service.http.schemas import CardCode, Count, DealCodeText, PositiveWhole, Recycles, StrictModel

RECYCLES: Final = "Turn-overs of the waste allowed; null: without limit."
STOCK_WASTE_PAIRS: Final = "The card just drawn may pair with the waste card beneath."
COVER_PAIRS: Final = "A card may pair with the single free card still covering it."
STRICT_WIN: Final = "All 52 cards must go, not only the pyramid."


class RulesBody(StrictModel):
    """A rule set. Missing keys take the app's rules (``N``)."""

    recycles: Recycles | None = Field(None, description=RECYCLES)
    stock_waste_pairs: bool = Field(False, description=STOCK_WASTE_PAIRS)
    cover_pairs: bool = Field(False, description=COVER_PAIRS)
    strict_win: bool = Field(False, description=STRICT_WIN)


# Apart from RulesBody, whose keys a request may leave out: the schema requires all four here, none there (issue 44).
class RuleSet(BaseModel):
    """A game's or a deal's rule set, as it is sent: every key, `recycles` null when without limit."""

    recycles: Recycles | None = Field(description=RECYCLES)
    stock_waste_pairs: bool = Field(description=STOCK_WASTE_PAIRS)
    cover_pairs: bool = Field(description=COVER_PAIRS)
    strict_win: bool = Field(description=STRICT_WIN)


Row1 = Annotated[list[CardCode], Field(min_length=1, max_length=1)]
Row2 = Annotated[list[CardCode], Field(min_length=2, max_length=2)]
Row3 = Annotated[list[CardCode], Field(min_length=3, max_length=3)]
Row4 = Annotated[list[CardCode], Field(min_length=4, max_length=4)]
Row5 = Annotated[list[CardCode], Field(min_length=5, max_length=5)]
Row6 = Annotated[list[CardCode], Field(min_length=6, max_length=6)]
Row7 = Annotated[list[CardCode], Field(min_length=7, max_length=7)]
OtherCards = Annotated[list[CardCode], Field(max_length=24)]


def _rows_as_items(schema: dict[str, Any]) -> None:
    """The pyramid's schema with ``items`` (a row: a list of cards) beside its ``prefixItems`` (each row's
    length): true to what is validated, since ``maxItems`` leaves no row past the seventh, and what OpenAPI tools
    that predate JSON Schema's tuples need to type the pyramid as rows of cards (Spectral's ``array-items``)."""
    schema["items"] = {"type": "array", "items": schema["prefixItems"][0]["items"]}


PAR: Final = (
    "The number of moves (removals, draws and turn-overs) of the deal's shortest winning line under its rules; null"
    " until known, or when the deal is lost or the solver did not decide it within its budget (see `par_status`)."
)
PAR_STATUS: Final = (
    "`known`: `par` is set; `unwinnable`: no line wins; `unknown`: not decided within the solver's budget and time"
    " limit; `pending`: being worked out off the request path (read again later)."
)
ParStatusText = Literal["known", "unwinnable", "unknown", "pending"]


class LayoutBody(StrictModel):
    """The JSON that ``pyramide deal --json`` prints: each of the 52 cards exactly once."""

    code: DealCodeText | None = Field(None, description="Kept when it deals exactly these cards.")
    rules: RulesBody | None = Field(None, description="Default: the code's rules, else N.")
    pyramid: tuple[Row1, Row2, Row3, Row4, Row5, Row6, Row7] = Field(
        description="Rows from the top, left to right.", json_schema_extra=_rows_as_items
    )
    waste: OtherCards = Field(description="Bottom to top.")
    stock: OtherCards = Field(description="In draw order, the next card first.")
    par: PositiveWhole | None = Field(
        None, description="Ignored: `getDeal`'s, so that its body is accepted back as it came."
    )
    par_status: ParStatusText | None = Field(
        None, description="Ignored: `getDeal`'s, so that its body is accepted back as it came."
    )


class DealLayout(BaseModel):
    """A deal: its code, rules and cards, and its par once worked out."""

    code: str
    rules: RuleSet
    pyramid: list[list[str]]
    waste: list[str]
    stock: list[str]
    par: Annotated[int, Field(ge=1)] | None = Field(None, description=PAR)
    par_status: ParStatusText = Field("pending", description=PAR_STATUS)


class Analysis(BaseModel):
    """What the solver proved; ``winnable`` and ``max_removable`` are null when it ran out of time or budget."""

    winnable: bool | None
    max_removable: Annotated[int, Field(ge=0, le=28)] | None
    line: list[str] = Field(description="A line of play that wins, or removes the most cards, in move notation.")
    states: Count
    elapsed_ms: Annotated[float, Field(ge=0)]


class DealAnalysis(Analysis):
    code: str
    shortest: list[str] | None = Field(
        None,
        description="With `shortest=true`: a winning line with the fewest moves (removals, draws and turn-overs),"
        " in move notation; null when the deal cannot be won or none was found within the time limit.",
    )


class RulePreset(BaseModel):
    segment: str
    name: str
    description: str
    rules: RuleSet


class RuleVariant(BaseModel):
    key: str
    name: str
    description: str


class RulesCatalogue(BaseModel):
    presets: list[RulePreset]
    variants: list[RuleVariant]
