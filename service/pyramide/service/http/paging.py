"""The one way every list endpoint pages: ``limit`` entries after ``cursor`` (the previous page's ``next_cursor``)."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar.params import QueryParameter

from pyramide.service.http.body import AnyRequest
from pyramide.service.http.problems import HttpCode, ProblemError
from pyramide.service.http.schemas import (
    BOARD_CURSOR_PATTERN,
    CURSOR_PATTERN,
    DEFAULT_PAGE,
    GAMES_CURSOR_PATTERN,
    MAX_PAGE,
    REVIEWS_CURSOR_PATTERN,
)
from pyramide.service.http.validation import MAX_ERRORS, unknown_parameter

Limit = Annotated[int, QueryParameter(ge=1, le=MAX_PAGE, description=f"Entries per page, 1 to {MAX_PAGE}.")]
Cursor = Annotated[
    str | None,
    QueryParameter(
        required=False,
        pattern=CURSOR_PATTERN,
        description="Where the page starts: the previous page's `next_cursor`; omit for the first page.",
    ),
]
GamesCursor = Annotated[
    str | None,
    QueryParameter(
        required=False,
        pattern=GAMES_CURSOR_PATTERN,
        description="Where the page starts: the previous page's `next_cursor`; omit for the first page.",
    ),
]
BoardCursor = Annotated[
    str | None,
    QueryParameter(
        required=False,
        pattern=BOARD_CURSOR_PATTERN,
        description="Where the page starts: the previous page's `next_cursor`; omit for the first page.",
    ),
]
ReviewsCursor = Annotated[
    str | None,
    QueryParameter(
        required=False,
        pattern=REVIEWS_CURSOR_PATTERN,
        description="Where the page starts: the previous page's `next_cursor`; omit for the first page.",
    ),
]
IdentityFilter = Annotated[
    Literal["app", "anonymous"] | None,
    QueryParameter(
        required=False,
        description="Only app players' entries (`app`) or only anonymous players' (`anonymous`), ranked among"
        " themselves; omit for every entry.",
    ),
]
DEFAULT_LIMIT = DEFAULT_PAGE
PAGING_PARAMETERS = frozenset({"limit", "cursor"})


def check_paging_query(request: AnyRequest, *also: str) -> None:
    """A list takes ``limit`` and ``cursor`` (and the filters ``also``) only: anything else is a client's mistake,
    said as 400, not ignored."""
    unknown = set(request.query_params) - PAGING_PARAMETERS - set(also)
    if unknown:
        names = sorted(unknown)[:MAX_ERRORS]
        raise ProblemError(
            400, HttpCode.BAD_REQUEST, errors=lambda locale: [unknown_parameter("query", n, locale) for n in names]
        )


AroundFilter = Annotated[
    Literal["me"] | None,
    QueryParameter(
        required=False,
        description="`me`: the caller's entry (bearer token required) with up to 5 entries above and below it,"
        " instead of a page from the top, and the caller's `rank` and `percentile`.",
    ),
]
