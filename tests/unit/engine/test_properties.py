"""Invariants over random deals, rule sets and random legal play (hypothesis)."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyramide.engine import (
    DRAW,
    RECYCLE,
    UNDO,
    DealCode,
    Game,
    IllegalMoveError,
    Layout,
    RemovePair,
    Status,
    all_rule_sets,
    dump_game,
    load_game,
    tap_card,
    tap_stock,
)
from pyramide.engine.cards import DECK, Card, card_value, complement, is_king, partner, values_pair
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.engine.messages import CATALOGUE
from pyramide.engine.moves import format_record, parse_record
from tests.support.removals import EVERY_REMOVAL

RULE_SETS = all_rule_sets()
EVERY_MOVE = [*EVERY_REMOVAL, DRAW, RECYCLE]

deal_codes = st.builds(
    lambda number, rules: DealCode(rules, number=number),
    st.integers(0, DEAL_COUNT - 1),
    st.sampled_from(RULE_SETS),
)
hand_layouts = st.builds(
    lambda order, waste: Layout(tuple(order[:28]), tuple(order[28 : 28 + waste]), tuple(order[28 + waste :])),
    st.permutations(DECK),
    st.integers(0, 24),
)
PLAY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _on_table(game: Game) -> list[Card]:
    return [c for c in game.pyramid if c is not None] + list(game.stock) + list(game.waste)


def _table(game: Game) -> tuple[object, ...]:
    return (game.pyramid, game.stock, game.waste, game.score, game.recycles_used, game.fresh_draw, game.selection)


def _check_invariants(game: Game, removed: int) -> None:
    table = _on_table(game)
    assert len(table) == len(set(table)), "no card is doubled"
    assert len(table) + removed == 52, "all 52 cards are accounted for"
    assert game.score == 10 * sum(c is None for c in game.pyramid)
    assert load_game(dump_game(game)) == game
    legal = game.legal_moves()
    assert set(legal) == {m for m in EVERY_MOVE if game.is_legal(m)}
    assert game.legal_notations() == [m.notation() for m in legal], "the snapshot's list, in the same order"
    assert game.stock_count == len(game.stock)
    if game.is_won:
        assert game.status is Status.WON and legal == []
    else:
        assert (game.status is Status.STUCK) == (legal == [])


@PLAY
@given(code=deal_codes, choices=st.lists(st.integers(0, 10_000), min_size=1, max_size=150))
def test_random_legal_play_keeps_every_invariant(code: DealCode, choices: list[int]) -> None:
    game, removed, played = Game(code), 0, []
    _check_invariants(game, removed)
    for choice in choices:
        legal = game.legal_moves()
        if not legal:
            break
        move = legal[choice % len(legal)]
        before = game.copy()
        operation = game.play(move)
        played.append(move)
        removed += len(operation.removed)  # type: ignore[union-attr]
        _check_invariants(game, removed)
        if choice % 5 == 0 and not game.is_won:
            game.play(UNDO)
            played.append(UNDO)
            removed -= len(operation.removed)  # type: ignore[union-attr]
            assert game.moves == before.moves + 1, "the counter never goes down"
            assert _table(game) == _table(before), "undo restores the previous state except the counter"
            expected = before.history[-99:] if before.undo_available == 100 else before.history
            assert game.history == expected, "undo takes back exactly the last operation"
            _check_invariants(game, removed)
    replayed = Game(code)
    for move in parse_record(format_record(played)):
        replayed.play(move)
    assert replayed == game, "a game record replays to the same state"


@given(
    code=deal_codes,
    first=st.sampled_from(DECK),
    second=st.sampled_from(DECK),
    choices=st.lists(st.integers(0, 10_000), max_size=60),
)
@PLAY
def test_partner_and_values_pair_agree_under_every_rule_set(
    code: DealCode, first: Card, second: Card, choices: list[int]
) -> None:
    """``partner`` (what the legal moves are listed by) and ``values_pair`` (what a removal is checked by) are one
    rule: on any table of any rule set, two cards pair exactly when one is the other's partner, and the pairs the
    game lists are exactly the pairs of free cards ``values_pair`` accepts."""
    a, b = card_value(first), card_value(second)
    assert values_pair(a, b) == (partner(a) == b) == (partner(b) == a) == (complement(first) == b)
    game = Game(code)
    for choice in choices:
        legal = game.legal_moves()
        if not legal:
            break
        game.play(legal[choice % len(legal)])
    free = [c for c in game.free_cards() if not is_king(c)]
    listed = {frozenset(m.cards) for m in game.legal_moves() if isinstance(m, RemovePair)}
    for x, y in itertools.combinations(free, 2):
        pairs = values_pair(card_value(x), card_value(y))
        assert pairs == (partner(card_value(x)) == card_value(y)) == (frozenset((x, y)) in listed)


@PLAY
@given(
    code=deal_codes,
    taps=st.lists(st.one_of(st.none(), st.sampled_from(DECK)), min_size=1, max_size=200),
    explain=st.booleans(),
)
def test_random_taps_never_corrupt_the_game(code: DealCode, taps: list[int | None], explain: bool) -> None:
    game, removed = Game(code, explain_errors=explain), 0
    for card in taps:
        before = game.copy()
        try:
            result = tap_stock(game) if card is None else tap_card(game, card)  # type: ignore[arg-type]
        except IllegalMoveError as error:
            assert game == before, "a refused tap changes nothing"
            assert error.code in CATALOGUE
            continue
        assert result.feedback.code in CATALOGUE
        assert (result.operation is None) == (game.moves == before.moves)
        if result.operation is not None:
            removed += len(result.operation.removed)
            assert game.selection is None
        else:
            assert game.present == before.present and game.stock == before.stock and game.waste == before.waste
        if game.selection is not None:  # a free card, or under a variant a partner tapped first (the rules' pair)
            paired = {card for move in game.legal_moves() if isinstance(move, RemovePair) for card in move.cards}
            assert game.is_free(game.selection) or game.selection in paired
            assert load_game(dump_game(game)) == game, "a game holding such a selection is stored and read back"
        _check_invariants(game, removed)


@given(code=deal_codes)
def test_deal_codes_round_trip(code: DealCode) -> None:
    text = str(code)
    assert DealCode.parse(text) == code
    assert DealCode.parse(f"  {text.lower().replace('-', '')} ") == code


@settings(max_examples=50)
@given(layout=hand_layouts, rules=st.sampled_from(RULE_SETS))
def test_long_form_codes_reproduce_any_layout(layout: Layout, rules: object) -> None:
    code = DealCode.for_layout(layout, rules)  # type: ignore[arg-type]
    assert DealCode.parse(str(code)).deal() == layout
    assert DealCode.from_json(code.to_json()) == code
    game = Game(code)
    assert load_game(dump_game(game)) == game
