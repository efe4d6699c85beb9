"""Path parameters read by the service itself, so that a malformed one gets the same answer as a well-formed one
that names nothing: a game id that is not a UUID is 404 ``game_not_found``, a deal code that does not fit its
pattern is 422 ``invalid_deal_code``. The schema still states the format and the pattern."""

from __future__ import annotations

import re
from typing import Annotated, Final
from uuid import UUID

from litestar.params import Parameter

from pyramide.engine import DealCode
from pyramide.engine.codes import Code
from pyramide.service.errors import DomainError, ErrorCode
from pyramide.service.http.problems import ProblemError
from pyramide.service.http.schemas import DEAL_CODE_PATTERN

_DEAL_CODE: Final = re.compile(DEAL_CODE_PATTERN)
_SHOWN: Final = 80
"""How much of a refused code a problem repeats."""

GameIdText = Annotated[
    str, Parameter(description="The game's id, as createGame answered it.", schema_extra={"format": "uuid"})
]
IdText = Annotated[str, Parameter(description="An id (a UUID).", schema_extra={"format": "uuid"})]
"""An app's, a player's or an entry's id in a path: text that names none is 404 (:func:`id_of`), as a missing one."""
StepText = Annotated[
    str,
    Parameter(
        description="How many operations of the game's record to replay (0: the deal).",
        schema_extra={"pattern": "^[0-9]{1,6}$"},
    ),
]
"""A replay's step in a path: text that is not a small whole number is 404 ``step_not_found``, as a step past the
end (:func:`step_of`)."""
DealCodeText = Annotated[
    str,
    Parameter(description="A deal code, e.g. PY1-N-AAAAAAS.", schema_extra={"pattern": DEAL_CODE_PATTERN}),
]


def game_id_of(text: str) -> UUID:
    """The game id; 404 ``game_not_found`` for text that names no game, as for an id that is not there."""
    try:
        return UUID(text)
    except ValueError:
        raise DomainError(ErrorCode.GAME_NOT_FOUND) from None


def id_of(text: str) -> UUID:
    """The id; 404 ``not_found`` for text that names nothing, as for an id that is not there."""
    try:
        return UUID(text)
    except ValueError:
        raise DomainError(ErrorCode.NOT_FOUND) from None


def step_of(text: str) -> int:
    """The step; 404 ``step_not_found`` for text that is not a whole number of at most six digits."""
    if not (text.isascii() and text.isdigit() and len(text) <= 6):
        raise DomainError(ErrorCode.STEP_NOT_FOUND)
    return int(text)


def deal_code_of(text: str) -> DealCode:
    """The deal code: 422 ``invalid_deal_code`` when the text does not fit the pattern; a well-formed code that
    names no deal (beyond the number of orders of a deck) is the engine's refusal, 409."""
    if not _DEAL_CODE.fullmatch(text):
        raise ProblemError(422, Code.INVALID_DEAL_CODE, text=text[:_SHOWN])
    return DealCode.parse(text)
