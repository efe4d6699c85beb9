"""A deal's cards as they lie before the first move: the pyramid, the waste and the stock."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyramide.engine.cards import DECK, Card, card_code, parse_card
from pyramide.engine.errors import InvalidCardError, InvalidLayoutError
from pyramide.engine.pyramid import ROWS, SLOTS, slot_index

OTHER_CARDS = 52 - SLOTS


@dataclass(frozen=True, slots=True)
class Layout:
    """The 52 cards of a deal: 28 pyramid cards by rows (top first, left to right), the waste from bottom to top
    and the stock in draw order (the next card to be drawn first)."""

    pyramid: tuple[Card, ...]
    waste: tuple[Card, ...]
    stock: tuple[Card, ...]

    def __post_init__(self) -> None:
        if len(self.pyramid) != SLOTS:
            raise InvalidLayoutError(f"the pyramid needs {SLOTS} cards, not {len(self.pyramid)}")
        cards = (*self.pyramid, *self.waste, *self.stock)
        if len(cards) != len(DECK) or set(cards) != set(DECK):
            doubles = sorted(card_code(c) for c, n in Counter(cards).items() if n > 1)
            missing = sorted(card_code(c) for c in set(DECK) - set(cards))
            raise InvalidLayoutError(
                "a layout holds each of the 52 cards exactly once"
                + (f"; twice: {' '.join(doubles)}" if doubles else "")
                + (f"; missing: {' '.join(missing)}" if missing else "")
            )

    def row(self, row: int) -> tuple[Card, ...]:
        """The cards of 0-based ``row``, left to right."""
        start = slot_index(row, 0)
        return self.pyramid[start : start + row + 1]

    def to_json(self) -> dict[str, Any]:
        """The layout as card codes: ``pyramid`` as 7 rows, ``waste`` bottom to top, ``stock`` in draw order."""
        return {
            "pyramid": [[card_code(c) for c in self.row(r)] for r in range(ROWS)],
            "waste": [card_code(c) for c in self.waste],
            "stock": [card_code(c) for c in self.stock],
        }

    @classmethod
    def from_json(cls, data: object) -> Layout:
        """Read the JSON that :meth:`to_json` writes; ``InvalidLayoutError`` says what is wrong."""
        if not isinstance(data, Mapping):
            raise InvalidLayoutError("a layout is a JSON object with pyramid, waste and stock")
        rows = data.get("pyramid")
        if not isinstance(rows, Sequence) or isinstance(rows, str) or len(rows) != ROWS:
            raise InvalidLayoutError(f"pyramid must be a list of {ROWS} rows")
        pyramid: list[Card] = []
        for number, row in enumerate(rows):
            if not _is_list(row) or len(row) != number + 1:
                raise InvalidLayoutError(f"row {number + 1} of the pyramid must list {number + 1} cards")
            pyramid.extend(_cards(row, f"pyramid row {number + 1}"))
        waste = _cards(data.get("waste", []), "waste")
        stock = _cards(data.get("stock", []), "stock")
        return cls(tuple(pyramid), waste, stock)


def _is_list(value: object) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _cards(values: object, where: str) -> tuple[Card, ...]:
    if not _is_list(values):
        raise InvalidLayoutError(f"{where} must be a list of card codes")
    assert isinstance(values, Sequence)
    try:
        return tuple(parse_card(v) for v in values)
    except InvalidCardError as error:
        raise InvalidLayoutError(f"{where}: {error.detail}") from None
