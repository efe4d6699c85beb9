"""Move notation, and every reason a move is refused, with the state left untouched."""

from __future__ import annotations

import pytest

from pyramide.engine import (
    DRAW,
    RECYCLE,
    UNDO,
    Game,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    RemoveKing,
    RemovePair,
    Rules,
    parse_card,
    parse_move,
)
from pyramide.engine.moves import format_record, parse_record
from tests.support.layouts import EASY_CLEARING, dead_end_game, doc_game, easy_game, make_layout

C = parse_card


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("KD", RemoveKing(C("KD"))),
        ("10C+3S", RemovePair(C("10C"), C("3S"))),
        ("D", DRAW),
        ("R", RECYCLE),
        ("U", UNDO),
    ],
)
def test_notation_round_trips(text: str, move: Move) -> None:
    assert parse_move(text) == move
    assert move.notation() == text
    assert str(move) == text


@pytest.mark.parametrize(
    ("text", "canonical"),
    [("kd", "KD"), ("tc+3s", "10C+3S"), (" 10♣+3♠ ", "10C+3S"), ("draw", "D"), ("Recycle", "R"), ("undo", "U")],
)
def test_notation_is_read_leniently_and_written_canonically(text: str, canonical: str) -> None:
    assert parse_move(text).notation() == canonical


@pytest.mark.parametrize("text", ["", "X", "KD+", "+3S", "10C+3S+KD", "1C", "DD", "10C 3S"])
def test_bad_notation_is_an_invalid_move(text: str) -> None:
    with pytest.raises(InvalidMoveError) as error:
        parse_move(text)
    assert error.value.code == "invalid_move"


def test_a_pair_is_the_same_in_either_order() -> None:
    assert RemovePair(C("10C"), C("3S")) == RemovePair(C("3S"), C("10C"))
    assert len({RemovePair(C("10C"), C("3S")), RemovePair(C("3S"), C("10C"))}) == 1


def test_records_round_trip() -> None:
    record = "KD 10C+3S D D R U"
    assert format_record(parse_record(record)) == record


def _refused(game: Game, move: Move) -> str:
    before = game.copy()
    with pytest.raises(IllegalMoveError) as error:
        game.play(move)
    assert game == before, "a refused move changes nothing"
    assert not game.is_legal(move)
    return error.value.code


def test_every_refusal_has_its_code() -> None:
    game = doc_game()
    assert _refused(game, UNDO) == "nothing_to_undo"
    assert _refused(game, parse_move("JS")) == "not_a_king"
    assert _refused(game, parse_move("KH")) == "card_covered"
    assert _refused(game, parse_move("7C+7C")) == "same_card"
    assert _refused(game, parse_move("7C+7S")) == "sum_must_be_13"
    assert _refused(game, parse_move("6D+7S")) == "not_free", "a card in the stock"
    assert _refused(game, RECYCLE) == "stock_not_empty"
    game.play(parse_move("KD"))
    assert _refused(game, parse_move("KD")) == "card_removed"
    game.play(DRAW)
    assert _refused(game, parse_move("7D+6S")) == "not_free", "a waste card beneath the top"
    assert _refused(game, parse_move("AC+QC")) == "card_covered", "covered beats the sum"


def test_stock_and_waste_refusals() -> None:
    rows = "JD / 6C 7H / AS 4D QS / 5H 3D 6H 8S / KH KC AD KS 9C / QC 2C 8D 10D 10S JS / 7C 10C 3H 4H 3S KD 7S"
    game = Game.from_layout(make_layout(rows, "", None), Rules())
    assert len(game.stock) == 24 and game.waste == ()
    game.play(DRAW)
    game.play(parse_move("3S+10C"))
    assert _refused(game, parse_move("10C+3H")) == "card_removed"
    while game.stock:
        game.play(DRAW)
    assert _refused(game, DRAW) == "stock_empty"


def test_waste_empty_refusal() -> None:
    game = dead_end_game()
    assert game.stock == () and game.waste == ()
    assert _refused(game, RECYCLE) == "waste_empty"
    assert _refused(game, DRAW) == "stock_empty"


def test_game_over_after_a_win() -> None:
    game = easy_game()
    for move in parse_record(EASY_CLEARING):
        game.play(move)
    assert _refused(game, DRAW) == "game_over"
    assert _refused(game, UNDO) == "game_over"
    assert game.undo_available == 0
