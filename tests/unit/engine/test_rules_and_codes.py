"""Rule sets, deal codes and the dealing algorithm, pinned by golden vectors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pyramide.engine import (
    DealCode,
    InvalidDealCodeError,
    InvalidLayoutError,
    InvalidRulesError,
    Layout,
    Rules,
    all_rule_sets,
    random_deal_code,
)
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.engine.dealing import splitmix64
from tests.support.layouts import doc_layout

GOLDEN = json.loads((Path(__file__).parents[2] / "golden" / "deals-py1.json").read_text())


def test_the_app_rules_are_n() -> None:
    assert Rules().segment == "N"
    assert Rules().to_json() == {
        "recycles": None,
        "stock_waste_pairs": False,
        "cover_pairs": False,
        "strict_win": False,
    }


def test_every_rule_set_has_its_own_segment_and_round_trips() -> None:
    rule_sets = all_rule_sets()
    assert len(rule_sets) == 11 * 2 * 2 * 2
    segments = {r.segment for r in rule_sets}
    assert len(segments) == len(rule_sets)
    for rules in rule_sets:
        assert Rules.from_segment(rules.segment) == rules
        assert Rules.from_segment(rules.segment.lower()) == rules
        assert Rules.from_json(rules.to_json()) == rules


@pytest.mark.parametrize(
    ("segment", "expected"),
    [
        ("2S", Rules(recycles=2, stock_waste_pairs=True)),
        ("0", Rules(recycles=0)),
        ("C", Rules(cover_pairs=True)),
        ("W", Rules(strict_win=True)),
        ("9SCW", Rules(9, True, True, True)),
    ],
)
def test_segments(segment: str, expected: Rules) -> None:
    assert Rules.from_segment(segment) == expected
    assert expected.segment == segment


@pytest.mark.parametrize("segment", ["", "NS", "SC2", "CS", "10", "X", "SS", "WC", "U"])
def test_non_canonical_segments_are_refused(segment: str) -> None:
    with pytest.raises(InvalidRulesError):
        Rules.from_segment(segment)


@pytest.mark.parametrize(
    "data",
    [
        {"recycles": 10},
        {"recycles": -1},
        {"recycles": True},
        {"recycles": "2"},
        {"strict_win": 0},
        {"cover_pairs": "yes"},
        {"jokers": True},
        [],
        "N",
    ],
)
def test_rules_json_is_read_strictly(data: object) -> None:
    with pytest.raises(InvalidRulesError) as error:
        Rules.from_json(data)
    assert error.value.code == "invalid_rules"


def test_splitmix64_is_the_standard_generator() -> None:
    outputs = splitmix64(0)
    assert next(outputs) == 0xE220A8397B1DCDAF  # the published first output for seed 0
    for seed, expected in GOLDEN["splitmix64"].items():
        outputs = splitmix64(int(seed))
        assert [f"{next(outputs):016x}" for _ in expected] == expected


@pytest.mark.parametrize("deal", GOLDEN["deals"], ids=lambda d: d["code"])
def test_golden_deals_never_change(deal: dict[str, object]) -> None:
    code = DealCode.parse(str(deal["code"]))
    assert code.to_json() == deal
    assert str(code) == deal["code"]


def test_golden_long_form_of_the_documents_layout() -> None:
    (expected,) = GOLDEN["layouts"]
    code = DealCode.for_layout(doc_layout())
    assert code.to_json() == expected
    assert DealCode.parse(expected["code"]).deal() == doc_layout()


def test_deals_put_28_cards_in_the_pyramid_one_on_the_waste_and_23_in_the_stock() -> None:
    layout = DealCode.parse("PY1-N-AAAAAAS").deal()
    assert (len(layout.pyramid), len(layout.waste), len(layout.stock)) == (28, 1, 23)


@pytest.mark.parametrize(
    "text",
    [
        "PY1-N-AAAAAAS",
        "py1-n-aaaaaas",
        "  PY1-N-AAAAAAS\n",
        "PY1NAAAAAAS",
        "PY1--N--AAAAAAS",
        "PY1-N–AAAAAAS",
        "-PY1-N-AAAAAAS-",
        "PY1 N AAAAAAS",
        "PY1-NAAAAAAS",
    ],
)
def test_codes_are_read_as_people_paste_them(text: str) -> None:
    assert str(DealCode.parse(text)) == "PY1-N-AAAAAAS"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "PY1",
        "PY1-N",
        "PY2-N-AAAAAAS",
        "PY1-X-AAAAAAS",
        "PY1-N-AAAAAA",
        "PY1-N-AAAAAAAA",
        "PY1-N-AAAAAA1",
        "PY1-NN-AAAAAAS",
        "PY1-N-AAAAAÁS",
        "PY1-N-LZ" + "A" * 48,
        "PY1-N-LA" + "Z" * 48,
        "QY1-N-AAAAAAS",
        "PY1-CS-AAAAAAS",
    ],
)
def test_anything_else_is_an_invalid_deal_code(text: str) -> None:
    with pytest.raises(InvalidDealCodeError) as error:
        DealCode.parse(text)
    assert error.value.code == "invalid_deal_code"


def test_the_rules_ride_in_the_code_and_do_not_change_the_cards() -> None:
    plain, variant = DealCode.parse("PY1-N-HELLOPY"), DealCode.parse("PY1-2SC-HELLOPY")
    assert variant.rules == Rules(recycles=2, stock_waste_pairs=True, cover_pairs=True)
    assert plain.deal() == variant.deal()


def test_number_letters_are_base_26() -> None:
    assert DealCode.parse("PY1-N-AAAAAAB").number == 1
    assert DealCode.parse("PY1-N-AAAAABA").number == 26
    assert DealCode.parse("PY1-N-ZZZZZZZ").number == DEAL_COUNT - 1


def test_random_deals_draw_a_uniform_number() -> None:
    seen: list[int] = []

    def randbelow(bound: int) -> int:
        seen.append(bound)
        return 12345

    code = random_deal_code(Rules(recycles=1), randbelow=randbelow)
    assert seen == [DEAL_COUNT]
    assert code.number == 12345 and code.rules == Rules(recycles=1)
    assert len({random_deal_code().number for _ in range(50)}) > 45


def test_a_layout_by_hand_gets_a_long_code_that_reproduces_it() -> None:
    layout = doc_layout()
    for waste_count in (0, 1, 5, 24):
        rest = layout.waste + layout.stock
        moved = Layout(layout.pyramid, rest[:waste_count], rest[waste_count:])
        for rules in (Rules(), Rules(recycles=0, strict_win=True)):
            code = DealCode.for_layout(moved, rules)
            parsed = DealCode.parse(str(code))
            assert parsed == code and parsed.deal() == moved and parsed.rules == rules


def test_deal_json_round_trips_and_keeps_a_matching_code() -> None:
    code = DealCode.parse("PY1-2S-QWERTYU")
    data = code.to_json()
    assert DealCode.from_json(data) == code
    assert DealCode.from_json({k: v for k, v in data.items() if k != "rules"}) == code
    del data["code"]
    assert DealCode.from_json(data) == DealCode.for_layout(code.deal(), code.rules)


def test_edited_layout_json_gets_its_own_long_code() -> None:
    data = DealCode.parse("PY1-N-QWERTYU").to_json()
    data["stock"].reverse()
    code = DealCode.from_json(data)
    assert code.layout is not None and str(code).startswith("PY1-N-L")
    assert list(code.deal().stock) == list(reversed(DealCode.parse("PY1-N-QWERTYU").deal().stock))


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(pyramid=d["pyramid"][:6]),
        lambda d: d["pyramid"][2].append("AS"),
        lambda d: d["stock"].append(d["stock"][0]),
        lambda d: d["stock"].pop(),
        lambda d: d["waste"].append("XX"),
        lambda d: d.update(stock="AS"),
        lambda d: d.update(pyramid=None),
    ],
)
def test_bad_layouts_are_refused_with_a_reason(change) -> None:
    data = DealCode.parse("PY1-N-QWERTYU").to_json()
    change(data)
    with pytest.raises(InvalidLayoutError) as error:
        DealCode.from_json(data)
    assert error.value.code == "invalid_layout" and error.value.detail
