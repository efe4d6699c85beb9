"""Every stable code the engine emits, as one enum: illegal moves, unreadable input and tap feedback. Clients
branch on these strings; the catalogue in :mod:`pyramide.engine.messages` gives each its text."""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    """A code as clients see it (the member's value)."""

    CARD_COVERED = "card_covered"
    SUM_MUST_BE_13 = "sum_must_be_13"
    NO_MORE_MOVES = "no_more_moves"
    CARD_REMOVED = "card_removed"
    NOT_FREE = "not_free"
    NOT_A_KING = "not_a_king"
    SAME_CARD = "same_card"
    STOCK_EMPTY = "stock_empty"
    STOCK_NOT_EMPTY = "stock_not_empty"
    WASTE_EMPTY = "waste_empty"
    NO_RECYCLES_LEFT = "no_recycles_left"
    GAME_OVER = "game_over"
    NOTHING_TO_UNDO = "nothing_to_undo"
    INVALID_CARD = "invalid_card"
    INVALID_DEAL_CODE = "invalid_deal_code"
    INVALID_RULES = "invalid_rules"
    INVALID_LAYOUT = "invalid_layout"
    INVALID_MOVE = "invalid_move"
    INVALID_STATE = "invalid_state"
    SELECTED = "selected"
    DESELECTED = "deselected"
    REMOVED = "removed"
    DRAWN = "drawn"
    RECYCLED = "recycled"
    UNDONE = "undone"
    WON = "won"
