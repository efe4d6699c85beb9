"""The solver's twins of the engine's rules (:mod:`pyramide.solver.twins`) say exactly what the engine says, under
every rule set the engine knows: pairing as ``cards.partner`` and ``cards.values_pair``, what lies on a card as
``pyramid.is_free`` and ``Game.is_free``, a won position as ``Game.is_won``."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pyramide.engine import DealCode, Game, Move, RemovePair, Rules, all_rule_sets
from pyramide.engine.cards import card_value, partner, values_pair
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.engine.pyramid import FULL, SLOTS, is_free
from pyramide.solver.position import from_game
from pyramide.solver.twins import lying_on, pair, partner_of, won
from tests.support.layouts import easy_game

RULE_SETS = all_rule_sets()
VALUES = range(1, 14)


def test_the_rule_sets_are_every_preset_and_variant() -> None:
    """The rule sets the twins are proven under are all the engine knows: 88, each segment once."""
    assert len(RULE_SETS) == len({rules.segment for rules in RULE_SETS}) == 88
    assert {Rules.from_segment(rules.segment) for rules in RULE_SETS} == set(RULE_SETS)


def test_the_pairing_twins_are_the_engines_for_every_two_values() -> None:
    for value in VALUES:
        assert partner_of(value) == partner(value)
        for other in VALUES:
            assert pair(value, other) == values_pair(value, other)
            assert pair(value, other) == (partner_of(value) == other)


@settings(max_examples=300, deadline=None)
@given(present=st.integers(0, FULL), slot=st.integers(0, SLOTS - 1))
def test_what_lies_on_a_card_decides_freeness_as_the_engine_does(present: int, slot: int) -> None:
    """On any mask, a card there is free exactly when no card is left lying on it (and only cards of the mask
    lie on it)."""
    covering = lying_on(present, slot)
    assert covering & ~present == 0
    assert is_free(present, slot) == (bool(present >> slot & 1) and not covering)


def _agrees(game: Game) -> None:
    """Every twin agrees with the engine on this game as it stands."""
    deal, position = from_game(game, pooled=False)
    assert won(position.present, position.left, game.rules.strict_win) == game.is_won, game.code
    for slot, card in enumerate(game.layout.pyramid):
        there_and_free = bool(game.present >> slot & 1) and not lying_on(game.present, slot)
        assert there_and_free == game.is_free(card), (game.code, slot)
    for move in game.legal_moves():
        if isinstance(move, RemovePair):
            first, second = (card_value(card) for card in move.cards)
            assert pair(first, second) and partner_of(first) == second
    assert deal.rules == game.rules


def _play(game: Game, chooser: random.Random, moves: int, greed: float) -> None:
    """Play ``moves`` moves (fewer if none is left), a removal first with probability ``greed``, checking the twins
    at every position on the way."""
    _agrees(game)
    for _ in range(moves):
        legal = game.legal_moves()
        if not legal:
            return
        removals: list[Move] = [m for m in legal if m.notation() not in ("D", "R")] or legal
        game.play(chooser.choice(removals if chooser.random() < greed else legal))
        _agrees(game)


@settings(max_examples=200, deadline=None)
@given(
    rules=st.sampled_from(RULE_SETS),
    number=st.integers(0, DEAL_COUNT - 1),
    easy=st.booleans(),
    seed=st.integers(0, 2**32),
    greed=st.floats(0, 1),
)
def test_the_twins_agree_with_the_engine_along_random_play(
    rules: Rules, number: int, easy: bool, seed: int, greed: float
) -> None:
    """Under any rule set, from a random deal or one that is easily cleared, played at random (more or less keen to
    remove), every position: won as the engine says, each pyramid card free as it says, each pair it offers a pair."""
    game = easy_game(rules) if easy else Game(DealCode(rules, number=number))
    _play(game, random.Random(seed), 120, greed)


def test_the_won_twin_meets_every_kind_of_end() -> None:
    """Played greedily, the easy deal is won under every rule set but the strict win without stock–waste pairs
    (its stock cannot leave then: cleared but not won); both kinds of end are checked against the engine."""
    ends = {}
    for rules in RULE_SETS:
        game = easy_game(rules)
        _play(game, random.Random(0), 200, 1.0)
        ends[rules] = (game.present, game.is_won)
    assert all(present == 0 for present, _ in ends.values())
    assert {rules for rules, (_, is_won) in ends.items() if not is_won} == {
        rules for rules in RULE_SETS if rules.strict_win and not rules.stock_waste_pairs
    }
