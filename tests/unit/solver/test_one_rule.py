"""The solver's move generation is checked against the engine's, the one home of the rules, under every rule set:
the bitmask fast paths may be written for speed, but never say a different thing."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pyramide.engine import DealCode, Game, Move, RemoveKing, RemovePair, all_rule_sets
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.engine.pyramid import SLOTS
from pyramide.solver.pool import PoolSearch
from pyramide.solver.position import every_move, from_game, pyramid_only

RULE_SETS = all_rule_sets()


@st.composite
def games_in_play(draw: st.DrawFn) -> Game:
    """A random deal under any rule set, played at random for 0 to 80 moves."""
    game = Game(DealCode(draw(st.sampled_from(RULE_SETS)), number=draw(st.integers(0, DEAL_COUNT - 1))))
    chooser = random.Random(draw(st.integers(0, 2**32)))
    for _ in range(draw(st.integers(0, 80))):
        legal = game.legal_moves()
        if not legal:
            break
        game.play(chooser.choice(legal))
    return game


def _named(move: Move) -> tuple[str, frozenset[int]]:
    """A move as a set of cards: the engine and the solver may list a pair's cards in either order."""
    if isinstance(move, RemovePair):
        return ("pair", frozenset(move.cards))
    if isinstance(move, RemoveKing):
        return ("king", frozenset((move.card,)))
    return (move.notation(), frozenset())


def _inside_pyramid(game: Game, move: Move) -> bool:
    cards = move.cards if isinstance(move, RemovePair) else (move.card,) if isinstance(move, RemoveKing) else ()
    return bool(cards) and all(game.slots[c] >= 0 for c in cards)


@settings(max_examples=400, deadline=None)
@given(game=games_in_play())
def test_every_solver_move_is_an_engine_move_and_none_is_missing(game: Game) -> None:
    """Under every rule set, from any position, the general search's moves are exactly the engine's legal ones."""
    legal = game.legal_moves()
    if not legal and not game.is_won:
        return  # a dead end the engine knows by its own rule (nothing left to do); the solver finds no win there
    deal, position = from_game(game, pooled=False)
    assert {_named(m) for m, _ in every_move(deal, position)} == {_named(m) for m in legal}, game.code


@settings(max_examples=400, deadline=None)
@given(game=games_in_play())
def test_the_pyramid_fast_paths_pair_exactly_as_the_engine(game: Game) -> None:
    """The removals inside the pyramid, as the general search and the pool search compute them on bitmasks, are
    the engine's legal removals of pyramid cards only."""
    if game.is_won or not game.legal_moves():
        return
    expected = {_named(m) for m in game.legal_moves() if _inside_pyramid(game, m)}
    general = pyramid_only(game.layout.pyramid, game.present, game.rules.cover_pairs)
    pool = PoolSearch(game.layout.pyramid, game.waste + game.stock, game.rules.cover_pairs, game.rules.strict_win)
    assert {_named(m) for m, _ in general} == expected
    assert {_named(m) for m, _ in pool.inside(game.present)[1]} == expected
    for move, after in general:
        twin = game.copy()
        twin.play(move)
        assert twin.present == after and after.bit_count() < SLOTS
