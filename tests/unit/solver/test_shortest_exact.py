"""The A*'s estimate made cheaper (issue 58) estimates exactly what it did, so its lines are exactly as short.

Three parts changed how they work, not what they answer: the removals that clear a pyramid (:meth:`_Estimate.
_clearing`) walk steps worked out once per pyramid from the masks :func:`inside_afters` gives, without building
moves; and the waste cards stuck until a turn-over (:meth:`Bounds.blocked`) are counted with the signature cut to
the values the pyramid pairs with. Each is checked here against the way it was done before, on random positions
of every rule set, and whole searches against the lengths the search found before the change (on 65c7e08).
"""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pyramide.engine import DealCode, Game, Rules, all_rule_sets
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.engine.pyramid import SLOTS, free_slots
from pyramide.solver.bounds import Bounds
from pyramide.solver.position import Deal, from_game, inside_afters, pyramid_only
from pyramide.solver.shortest import DEAD, _Estimate, _wanted, shortest_line
from pyramide.solver.twins import partner_of

OLD_LENGTHS = {
    "PY1-N-IBYIZUO": 52, "PY1-N-RXOTAJT": 52, "PY1-N-MEZYBFB": 58, "PY1-N-FVMIPTT": 50,
    "PY1-2S-IBYIZUO": 52, "PY1-2S-RXOTAJT": 48, "PY1-2S-TDQRQBR": 57, "PY1-2S-XETSSLR": 51,
    "PY1-C-QTWFHTN": 45, "PY1-C-AOXHLKD": 41, "PY1-C-SVGPIXP": 55, "PY1-C-NLLZQYX": 42,
    "PY1-2-NEDSJBJ": 61, "PY1-2-RXOTAJT": 52, "PY1-2-FVMIPTT": 50, "PY1-2-ULJROST": 56,
    "PY1-0-BAOGLJA": 43, "PY1-0-YMHKARL": 45, "PY1-0-FVIRVNU": 40, "PY1-0-GLGTBMP": 34,
    "PY1-1-IBYIZUO": 52, "PY1-1-NEDSJBJ": 61, "PY1-1-MEZYBFB": 58, "PY1-1-ULJROST": 56,
    "PY1-0SCW-AOXHLKD": 51, "PY1-0SCW-RXOTAJT": 51, "PY1-0SCW-WKSNZKD": 51, "PY1-0SCW-DZEVPLC": 51,
    "PY1-1C-IBYIZUO": 51, "PY1-1C-QTWFHTN": 45, "PY1-1C-SVGPIXP": 55, "PY1-1C-MEZYBFB": 58,
}  # fmt: skip
"""Shortest lines of seeded random winnable deals of eight rule sets, as the search found them before issue 58
(``random.Random(58)``, the first six per rule set searched in under 0.25 s; four of each kept)."""


@st.composite
def played(draw: st.DrawFn) -> Game:
    """A random deal of any rule set played at random (removals first) to anywhere from its start to its last
    few pyramid cards, then drawn on."""
    game = Game(DealCode(draw(st.sampled_from(all_rule_sets())), number=draw(st.integers(0, DEAL_COUNT - 1))))
    rng = random.Random(draw(st.integers(0, 1000)))
    left = draw(st.integers(4, SLOTS))
    for _ in range(3000):
        legal = game.legal_moves()
        if not legal or game.present.bit_count() <= left:
            break
        removals = [m for m in legal if m.notation() not in ("D", "U")]
        game.play(rng.choice(removals or legal))
    for _ in range(draw(st.integers(0, 30))):
        moves = [m for m in game.legal_moves() if m.notation() in ("D", "U")]
        if not moves:
            break
        game.play(rng.choice(moves))
    return game


def _old_clearing(deal: Deal, bounds: Bounds, present: int, signature: int, known: dict[int, int]) -> int:
    """:meth:`_Estimate._clearing` as it was: the removals inside the pyramid read from :func:`pyramid_only`'s
    moves, each free card tried against the signature, each step's pyramid reading its own values."""
    if not present:
        return 0
    key = signature << SLOTS | present
    if key in known:
        return known[key]
    best = DEAD

    def read(after: int) -> int:
        return signature & _wanted(bounds.pyramid(after)[0])

    for _, after in pyramid_only(deal.pyramid, present, deal.rules.cover_pairs):
        best = min(best, _old_clearing(deal, bounds, after, read(after), known))
    for slot in free_slots(present):
        if signature >> partner_of(bounds.pyramid_values[slot]) & 1:
            after = present & ~(1 << slot)
            best = min(best, _old_clearing(deal, bounds, after, read(after), known))
    known[key] = best + 1 if best < DEAD else DEAD
    return known[key]


@settings(max_examples=200, deadline=None)
@given(game=played())
def test_the_removals_inside_a_pyramid_are_pyramid_onlys_without_its_moves(game: Game) -> None:
    deal, start = from_game(game, pooled=False)
    expected = tuple(after for _, after in pyramid_only(deal.pyramid, start.present, deal.rules.cover_pairs))
    assert inside_afters(deal.pyramid_values, start.present, deal.rules.cover_pairs) == expected


@settings(max_examples=150, deadline=None)
@given(game=played(), extra=st.integers(0, (1 << 14) - 1))
def test_the_clearing_count_is_what_it_was(game: Game, extra: int) -> None:
    """For the position's own signature (the values left outside, as the estimate asks) and for any other."""
    deal, start = from_game(game, pooled=False)
    bounds = Bounds(deal)
    estimate = _Estimate(deal, bounds)
    wanted = _wanted(bounds.pyramid(start.present)[0])
    known: dict[int, int] = {}
    for signature in (bounds.signature(start.left) & wanted, extra & ~1 & wanted):
        assert estimate._clearing(start.present, signature) == _old_clearing(
            deal, bounds, start.present, signature, known
        )


@settings(max_examples=300, deadline=None)
@given(game=played())
def test_the_waste_cards_stuck_are_those_counted_with_the_whole_signature(game: Game) -> None:
    deal, start = from_game(game, pooled=False)
    bounds = Bounds(deal)
    waste = start.left & ((1 << start.drawn) - 1)
    stock = start.left ^ waste
    wanted = _wanted(bounds.pyramid(start.present)[0])
    assume(waste)  # asked only of a waste
    for fresh in (0, 1):
        whole = bounds.blocked(start.present, waste, stock, fresh)
        assert Bounds(deal).blocked(start.present, waste, stock, fresh, wanted) == whole


@pytest.mark.parametrize(("code", "length"), OLD_LENGTHS.items())
def test_the_shortest_line_is_as_long_as_before(code: str, length: int) -> None:
    game = Game(DealCode.parse(code))
    deal, start = from_game(game, pooled=False)
    line = shortest_line(deal, start, 300_000, time.perf_counter() + 60)
    assert line is not None and len(line) == length
    for move in line:
        game.play(move)
    assert game.is_won


def test_the_old_lengths_cover_every_kind_of_rule_set() -> None:
    """Unlimited and limited turn-overs, stock–waste pairs, the covering-card pairs and the strict win."""
    rules = {DealCode.parse(code).rules for code in OLD_LENGTHS}
    assert {r.recycles for r in rules} >= {None, 0, 1, 2}
    assert any(r.stock_waste_pairs for r in rules) and any(r.cover_pairs for r in rules)
    assert any(r.strict_win for r in rules) and Rules() in rules
