"""The rules of Pyramide as a pure library: no I/O, deterministic, fast.

The names below are the engine's public surface; everything else is an implementation detail.
"""

from pyramide.engine.cards import Card, card_code, card_value, parse_card
from pyramide.engine.deal_codes import DealCode, random_deal_code
from pyramide.engine.errors import (
    IllegalMoveError,
    InvalidCardError,
    InvalidDealCodeError,
    InvalidInputError,
    InvalidLayoutError,
    InvalidMoveError,
    InvalidRulesError,
    InvalidStateError,
    PyramideError,
)
from pyramide.engine.game import HISTORY_LIMIT, Game
from pyramide.engine.layout import Layout
from pyramide.engine.messages import CATALOGUE, LOCALES, message
from pyramide.engine.moves import (
    DRAW,
    RECYCLE,
    UNDO,
    Draw,
    Move,
    Recycle,
    RemoveKing,
    RemovePair,
    Undo,
    parse_move,
)
from pyramide.engine.operations import Feedback, Operation, Outcome, Status, TapResult, Undone
from pyramide.engine.rules import APP_RULES, Rules, all_rule_sets
from pyramide.engine.serialization import dump_game, load_game
from pyramide.engine.taps import tap_card, tap_stock

__all__ = [
    "APP_RULES",
    "CATALOGUE",
    "DRAW",
    "HISTORY_LIMIT",
    "LOCALES",
    "RECYCLE",
    "UNDO",
    "Card",
    "DealCode",
    "Draw",
    "Feedback",
    "Game",
    "IllegalMoveError",
    "InvalidCardError",
    "InvalidDealCodeError",
    "InvalidInputError",
    "InvalidLayoutError",
    "InvalidMoveError",
    "InvalidRulesError",
    "InvalidStateError",
    "Layout",
    "Move",
    "Operation",
    "Outcome",
    "PyramideError",
    "Recycle",
    "RemoveKing",
    "RemovePair",
    "Rules",
    "Status",
    "TapResult",
    "Undo",
    "Undone",
    "all_rule_sets",
    "card_code",
    "card_value",
    "dump_game",
    "load_game",
    "message",
    "parse_card",
    "parse_move",
    "random_deal_code",
    "tap_card",
    "tap_stock",
]
