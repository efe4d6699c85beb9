"""``Game.outcome()`` against the rules document, on random play under every rule set (hypothesis).

The document: ``won`` when the pyramid is clear (under the strict win, all 52 cards); ``stuck`` when no removal,
draw or turn-over is possible, and under the strict win also once the pyramid is clear and drawing and turning
over can never bring a king or a stock–waste pair to the top; ``in_progress`` otherwise. The oracle below states
that from the table alone, without the engine's status code.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyramide.engine import UNDO, Game, Rules, Status, all_rule_sets, dump_game, load_game
from pyramide.engine.cards import Card, card_value, is_king
from pyramide.engine.deal_codes import DEAL_COUNT, DealCode
from pyramide.engine.moves import parse_record
from tests.support.layouts import EASY_CLEARING, easy_game
from tests.support.removals import EVERY_REMOVAL

RULE_SETS = all_rule_sets()
MOVES = 200


def _can_ever_leave(rules: Rules, stock: list[Card], waste: list[Card], fresh: bool, recycles_left: int | None) -> bool:
    """Whether drawing and turning over alone can bring a king, or a fresh stock–waste pair, to the waste top
    (``stock``: the next card last; ``waste``: the top last). Every state it walks through is new, so it ends."""
    seen: set[tuple[tuple[Card, ...], tuple[Card, ...], bool, int | None]] = set()
    while (tuple(stock), tuple(waste), fresh, recycles_left) not in seen:
        seen.add((tuple(stock), tuple(waste), fresh, recycles_left))
        if waste and is_king(waste[-1]):
            return True
        if (
            rules.stock_waste_pairs
            and fresh
            and len(waste) >= 2
            and card_value(waste[-1]) + card_value(waste[-2]) == 13
        ):
            return True
        if stock:
            waste, stock, fresh = [*waste, stock[-1]], stock[:-1], True
        elif waste and recycles_left != 0:
            stock, waste, fresh = waste[::-1], [], False
            recycles_left = None if recycles_left is None else recycles_left - 1
        else:
            return False
    return False


def _documented(game: Game) -> Status:
    rules = game.rules
    cleared = all(card is None for card in game.pyramid)
    rest = bool(game.stock or game.waste)
    if cleared and (not rules.strict_win or not rest):
        return Status.WON
    if cleared:  # the strict win with cards left in stock or waste
        stock, waste = list(reversed(game.stock)), list(game.waste)
        movable = _can_ever_leave(rules, stock, waste, game.fresh_draw, game.recycles_left)
        return Status.IN_PROGRESS if movable else Status.STUCK
    can_draw = bool(game.stock) or (bool(game.waste) and game.recycles_left != 0)
    can_remove = any(game.is_legal(move) for move in EVERY_REMOVAL)
    return Status.IN_PROGRESS if can_draw or can_remove else Status.STUCK


def _check(game: Game) -> None:
    outcome = game.outcome()
    assert outcome.status is _documented(game), (game.code, [m.notation() for m in game.legal_moves()])
    assert outcome.score == game.score
    assert outcome.decided == (outcome.status is not Status.IN_PROGRESS)
    assert outcome.final == (outcome.status is Status.WON)
    assert not (outcome.final and game.undo_available), "no undo after a win"
    assert (game.legal_moves() == []) == outcome.decided, "decided exactly when no move is left"
    assert load_game(dump_game(game)).outcome() == outcome, "what this state decided, not an earlier one"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rules=st.sampled_from(RULE_SETS),
    number=st.integers(0, DEAL_COUNT - 1),
    easy=st.integers(-2, 17),
    seed=st.integers(0, 2**32),
)
def test_outcome_is_the_rules_documents_status_on_random_play(rules: Rules, number: int, easy: int, seed: int) -> None:
    """Random deals, or the easy deal played along its clearing line for ``easy`` moves first (so wins, and the
    strict win's dead ends, come up too); then random legal moves, undos among them, checked after each change."""
    if easy < 0:  # a random deal
        game = Game(DealCode(rules, number=number))
    else:
        game = easy_game(rules)
        for move in parse_record(EASY_CLEARING)[:easy]:
            game.play(move)
    _check(game)
    rng = random.Random(seed)
    for _ in range(MOVES):
        legal = game.legal_moves()
        if game.undo_available and (not legal or rng.random() < 0.1):
            game.play(UNDO)  # undo also takes a stuck game back into play
        elif legal:
            game.play(rng.choice(legal))
        else:
            break
        _check(game)
