"""Layouts the tests deal by hand, above all the rules document's own PY1-N-AAAAAAS."""

from __future__ import annotations

from collections.abc import Iterable

from pyramide.engine import Game, Layout, Move, RemoveKing, RemovePair, Rules, card_code, parse_card
from pyramide.engine.cards import DECK, Card

# The rules document's deal PY1-N-AAAAAAS, row by row; the document leaves the stock's order open.
DOC_ROWS = "JD / 6C 7H / AS 4D QS / 5H 3D 6H 8S / KH KC AD KS 9C / QC 2C 8D 10D 10S JS / 7C 10C 3H 4H 3S KD 7S"
DOC_WASTE = "7D"


def cards(text: str) -> tuple[Card, ...]:
    return tuple(parse_card(c) for c in text.replace("/", " ").split())


def make_layout(rows: str, waste: str, stock: str | None = None) -> Layout:
    """A layout from card codes; the stock defaults to the remaining cards in deck order."""
    pyramid, waste_cards = cards(rows), cards(waste)
    if stock is None:
        used = set(pyramid) | set(waste_cards)
        stock_cards = tuple(c for c in DECK if c not in used)
    else:
        stock_cards = cards(stock)
    return Layout(pyramid, waste_cards, stock_cards)


def doc_layout() -> Layout:
    return make_layout(DOC_ROWS, DOC_WASTE)


def doc_game(rules: Rules | None = None, *, explain_errors: bool = False) -> Game:
    return Game.from_layout(doc_layout(), rules or Rules(), explain_errors=explain_errors)


def codes(items: Iterable[Card | None]) -> list[str | None]:
    """Card codes, None kept, for readable assertions."""
    return [None if c is None else card_code(c) for c in items]


def row(game: Game, number: int) -> list[str | None]:
    """Row ``number`` (from 1) as codes, None where a card is gone."""
    start = (number - 1) * number // 2
    return codes(game.pyramid[start : start + number])


# A pyramid whose rows each pair off within themselves, bottom row first, and a stock that pairs off card by card
# under stock–waste pairing: the shortest way to a cleared pyramid and, with the variants, an empty table.
EASY_ROWS = "KC / 6C 7C / KD 5C 8C / 3C 10C 4C 9C / KH AC QC 2C JC / 4D 9D 5D 8D 6D 7D / KS AD QD 2D JD 3D 10D"
EASY_WASTE = "AH"
EASY_STOCK = "QH 2H JH 3H 10H 4H 9H 5H 8H 6H 7H AS QS 2S JS 3S 10S 4S 9S 5S 8S 6S 7S"
EASY_CLEARING = "KS AD+QD 2D+JD 3D+10D 4D+9D 5D+8D 6D+7D KH AC+QC 2C+JC 3C+10C 4C+9C KD 5C+8C 6C+7C KC"


def easy_game(rules: Rules | None = None) -> Game:
    return Game.from_layout(make_layout(EASY_ROWS, EASY_WASTE, EASY_STOCK), rules or Rules())


# Two aces cover two queens at the top; every other pyramid card pairs with one stock card, and no two pyramid cards
# pair with each other: playing everything else leaves stock and waste empty and the aces stranded.
DEAD_END_ROWS = "QC / QD AC / AD 2C 2D / 2H 2S 3C 3D / 3H 3S 4C 4D 4H / 4S 5C 5D 5H 5S 6C / 6D 6H 6S AH AS KC KD"
DEAD_END_STOCK = "QH QS JC JD JH JS 10C 10D 10H 10S 9C 9D 9H 9S 8C 8D 8H 8S 7C 7D 7H 7S KS"
STRANDED = ("QC", "QD", "AC", "AD")


def dead_end_start() -> Game:
    return Game.from_layout(make_layout(DEAD_END_ROWS, "KH", DEAD_END_STOCK), Rules())


def dead_end_moves(moves_left: int = 0) -> list[Move]:
    """The moves that play the dead-end deal until ``moves_left`` removals remain (0: stuck)."""
    game, played = dead_end_start(), list[Move]()
    stranded = set(cards(" ".join(STRANDED)))
    for _ in range(2000):
        usable = [m for m in game.legal_moves() if m.notation() not in ("D", "R") and not _touches(m, stranded)]
        remaining = len(game.waste) + len(game.stock)
        if (remaining <= moves_left and usable) or (not usable and not remaining):
            return played
        move = usable[0] if usable else game.legal_moves()[-1]
        game.play(move)
        played.append(move)
    raise AssertionError("the dead-end deal did not run out")


def dead_end_game(moves_left: int = 0) -> Game:
    game = dead_end_start()
    for move in dead_end_moves(moves_left):
        game.play(move)
    return game


def _touches(move: Move, stranded: set[Card]) -> bool:
    return bool(set(removed_cards(move)) & stranded)


def removed_cards(move: Move) -> tuple[Card, ...]:
    if isinstance(move, RemoveKing):
        return (move.card,)
    if isinstance(move, RemovePair):
        return move.cards
    return ()
