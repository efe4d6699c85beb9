from __future__ import annotations

import pytest

from pyramide.engine import InvalidCardError, card_code, card_value, parse_card
from pyramide.engine.cards import DECK


def test_all_52_codes_round_trip() -> None:
    assert [parse_card(card_code(c)) for c in DECK] == list(DECK)
    assert len({card_code(c) for c in DECK}) == 52


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("AS", "AS"),
        ("as", "AS"),
        (" 10h ", "10H"),
        ("TH", "10H"),
        ("th", "10H"),
        ("Q♣", "QC"),
        ("7♦", "7D"),
        ("k♥", "KH"),
        ("J♠", "JS"),
    ],
)
def test_codes_are_read_as_people_type_them(text: str, code: str) -> None:
    assert card_code(parse_card(text)) == code


@pytest.mark.parametrize("text", ["", "A", "1S", "11H", "ZZ", "10", "KX", "AS ", "A S", "♠A"])
def test_anything_else_is_an_invalid_card(text: str) -> None:
    if text == "AS ":
        assert card_code(parse_card(text)) == "AS"
        return
    with pytest.raises(InvalidCardError) as error:
        parse_card(text)
    assert error.value.code == "invalid_card"


def test_values() -> None:
    ranks = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
    assert [card_value(parse_card(r + "C")) for r in ranks] == list(range(1, 14))
