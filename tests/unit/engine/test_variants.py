"""Each rule variant, shown where it plays differently from the app's rules (N)."""

from __future__ import annotations

import pytest

from pyramide.engine import (
    DRAW,
    RECYCLE,
    UNDO,
    Game,
    IllegalMoveError,
    RemovePair,
    Rules,
    Status,
    parse_card,
    parse_move,
    tap_card,
    tap_stock,
)
from pyramide.engine.moves import parse_record
from tests.support.layouts import DOC_ROWS, EASY_CLEARING, codes, doc_game, easy_game, make_layout

C = parse_card
N = Rules()


def _code_of(error: pytest.ExceptionInfo[IllegalMoveError]) -> str:
    return error.value.code


# -- limited turn-overs ----------------------------------------------------------------------------------------


def _draw_all(game: Game) -> None:
    while game.stock:
        game.play(DRAW)


def test_no_turn_over_at_all() -> None:
    limited, unlimited = doc_game(Rules(recycles=0)), doc_game(N)
    for game in (limited, unlimited):
        _draw_all(game)
    assert RECYCLE in unlimited.legal_moves()
    assert RECYCLE not in limited.legal_moves()
    with pytest.raises(IllegalMoveError) as error:
        limited.play(RECYCLE)
    assert _code_of(error) == "no_recycles_left"
    assert tap_stock(limited).feedback.code == "no_recycles_left"
    assert limited.recycles_left == 0 and unlimited.recycles_left is None


def test_two_turn_overs_then_no_more() -> None:
    game = doc_game(Rules(recycles=2))
    for left in (2, 1):
        _draw_all(game)
        assert game.recycles_left == left
        assert tap_stock(game).feedback.code == "recycled"
    _draw_all(game)
    assert game.recycles_left == 0 and RECYCLE not in game.legal_moves()


def test_limited_turn_overs_end_in_a_dead_end_where_n_goes_on() -> None:
    rows = "JC / JD JH / JS 10C 10D / 10H 10S KC KD / KH KS 3S 4C 4D / 4H 4S 5C 5D 5H 5S / 2C 2D 2H 2S 3C 3D 3H"
    layout = make_layout(rows, "AC")
    limited, app = Game.from_layout(layout, Rules(recycles=1)), Game.from_layout(layout, N)
    for game in (limited, app):
        for _ in range(2 * 24):
            if game.legal_moves():
                game.play(game.legal_moves()[0])
    assert limited.status is Status.STUCK and limited.legal_moves() == []
    assert tap_stock(limited).feedback.code == "no_more_moves"
    assert app.status is Status.IN_PROGRESS


def test_undo_of_a_turn_over_gives_it_back() -> None:
    game = doc_game(Rules(recycles=1))
    _draw_all(game)
    waste = game.waste
    game.play(RECYCLE)
    game.play(UNDO)
    assert game.recycles_left == 1 and game.waste == waste and game.stock == ()


# -- stock–waste pairing ---------------------------------------------------------------------------------------

SW = Rules(stock_waste_pairs=True)


def _sw_game(rules: Rules) -> Game:
    """The document's deal with 6♦ next in the stock: drawn onto 7♦, the two make 13."""
    layout = make_layout(DOC_ROWS, "7D")
    stock = (C("6D"), *(c for c in layout.stock if c != C("6D")))
    return Game.from_layout(make_layout(DOC_ROWS, "7D", " ".join(codes(stock))), rules)  # type: ignore[arg-type]


def test_the_card_just_drawn_pairs_with_the_waste_card_beneath() -> None:
    pair = RemovePair(C("6D"), C("7D"))
    sw, app = _sw_game(SW), _sw_game(N)
    for game in (sw, app):
        game.play(DRAW)
    assert pair in sw.legal_moves() and pair not in app.legal_moves()
    with pytest.raises(IllegalMoveError) as error:
        app.play(pair)
    assert _code_of(error) == "not_free"
    operation = sw.play(pair)
    assert operation.points == 0, "waste cards score nothing"
    assert sw.waste == () and sw.score == 0 and sw.moves == 2


def test_a_removal_elsewhere_keeps_the_pairing_open_and_a_draw_ends_it() -> None:
    pair = RemovePair(C("6D"), C("7D"))
    game = _sw_game(SW)
    game.play(DRAW)
    game.play(parse_move("KD"))
    assert pair in game.legal_moves()
    game.play(DRAW)
    game.play(UNDO)
    assert pair in game.legal_moves(), "undo restores the card just drawn"
    game.play(DRAW)
    assert all(not isinstance(m, RemovePair) or C("7D") not in m.cards for m in game.legal_moves())


