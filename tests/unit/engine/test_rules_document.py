"""The rules document's own examples, played on its PY1-N-AAAAAAS layout dealt by hand."""

from __future__ import annotations

import pytest

from pyramide.engine import (
    DRAW,
    Game,
    IllegalMoveError,
    RemoveKing,
    RemovePair,
    Rules,
    Status,
    message,
    parse_card,
    parse_move,
    tap_card,
    tap_stock,
)
from tests.support.layouts import codes, dead_end_game, doc_game, make_layout, removed_cards, row

C = parse_card


def test_the_deal_matches_the_document() -> None:
    game = doc_game()
    assert row(game, 1) == ["JD"]
    assert row(game, 5) == ["KH", "KC", "AD", "KS", "9C"]
    assert row(game, 7) == ["7C", "10C", "3H", "4H", "3S", "KD", "7S"]
    assert codes(game.waste) == ["7D"]
    assert len(game.stock) == 23
    assert codes(game.free_cards()) == ["7C", "10C", "3H", "4H", "3S", "KD", "7S", "7D"]
    assert game.status is Status.IN_PROGRESS and game.score == 0 and game.moves == 0


def test_king_then_ten_and_three_by_taps() -> None:
    game = doc_game()
    result = tap_card(game, C("KD"))
    assert result.feedback.code == "removed"
    assert result.operation is not None and result.operation.move == RemoveKing(C("KD"))
    assert tap_card(game, C("10C")).feedback.code == "selected"
    assert game.selection == C("10C")
    result = tap_card(game, C("3S"))
    assert result.operation is not None and result.operation.move == parse_move("10C+3S")
    assert row(game, 7) == ["7C", None, "3H", "4H", None, None, "7S"]
    assert [c for c in row(game, 7) if c] == ["7C", "3H", "4H", "7S"]
    for number, expected in ((1, ["JD"]), (6, ["QC", "2C", "8D", "10D", "10S", "JS"])):
        assert row(game, number) == expected
    assert game.score == 30
    assert game.moves == 2
    assert len(game.stock) == 23 and codes(game.waste) == ["7D"]
    assert game.selection is None


def test_the_same_opening_as_explicit_moves() -> None:
    game = doc_game()
    assert game.play(parse_move("KD")).points == 10
    assert game.play(parse_move("3S+10C")).points == 20
    assert (game.score, game.moves) == (30, 2)


@pytest.mark.parametrize("explain", [False, True])
def test_tapping_the_covered_queen_does_nothing(explain: bool) -> None:
    game = doc_game(explain_errors=explain)
    before = game.copy()
    result = tap_card(game, C("QC"))
    assert result.feedback.code == "card_covered"
    assert result.operation is None
    assert game == before
    expected = "Ezt a lapot egy másik lap takarja" if explain else None
    assert result.feedback.message("hu", game.explain_errors) == expected
    with pytest.raises(IllegalMoveError) as error:
        game.play(RemovePair(C("QC"), C("AD")))
    assert error.value.code == "card_covered"
    assert game == before


@pytest.mark.parametrize("explain", [False, True])
def test_seven_and_seven_do_not_make_thirteen(explain: bool) -> None:
    game = doc_game(explain_errors=explain)
    tap_card(game, C("7C"))
    result = tap_card(game, C("7S"))
    assert result.feedback.code == "sum_must_be_13"
    assert result.feedback.message("hu", explain) == "Az összegnek ennyinek kell lennie: 13"
    assert result.feedback.message("en", explain) == "The sum must be: 13"
    assert game.selection == C("7S"), "the card touched second stays selected"
    assert (game.score, game.moves) == (0, 0)
    assert len(game.pyramid) == 28 and all(c is not None for c in game.pyramid)


def test_tapping_the_selected_card_again_clears_the_selection() -> None:
    game = doc_game()
    tap_card(game, C("7C"))
    assert tap_card(game, C("7C")).feedback.code == "deselected"
    assert game.selection is None


def test_a_king_on_the_waste_goes_with_one_tap_and_scores_nothing() -> None:
    rows = "JD / 6C 7H / AS 4D QS / 5H 3D 6H 8S / 7D KC AD KS 9C / QC 2C 8D 10D 10S JS / 7C 10C 3H 4H 3S KD 7S"
    game = Game.from_layout(make_layout(rows, "KH"), Rules())
    assert C("KH") in game.free_cards()
    result = tap_card(game, C("KH"))
    assert result.operation is not None and result.operation.move == RemoveKing(C("KH"))
    assert game.waste == () and game.score == 0 and game.moves == 1


def test_the_waste_top_pairs_with_a_free_pyramid_card() -> None:
    game = doc_game()
    game.play(DRAW)  # the stock in deck order starts with AC
    assert codes(game.waste) == ["7D", "AC"]
    tap_card(game, C("AC"))
    assert tap_card(game, C("7S")).feedback.code == "sum_must_be_13"
    game.play(DRAW)  # 3C, the next card in deck order that is not dealt elsewhere
    assert codes(game.waste) == ["7D", "AC", "3C"]
    game.play(parse_move("3C+10C"))
    assert game.score == 10 and codes(game.waste) == ["7D", "AC"]
    assert game.free_cards()[-1] == C("AC"), "the card beneath becomes the free waste top"


def test_the_stock_turns_over_in_the_same_order_without_limit() -> None:
    game = doc_game()
    order = game.stock
    for _ in range(3):
        while game.stock:
            tap_stock(game)
        assert game.waste == (parse_card("7D"), *order)
        assert tap_stock(game).feedback.code == "recycled"
        assert game.stock == (parse_card("7D"), *order)
        assert game.waste == ()
    assert game.recycles_used == 3 and game.recycles_left is None


def test_a_dead_end_says_no_more_possible_moves() -> None:
    """Stock and waste run empty with two aces covering two queens: nothing is left to play."""
    game = dead_end_game(moves_left=1)
    (final,) = [m for m in game.legal_moves() if removed_cards(m) and not set(codes(removed_cards(m))) & {"AC", "AD"}]
    assert game.status is Status.IN_PROGRESS
    for card in removed_cards(final):
        result = tap_card(game, card)
    assert result.feedback.code == "no_more_moves"
    assert result.feedback.message("hu", explain_errors=False) == "Nincs több lehetséges lépés"
    assert game.status is Status.STUCK
    assert game.stock == () and game.waste == ()
    assert game.legal_moves() == []
    assert codes(game.free_cards()) == ["AC", "AD"]
    assert tap_stock(game).feedback.code == "no_more_moves"
    assert game.undo_available > 0, "undo is still allowed at a dead end"


def test_not_stuck_while_cards_can_be_drawn_though_nothing_can_be_removed() -> None:
    rows = "JC / JD JH / JS 10C 10D / 10H 10S KC KD / KH KS 3S 4C 4D / 4H 4S 5C 5D 5H 5S / 2C 2D 2H 2S 3C 3D 3H"
    game = Game.from_layout(make_layout(rows, "AC"), Rules())
    for _ in range(3 * 25):
        assert game.status is Status.IN_PROGRESS
        legal = game.legal_moves()
        assert len(legal) == 1 and legal[0].notation() in ("D", "R")
        game.play(legal[0])
    assert game.score == 0 and game.recycles_used >= 2


def test_the_message_catalogue_quotes_the_document() -> None:
    assert message("card_covered", "hu") == "Ezt a lapot egy másik lap takarja"
    assert message("sum_must_be_13", "hu") == "Az összegnek ennyinek kell lennie: 13"
    assert message("no_more_moves", "hu") == "Nincs több lehetséges lépés"