def test_stock_waste_pair_by_taps() -> None:
    sw, app = _sw_game(SW), _sw_game(N)
    for game in (sw, app):
        tap_stock(game)
        assert tap_card(game, C("6D")).feedback.code == "selected"
    assert tap_card(sw, C("7D")).feedback.code == "removed"
    with pytest.raises(IllegalMoveError) as error:
        tap_card(app, C("7D"))
    assert _code_of(error) == "not_free"
    assert app.selection == C("6D")


# -- pairing with the covering card ----------------------------------------------------------------------------

COVER = Rules(cover_pairs=True)


def test_a_card_pairs_with_its_last_covering_card() -> None:
    """After K♦ goes, 10♠ in row 6 is covered only by 3♠, which is free: 3 + 10 = 13."""
    pair = RemovePair(C("3S"), C("10S"))
    cover, app = doc_game(COVER), doc_game(N)
    for game in (cover, app):
        game.play(parse_move("KD"))
    assert pair in cover.legal_moves() and pair not in app.legal_moves()
    with pytest.raises(IllegalMoveError) as error:
        app.play(pair)
    assert _code_of(error) == "card_covered"
    assert cover.play(pair).points == 20 and cover.score == 30


def test_a_card_still_covered_twice_cannot_pair_even_under_the_variant() -> None:
    game = doc_game(COVER)
    with pytest.raises(IllegalMoveError) as error:
        game.play(RemovePair(C("3S"), C("10S")))
    assert _code_of(error) == "card_covered"


def test_cover_pair_by_taps() -> None:
    cover, app = doc_game(COVER), doc_game(N)
    for game in (cover, app):
        tap_card(game, C("KD"))
        tap_card(game, C("3S"))
    assert tap_card(cover, C("10S")).feedback.code == "removed"
    assert tap_card(app, C("10S")).feedback.code == "card_covered"
    assert app.selection == C("3S")


def test_cover_pair_tap_that_misses_13_keeps_the_selection() -> None:
    game = doc_game(COVER)
    tap_card(game, C("KD"))
    tap_card(game, C("7S"))  # 7♠ alone covers J♠ now: 7 + 11 = 18
    result = tap_card(game, C("JS"))
    assert result.feedback.code == "sum_must_be_13" and game.selection == C("7S")


# -- strict win ------------------------------------------------------------------------------------------------


def _clear_pyramid(game: Game) -> None:
    for move in parse_record(EASY_CLEARING):
        game.play(move)


def test_the_relaxed_win_needs_only_the_pyramid() -> None:
    game = easy_game(N)
    _clear_pyramid(game)
    assert game.status is Status.WON and game.score == 280 and game.moves == 16
    assert len(game.stock) == 23
    with pytest.raises(IllegalMoveError) as error:
        game.play(UNDO)
    assert _code_of(error) == "game_over"
    with pytest.raises(IllegalMoveError):
        tap_stock(game)


def test_the_strict_win_without_stock_waste_pairs_is_stuck_once_the_pyramid_is_gone() -> None:
    game = easy_game(Rules(strict_win=True))
    _clear_pyramid(game)
    assert game.status is Status.STUCK and game.legal_moves() == []
    assert game.score == 280
    with pytest.raises(IllegalMoveError) as error:
        game.play(DRAW)
    assert _code_of(error) == "no_more_moves"
    game.play(UNDO)
    assert game.status is Status.IN_PROGRESS


def test_the_strict_win_with_stock_waste_pairs_needs_every_card() -> None:
    game = easy_game(Rules(stock_waste_pairs=True, strict_win=True))
    _clear_pyramid(game)
    assert game.status is Status.IN_PROGRESS
    for _ in range(11):
        tap_stock(game)
        top, beneath = game.waste[-1], game.waste[-2]
        game.play(RemovePair(top, beneath))
        assert game.status is Status.IN_PROGRESS
        game.play(DRAW)
    tap_stock(game)
    tap_card(game, game.waste[-1])
    result = tap_card(game, game.waste[-2])
    assert result.feedback.code == "won"
    assert game.status is Status.WON and game.score == 280 and game.stock == game.waste == ()
