"""The solver against a brute-force search over full engine states, and its lines replayed by the engine."""

from __future__ import annotations

import functools
import gc
import random
import time
from collections import deque
from collections.abc import Iterator, Sequence

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from pyramide.engine import DRAW, RECYCLE, DealCode, Game, Layout, Move, Rules, all_rule_sets, dump_game
from pyramide.engine.cards import DECK, PAIR_SUM, Card, card_code, card_value
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.engine.pyramid import SLOTS
from pyramide.solver import solve
from pyramide.solver.bounds import Bounds, class_bound, pyramid_pairs
from pyramide.solver.pool import PoolSearch
from pyramide.solver.position import (
    Deal,
    Position,
    cards_in,
    from_game,
    key_of,
    moves,
    position_of,
    search_key,
    successors,
)
from pyramide.solver.search import (
    Explored,
    RelaxedBound,
    _explore,
    _Search,
    _seen_with_fewer_turn_overs,
    realise,
    strict_win_out_of_reach,
)
from pyramide.solver.shortest import DEAD, _Estimate, _Shapes, shortest_line, start_state
from tests.support.layouts import EASY_CLEARING, cards, dead_end_start, easy_game, make_layout

RULE_SETS = all_rule_sets()
POOL_RULES = [Rules(), Rules(cover_pairs=True), Rules(strict_win=True), Rules(cover_pairs=True, strict_win=True)]
SAMPLE_RULES = [
    Rules(),
    Rules(cover_pairs=True),
    Rules(recycles=0),
    Rules(recycles=1, stock_waste_pairs=True),
    Rules(recycles=2, stock_waste_pairs=True, strict_win=True),
    Rules(stock_waste_pairs=True, cover_pairs=True),
    Rules(strict_win=True),
]


def brute_force(game: Game, limit: int = 200_000) -> tuple[bool, int]:
    """Every reachable engine state (the whole state: stock order, waste, turn-overs, the card just drawn)."""
    won, best = False, SLOTS - game.present.bit_count()
    for current in _reachable_states(game, limit):
        best = max(best, SLOTS - current.present.bit_count())
        won = won or current.is_won
    return won, best


def _reachable_states(game: Game, limit: int) -> Iterator[Game]:
    """Every engine state reachable from ``game`` by any legal moves (whole states, :func:`_key`), breadth first;
    :class:`OracleTooBigError` once ``limit`` are known."""
    start = game.copy()
    start.selection = None
    seen = {_key(start)}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        yield current
        for move in current.legal_moves():
            after = current.copy()
            after.play(move)
            key = _key(after)
            if key not in seen:
                seen.add(key)
                queue.append(after)
        if len(seen) >= limit:
            raise OracleTooBigError(game.code)


def fewest_moves_to_win(game: Game, limit: int = 200_000) -> int | None:
    """Breadth first over whole engine states with every legal move: the oracle for the shortest line."""
    start = game.copy()
    start.selection = None
    depth = {_key(start): 0}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        if current.is_won:
            return depth[_key(current)]
        for move in current.legal_moves():
            after = current.copy()
            after.play(move)
            key = _key(after)
            if key not in depth:
                depth[key] = depth[_key(current)] + 1
                queue.append(after)
        if len(depth) >= limit:
            raise OracleTooBigError(game.code)
    return None


class OracleTooBigError(Exception):
    """The breadth-first oracle met more states than it may: the case is too big for it."""


def _fewest_or_reject(game: Game) -> int | None:
    """:func:`fewest_moves_to_win`, or another example from hypothesis where the case is too big for it."""
    try:
        return fewest_moves_to_win(game)
    except OracleTooBigError:
        reject()


def _every_position(deal: Deal, start: Position) -> Explored:
    """The search that visits every reachable position, as an oracle; an example with too many for that is
    rejected (hypothesis draws another)."""
    full = _explore(deal, start, 10**6, float("inf"), prune=False)
    if not full.exhausted:
        reject()
    return full


def _key(game: Game) -> tuple[object, ...]:
    unlimited = game.rules.recycles is None
    return (game.present, game.stock, game.waste, 0 if unlimited else game.recycles_used, game.fresh_draw)


def _late_position(code: DealCode, seed: int, removals_left: int) -> Game:
    """A deal played at random (removals preferred) until few cards remain: small enough for brute force."""
    rng = random.Random(seed)
    game = Game(code)
    for _ in range(3000):
        legal = game.legal_moves()
        if not legal or game.present.bit_count() <= removals_left:
            break
        removals = [m for m in legal if m.notation() not in ("D", "R")]
        game.play(rng.choice(removals) if removals and rng.random() < 0.9 else legal[-1])
    return game


@pytest.mark.parametrize("rules", SAMPLE_RULES, ids=lambda r: r.segment)
@pytest.mark.parametrize("seed", range(12))
def test_solver_agrees_with_brute_force_on_late_positions(rules: Rules, seed: int) -> None:
    code = DealCode(rules, number=random.Random(seed).randrange(DEAL_COUNT))
    game = _late_position(code, seed, removals_left=10)
    won, best = brute_force(game)
    analysis = solve(game)
    assert analysis.winnable == won
    assert analysis.max_removable == best
    _replays_to(game, analysis.line, best)


@settings(max_examples=100, deadline=None)
@given(
    number=st.integers(0, DEAL_COUNT - 1),
    seed=st.integers(0, 1000),
    rules=st.sampled_from(POOL_RULES),
    removals_left=st.sampled_from([28, 20, 16, 12]),
)
def test_the_pool_search_s_shortcuts_agree_with_the_general_search(
    number: int, seed: int, rules: Rules, removals_left: int
) -> None:
    """The pool search takes some moves without trying the others (a free king; a card whose class has a pool
    partner for every pyramid card of either value) and cuts positions that keep less of the pool; the general
    search over full positions does neither. On whole and part-played deals both find the same."""
    game = _late_position(DealCode(rules, number=number), seed, removals_left)
    deal, start = from_game(game)
    pool = PoolSearch(deal.pyramid, deal.order, rules.cover_pairs, rules.strict_win)
    fast = pool.explore(start.present, start.left, 10**7, float("inf"))
    general = _explore(deal, start, 10**7, float("inf"))
    assert fast[:2] == general[:2]


def _replay(game: Game, line: Sequence[Move]) -> Game:
    replay = game.copy()
    for move in line:
        replay.play(move)
    return replay


def _replays_to(game: Game, line: Sequence[Move], removed: int) -> None:
    replay = _replay(game, line)
    assert SLOTS - replay.present.bit_count() == removed
    if removed == SLOTS and not replay.rules.strict_win:
        assert replay.is_won


@settings(max_examples=25, deadline=None)
@given(number=st.integers(0, DEAL_COUNT - 1), rules=st.sampled_from(POOL_RULES))
def test_lines_replay_in_the_engine(number: int, rules: Rules) -> None:
    game = Game(DealCode(rules, number=number))
    analysis = solve(game, budget=100_000)
    assert analysis.winnable is not None, "with unlimited turn-overs a deal is always decided within the budget"
    assert analysis.max_removable is not None
    _replays_to(game, analysis.line, analysis.max_removable)
    if analysis.winnable:
        assert analysis.max_removable == SLOTS


def test_a_cleared_deal_and_a_dead_end() -> None:
    easy = solve(easy_game())
    assert easy.winnable is True and easy.max_removable == SLOTS
    stuck = solve(dead_end_start())
    assert stuck.winnable is False and stuck.max_removable == SLOTS - 4
    assert len(EASY_CLEARING.split()) == 16


def test_shortest_winning_line_is_no_longer_than_any_other() -> None:
    game = easy_game(Rules(recycles=0))
    analysis = solve(game, shortest=True)
    assert analysis.shortest is not None and len(analysis.shortest) == 16
    replay = game.copy()
    for move in analysis.shortest:
        replay.play(move)
    assert replay.is_won


def test_the_budget_answers_unknown_never_wrong() -> None:
    game = Game(DealCode(Rules(recycles=2, stock_waste_pairs=True), number=123456))
    small = solve(game, budget=50)
    assert small.winnable is None and small.max_removable is None and small.states <= 60
    _replays_to(game, small.line, small.best_found)


def test_the_solver_leaves_the_game_untouched() -> None:
    game = Game("PY1-N-AAAAAAS")
    before = dump_game(game)
    solve(game)
    assert dump_game(game) == before


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(cover_pairs=True), Rules(strict_win=True), Rules(cover_pairs=True, strict_win=True)],
    ids=lambda r: r.segment,
)
def test_the_bound_never_prunes_the_answer_on_whole_deals(rules: Rules) -> None:
    """Pruned and unpruned searches over every reachable position agree: the bound is sound."""
    rng = random.Random(7)
    for _ in range(10):
        game = Game(DealCode(rules, number=rng.randrange(DEAL_COUNT)))
        deal, start = from_game(game)
        pool = PoolSearch(deal.pyramid, deal.order, rules.cover_pairs, rules.strict_win)
        pruned = pool.explore(start.present, start.left, 10**7, float("inf"))
        full = pool.explore(start.present, start.left, 10**7, float("inf"), prune=False)
        general = _explore(deal, start, 10**7, float("inf"))
        assert pruned[:2] == full[:2] == general[:2], game.code


@settings(max_examples=40, deadline=None)
@given(
    number=st.integers(0, DEAL_COUNT - 1),
    cover_pairs=st.booleans(),
    seed=st.integers(0, 3),
    depth=st.sampled_from([0, 8]),
)
def test_cutting_positions_that_keep_less_of_the_pool_never_changes_the_answer(
    number: int, cover_pairs: bool, seed: int, depth: int
) -> None:
    """The pool search cuts a position when one with the same pyramid and more of the pool left is known (and
    those whose bound cannot beat the best); from fresh deals and part-played ones it agrees with visiting
    every reachable position."""
    code = DealCode(Rules(cover_pairs=cover_pairs), number=number)
    game = _late_position(code, seed, removals_left=28 - depth) if depth else Game(code)
    deal, start = from_game(game)
    pool = PoolSearch(deal.pyramid, deal.order, cover_pairs, False)
    pruned = pool.explore(start.present, start.left, 10**7, float("inf"))
    full = pool.explore(start.present, start.left, 10**7, float("inf"), prune=False)
    assert pruned[:2] == full[:2]


@pytest.mark.parametrize(
    "rules", [Rules(recycles=1), Rules(recycles=0, stock_waste_pairs=True, cover_pairs=True)], ids=lambda r: r.segment
)
def test_the_bound_never_prunes_the_answer_in_the_general_search(rules: Rules) -> None:
    rng = random.Random(11)
    for seed in range(6):
        game = _late_position(DealCode(rules, number=rng.randrange(DEAL_COUNT)), seed, removals_left=16)
        deal, start = from_game(game)
        pruned = _explore(deal, start, 10**6, float("inf"))
        full = _explore(deal, start, 10**6, float("inf"), prune=False)
        assert pruned[:2] == full[:2], game.code


LIMITED_RULES = [r for r in RULE_SETS if r.recycles is not None or r.stock_waste_pairs]


@settings(max_examples=40, deadline=None)
@given(
    number=st.integers(0, DEAL_COUNT - 1),
    seed=st.integers(0, 1000),
    rules=st.sampled_from(LIMITED_RULES),
    removals_left=st.sampled_from([14, 16]),
)
def test_the_relaxed_bound_never_prunes_the_answer(number: int, seed: int, rules: Rules, removals_left: int) -> None:
    """Under limited turn-overs and stock–waste pairing the full search is cut by what the pool model can remove
    from the same pyramid and cards left; on part-played deals of every such rule set it finds what visiting every
    reachable position finds."""
    game = _late_position(DealCode(rules, number=number), seed, removals_left)
    deal, start = from_game(game)
    relaxed = RelaxedBound(deal, float("inf"), 10**7)
    pruned = _explore(deal, start, 10**7, float("inf"), relaxed=relaxed)
    full = _explore(deal, start, 10**7, float("inf"), prune=False)
    assert pruned[:2] == full[:2]


def test_solving_leaves_the_garbage_collector_as_it_found_it() -> None:
    """A search pauses the collector (it makes no reference cycles); the caller's setting is restored."""
    game = Game(DealCode(Rules(recycles=2, stock_waste_pairs=True), number=4550952372))
    assert gc.isenabled()
    assert solve(game).max_removable == 25 and gc.isenabled()
    gc.disable()
    try:
        solve(game)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_shortest_line_search_runs_without_collector_passes() -> None:
    """Called directly, not only through ``solve``: no collection runs during the search (hundreds would), only
    the one that the allocations made meanwhile set off once the collector is on again."""
    deal, start = from_game(Game(DealCode(Rules(), number=1823296038)), pooled=False)
    passes: list[str] = []

    def count(phase: str, info: dict[str, int]) -> None:
        passes.append(phase)

    gc.callbacks.append(count)
    try:
        line = shortest_line(deal, start, 10**7, float("inf"))
    finally:
        gc.callbacks.remove(count)
    assert line is not None and passes.count("start") <= 1 and gc.isenabled()


def test_a_position_gives_way_only_to_itself_with_fewer_turn_overs_used() -> None:
    """The full search skips a position already seen with fewer turn-overs used (it can do all this one can), and
    nothing else: not one with more used, nor one that differs in anything but the turn-overs."""
    seen = {key_of(Position(5, 7, 3, 1, True))}
    assert _seen_with_fewer_turn_overs(seen, key_of(Position(5, 7, 3, 2, True)))
    assert not _seen_with_fewer_turn_overs(seen, key_of(Position(5, 7, 3, 1, True)))
    assert not _seen_with_fewer_turn_overs(seen, key_of(Position(5, 7, 3, 0, True))), "more used is not better"
    for other in (Position(4, 7, 3, 2, True), Position(5, 6, 3, 2, True), Position(5, 7, 2, 2, True)):
        assert not _seen_with_fewer_turn_overs(seen, key_of(other))
    assert not _seen_with_fewer_turn_overs(seen, key_of(Position(5, 7, 3, 2, False)))


@settings(max_examples=80, deadline=None)
@given(
    number=st.integers(0, DEAL_COUNT - 1),
    rules=st.sampled_from(LIMITED_RULES),
    seed=st.integers(0, 1000),
    removals_left=st.sampled_from([28, 24]),
    offsets=st.lists(st.integers(-3, 1), min_size=3, max_size=10),
)
def test_the_relaxed_bound_answers_as_the_whole_pool_model_does(
    number: int, rules: Rules, seed: int, removals_left: int, offsets: list[int]
) -> None:
    """Asked in any order about positions of one game, with what it keeps from earlier answers (the most it
    proved, the counts it saw reached on the way), the relaxed bound says "more than t may go" exactly when a
    search of the whole pool model from that pyramid and those cards left removes more than t."""
    deal, position = from_game(_late_position(DealCode(rules, number=number), seed, removals_left))
    rng = random.Random(seed)
    positions = [position]
    for _ in range(3):  # a few positions further on, by random moves
        for _ in range(rng.randrange(1, 6)):
            options = moves(deal, position)
            position = rng.choice(options)[1] if options else position
        positions.append(position)
    relaxed = RelaxedBound(deal, float("inf"), 10**7)
    model = PoolSearch(deal.pyramid, deal.order, rules.cover_pairs, False)
    for index, offset in enumerate(offsets):  # thresholds about the answer, up and down
        start = positions[index % len(positions)]
        most = model.explore(start.present, start.left, 10**7, float("inf"), prune=False)[1]
        threshold = min(max(most + offset, 0), SLOTS - 1)
        assert (relaxed.most(start.present, start.left, threshold) > threshold) == (most > threshold)


@pytest.mark.parametrize(
    "rules",
    [Rules(recycles=1), Rules(recycles=0, stock_waste_pairs=True, cover_pairs=True),
     Rules(recycles=1, stock_waste_pairs=True, strict_win=True), Rules(recycles=1, strict_win=True),
     Rules(recycles=0, cover_pairs=True, strict_win=True)],
    ids=lambda r: r.segment,
)  # fmt: skip
def test_the_relaxed_pool_search_is_never_below_the_full_search(rules: Rules) -> None:
    """The pool model with any two pool cards pairing allows every line these rules allow, so it may claim more
    but never less; and ``solve`` (relaxation, realised lines, descending targets) agrees with the unpruned search."""
    rng = random.Random(5)
    for seed in range(6):
        game = _late_position(DealCode(rules, number=rng.randrange(DEAL_COUNT)), seed, removals_left=16)
        deal, start = from_game(game)
        relaxed = PoolSearch(
            deal.pyramid,
            deal.order,
            rules.cover_pairs,
            rules.strict_win,
            pool_pairs=rules.stock_waste_pairs,
            relaxed=True,
        )
        relaxed_won, relaxed_best, *_ = relaxed.explore(start.present, start.left, 10**7, float("inf"))
        full_won, full_best, *_ = _explore(deal, start, 10**6, float("inf"), prune=False)
        assert relaxed_best >= full_best and (relaxed_won or not full_won), game.code
        analysis = solve(game)
        assert (analysis.winnable, analysis.max_removable) == (full_won, full_best), game.code
        _replays_to(game, analysis.line, full_best)


@pytest.mark.parametrize(
    ("code", "budget", "most"),
    [
        # The search for 28 cut no position that could reach 27, so 27 is not searched at all, and 26 only from
        # what 28 cut (searching each target from the start took 1,515,601 positions).
        # Counting pairs inside the pyramid by a maximum matching (two cards where one lies on the other never pair)
        # halved the search: 758,723 positions with the smaller of the two counts.
        ("PY1-1S-XRQIIST", 400_000, 26),
        # Under the strict win the search for a cleared pyramid takes up the positions cut for a card that can no
        # longer leave, and those cut before: the most removed first, it reaches 26 at once (as without the strict
        # win) instead of after 404,734 more positions, latest cut first.
        ("PY1-1SW-XRQIIST", 400_000, 26),
        # The pool model's searches cut ever less (108 of the first 200, 3,702 of 12,341): given up there, where
        # it went on to the end with 839,685 positions.
        ("PY1-1C-BHYEBBO", 600_000, 27),
        # Positions whose cards left hold the same values in the same order are one, whichever equal cards went:
        # 469,797 positions with each kept apart.
        ("PY1-1S-TFHMPTV", 400_000, 27),
        # A five, a jack and a four left with no pyramid card to pair with split the stock into runs, which the
        # last pass reaches one after another (:meth:`Bounds.phased_reach`): 672,816 positions counting alone.
        ("PY1-2-DFYDVMD", 60_000, 27),
        # Under the strict win, a waste card that no window of the cards on it and the stock's first ones lets go
        # (:meth:`Bounds.unusable`) loses the position on the last pass: 473,170 positions without.
        ("PY1-1CW-OHTCPQM", 250_000, 28),
    ],
)
def test_one_turn_over_deals_the_search_used_to_leave_open_are_decided(code: str, budget: int, most: int) -> None:
    """Lost deals with one turn-over that took the full search far past these budgets: each target's search
    resumes the one before, and the pool model is given up where it rarely cuts."""
    game = Game(DealCode.parse(code))
    analysis = solve(game, budget=budget)
    assert (analysis.winnable, analysis.max_removable) == (False, most)
    _replays_to(game, analysis.line, most)


@pytest.mark.parametrize(
    ("code", "budget"),
    [
        # Its win starts the last pass from one of the 12,988 turn-overs the search met: searching each last pass
        # as its turn-over came up, the win took 528,430 positions.
        ("PY1-1C-OHTCPQM", 150_000),
        ("PY1-1SCW-GFABGKJ", 100_000),  # 354,686 positions so
        ("PY1-1S-RCYNGYP", 60_000),  # 121,700 positions so
    ],
)
def test_won_deals_start_the_last_pass_where_fewest_pyramid_cards_are_left(code: str, budget: int) -> None:
    """A position a turn-over to the last pass reaches waits among the others, the fewest pyramid cards left searched
    first, while the search of the first pass goes on beside them: the deals' wins are found within budgets their
    search in the order met used to pass several times over."""
    game = Game(DealCode.parse(code))
    analysis = solve(game, budget=budget)
    assert analysis.winnable is True
    assert _replay(game, analysis.line).is_won


@pytest.mark.parametrize(
    ("code", "most"),
    [
        ("PY1-0SCW-TUBXVOR", 18),  # 150,375 positions, 148,935 of them the pool model's, when it had all it asked
        ("PY1-0SW-TUBXVOR", 14),  # 129,171
        ("PY1-SW-TUBXVOR", 18),  # 126,767
        ("PY1-2SCW-TUBXVOR", 18),  # 149,161
    ],
)
def test_strict_deals_the_pool_model_cannot_settle_soon_are_left_to_the_full_search(code: str, most: int) -> None:
    """Under the strict win with stock–waste pairs the pool model's cards pair among themselves in countless ways:
    its first search stops at its own budget, and the full search's targets, from 28 down, prove these deals lost
    and their most removable within a fraction of the positions it used to take alone."""
    game = Game(DealCode.parse(code))
    analysis = solve(game, budget=30_000)
    assert (analysis.winnable, analysis.max_removable) == (False, most)
    _replays_to(game, analysis.line, most)


@pytest.mark.parametrize(
    ("code", "most", "budget"),
    [
        ("PY1-1-OHTCPQM", 26, 200_000),  # 345,030 positions when only the counting bound cut the last pass's starts
        ("PY1-1W-OHTCPQM", 26, 200_000),  # 345,803
        ("PY1-1SC-RQVOBPB", 17, 300_000),  # 649,998
    ],
)
def test_the_pool_model_cuts_the_starts_of_the_last_pass_by_the_counts_left(code: str, most: int, budget: int) -> None:
    """Thousands of positions start the last pass in these lost deals, but only a few hundred pyramids with as many
    cards of each value left: asked there, once for each, the pool model proves most of them short of the target
    (the cards the first pass used are gone), and the deals are proved lost, their most removable found, within
    budgets the search of every start used to overrun."""
    game = Game(DealCode.parse(code))
    analysis = solve(game, budget=budget)
    assert (analysis.winnable, analysis.max_removable) == (False, most)
    _replays_to(game, analysis.line, most)


def test_a_relaxed_line_that_can_be_played_is_played() -> None:
    """The easy deal's relaxed line needs no turn-over: it is taken as it is, without a full search."""
    game = easy_game(Rules(recycles=0))
    deal, start = from_game(game)
    relaxed = PoolSearch(deal.pyramid, deal.order, False, False, relaxed=True)
    won, _, line, _, _ = relaxed.explore(start.present, start.left, 10**6, float("inf"))
    realised = realise(deal, start, line)
    assert won and realised is not None
    assert solve(game).states == relaxed.explore(start.present, start.left, 10**6, float("inf"))[3]


A_STAR_RULES = st.sampled_from([Rules(), Rules(cover_pairs=True), Rules(strict_win=True)])
EVERY_RULE_SET = st.sampled_from(all_rule_sets())


@st.composite
def late_games(
    draw: st.DrawFn,
    rules: st.SearchStrategy[Rules] = A_STAR_RULES,
    removals_left: tuple[int, int] = (6, 10),
    draws: tuple[int, int] = (0, 40),
) -> Game:
    """A random deal played at random until few cards remain, then drawn on: the waste at any depth, the stock
    turned over or not."""
    code = DealCode(draw(rules), number=draw(st.integers(0, DEAL_COUNT - 1)))
    game = _late_position(code, draw(st.integers(0, 1000)), draw(st.integers(*removals_left)))
    _draw(game, draw(st.integers(*draws)))
    return game


@settings(max_examples=150, deadline=None)
@given(
    game=late_games(rules=st.sampled_from(LIMITED_RULES), removals_left=(10, 16), draws=(0, 0)),
    relaxed=st.booleans(),
)
def test_each_target_s_search_answers_as_a_search_of_its_own(game: Game, relaxed: bool) -> None:
    """The full search asks "can t cards be removed?" for one target after another, each search taking up only
    the positions the one before cut: at every target it must answer as a search from the start does, and after
    a target is refused no position may reach more than the best found or the most a cut position may reach
    (the next target asked)."""
    deal, start = from_game(game)
    full = _every_position(deal, start)
    resumed = _Search(deal, start, relaxed=RelaxedBound(deal, float("inf"), 10**7) if relaxed else None)
    for target in range(SLOTS, SLOTS - cards_in(start.present), -1):
        fresh_bound = RelaxedBound(deal, float("inf"), 10**7) if relaxed else None
        alone = _explore(deal, start, 10**7, float("inf"), floor=target - 1, cap=target, relaxed=fresh_bound)
        found = resumed.run(10**7, float("inf"), floor=target - 1, cap=target, win_only=False)
        assert found.exhausted and alone.exhausted
        assert (found.best >= target) == (alone.best >= target) == (full.best >= target), (game.code, target)
        if found.best >= target:
            _replays_to(game, found.line, found.best)
            break
        assert full.best <= max(found.best, resumed.highest_cut()), (game.code, target)


@settings(max_examples=60, deadline=None)
@given(
    game=late_games(rules=st.sampled_from(LIMITED_RULES), removals_left=(12, 12), draws=(0, 0)),
    budget=st.integers(1, 200),
)
def test_a_search_stopped_by_its_budget_goes_on_where_it_stopped(game: Game, budget: int) -> None:
    """A search that ran out of positions leaves what it had not searched on from for the next one: given more,
    it finds the most there is, as one search from the start does."""
    deal, start = from_game(game)
    full = _every_position(deal, start)
    search = _Search(deal, start)
    first = search.run(budget, float("inf"), floor=-1, cap=SLOTS + 1, win_only=False)
    if first.exhausted:
        reject()  # nothing left to go on with
    more = search.run(10**7, float("inf"), floor=-1, cap=SLOTS + 1, win_only=False)
    assert more.exhausted and (more.won, more.best) == (full.won, full.best), game.code
    _replays_to(game, more.line, full.best)


@settings(max_examples=100, deadline=None)
@given(
    game=late_games(rules=st.sampled_from(LIMITED_RULES), removals_left=(10, 14), draws=(0, 0)),
    dropped=st.integers(0, 2**24 - 1),
)
def test_the_pool_model_s_answers_kept_by_counts_never_cut_a_line(game: Game, dropped: int) -> None:
    """The pool model's answers are kept per pyramid and counts of each value left, and one serves a position with
    the same pyramid and no more cards of any value. At the start of the last pass, with some cards dropped and then
    with all, each first asked whether more than the most there is can go (what a refusal proves is kept), then
    whether more than one fewer can: it never says no to that, whichever answer it reads it from."""
    deal, start = from_game(game)
    bound = RelaxedBound(deal, float("inf"), 10**7)
    starts = [
        Position(start.present, left, 0, max(deal.limit, 0), False) for left in (start.left & ~dropped, start.left)
    ]
    most = [_every_position(deal, position).best for position in starts]
    for position, best in zip(starts, most, strict=True):
        assert bound.most(position.present, position.left, best, start=True) >= best
    for position, best in zip(starts, most, strict=True):
        assert bound.most(position.present, position.left, best - 1, start=True) >= best, game.code


@settings(max_examples=200, deadline=None)
@given(
    game=late_games(rules=st.sampled_from(LIMITED_RULES), removals_left=(2, 11), draws=(0, 30)),
    every=st.integers(1, 8),
)
def test_the_bound_of_a_reachable_position_is_never_below_its_most_removable(game: Game, every: int) -> None:
    """The full search cuts a position when its bound (the counting bound, the pool model's answers, the reach run
    by run, cards buried for good on the last pass) is no more than the threshold. Asked of every ``every``-th
    position reachable from a late position whether more than one fewer than its own most removable can go, it
    never says no: a bound must hold at each position, not only where a wrong cut would change the answer."""
    deal, start = from_game(game)
    reachable = _Search(deal, start, prune=False)
    if not reachable.run(10**5, float("inf"), floor=-1, cap=SLOTS + 1, win_only=False).exhausted:
        reject()
    bounded = _Search(deal, start, relaxed=RelaxedBound(deal, float("inf"), 10**7))
    for key in list(reachable.parents)[::every]:
        position = position_of(key)
        most = _every_position(deal, position).best
        playable = bounded._playable(key, position.recycles)
        bound = bounded._bound(key, playable, SLOTS - cards_in(position.present), most - 1)
        assert bound >= most, (game.code, key)


@pytest.mark.parametrize(
    "code",
    [
        "PY1-1C-PPEWUMY",  # its line ends with a king alone in the pyramid and three stock cards that never leave
        "PY1-1-PPEWUMY",
        "PY1-1C-OHTCPQM",
        "PY1-1S-RCYNGYP",
        "PY1-1W-GFXRVTK",
        "PY1-0C-FFLSMJV",
        "PY1-0SC-CMKKXID",
        "PY1-2-JXFZZZY",
        "PY1-2SCW-GFABGKJ",
    ],
)
def test_no_position_of_a_winning_line_is_bounded_below_the_win(code: str) -> None:
    """Every position on a line that wins can still win: its bound, asked whether more than 27 pyramid cards can
    go, never says no, down to the end of the stock with only a king left and the pyramid's own removals left to
    count."""
    game = Game(DealCode.parse(code))
    analysis = solve(game)
    assert analysis.winnable is True
    deal, start = from_game(game)
    search = _Search(deal, start, relaxed=RelaxedBound(deal, float("inf"), 10**7))
    position = start
    for move in analysis.line:
        key = search_key(deal, position)
        at = position_of(key)
        playable = search._playable(key, at.recycles)
        assert search._bound(key, playable, SLOTS - cards_in(at.present), SLOTS - 1) >= SLOTS, (code, move)
        position = next(after for made, after in moves(deal, position) if made == move)
    assert not position.present


LAST_PASS_RULES = st.sampled_from(
    [Rules(recycles=0), Rules(recycles=0, cover_pairs=True), Rules(recycles=1), Rules(recycles=1, cover_pairs=True)]
    + [
        Rules(recycles=r, stock_waste_pairs=True, cover_pairs=c, strict_win=w)
        for r in (0, 1)
        for c in (False, True)
        for w in (False, True)
    ]
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(game=late_games(rules=LAST_PASS_RULES, removals_left=(8, 12), draws=(0, 40)))
def test_solver_agrees_with_brute_force_when_the_waste_buries_cards(game: Game) -> None:
    """With the turn-overs used up, cards stuck deep in the waste are left out of the bound (and the pool model is
    then asked about an uneven pool), under stock–waste pairing too (where the stock's cards and the fresh top can
    take waste cards): never at the cost of a line that exists."""
    try:
        won, best = brute_force(game)
    except OracleTooBigError:
        reject()  # too big for the oracle: hypothesis draws another example
    analysis = solve(game)
    assert analysis.winnable == won, game.code
    assert analysis.max_removable == best, game.code


@settings(max_examples=100, deadline=None)
@given(
    game=late_games(rules=st.sampled_from([Rules(), Rules(cover_pairs=True)])),
    dropped=st.integers(0, 2**24 - 1),
)
def test_the_pool_search_agrees_with_the_general_search_on_any_pool(game: Game, dropped: int) -> None:
    """The pool search's shortcuts must hold for any pool, also one with cards left out (not a whole deck's)."""
    deal, start = from_game(game)
    left = start.left & ~dropped
    pool = PoolSearch(deal.pyramid, deal.order, deal.rules.cover_pairs, deal.rules.strict_win)
    won, best, _, _, _ = pool.explore(start.present, left, 10**6, float("inf"))
    general = _explore(deal, Position(start.present, left, 0, 0, False), 10**6, float("inf"), prune=False)
    assert (won, best) == (general[0], general[1])


@settings(max_examples=300, deadline=None)
@given(game=late_games(rules=EVERY_RULE_SET, removals_left=(4, 9), draws=(0, 30)))
def test_the_a_star_line_is_shortest_from_any_late_position(game: Game) -> None:
    """Whatever the position and the rules (limited turn-overs, stock–waste pairs, covering-card pairs, the strict
    win), the A* with its forced moves and its estimate finds a line exactly as short as breadth-first search over
    every engine move."""
    deal, start = from_game(game, pooled=False)
    line = shortest_line(deal, start, 10**6, float("inf"))
    fewest = _fewest_or_reject(game)
    assert (line is None) == (fewest is None), game.code
    if line is not None:
        assert len(line) == fewest, game.code
        _replays_to(game, line, SLOTS)
        assert solve(game, shortest=True).shortest == line


@settings(max_examples=150, deadline=None)
@given(game=late_games(rules=EVERY_RULE_SET, removals_left=(4, 10), draws=(0, 0)))
def test_a_forced_removal_begins_a_shortest_line(game: Game) -> None:
    """The A* offers only the forced removal when there is one (a free king, or two free cards that are each
    other's last partner): some shortest line must begin with it."""
    deal, start = from_game(game, pooled=False)
    shapes = _Shapes(deal)
    forced = shapes._forced(shapes.shape(start.present), start.present, start.left)
    if forced < 0:
        return
    move = deal.inside(start.present)[forced][0]
    after = game.copy()
    after.play(move)
    fewest, following = _fewest_or_reject(game), _fewest_or_reject(after)
    assert fewest is None or following == fewest - 1, (game.code, move.notation())


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(game=late_games(rules=EVERY_RULE_SET))
def test_the_a_star_estimate_never_overestimates(game: Game) -> None:
    """The estimate (removals: kings, and per class the cards less the pairs a matching inside the pyramid allows;
    draws to the cards the pyramid needs from outside, past a turn-over for those stuck in the waste) is at most
    the fewest moves that win, so A* stays exact."""
    fewest = _fewest_or_reject(game)
    deal, start = from_game(game, pooled=False)
    estimate = _Estimate(deal, Bounds(deal)).of(start_state(deal, start))
    assert fewest is None or estimate <= fewest


TOP_ROWS = "KH / AC JC / 2C KS QC"
"""The pyramid's top three rows: AC+QC and 2C+JC each pair, as the matching sees it, but 2C lies on AC and QC on
JC, so neither pair is ever free at once; only a partner from outside breaks the knot."""


def _top_rows_left(outside: str) -> tuple[Deal, Position]:
    """A position with only :data:`TOP_ROWS` left in the pyramid and, outside it, the cards ``outside`` in the
    stock."""
    top = cards(TOP_ROWS)
    kept = cards(outside)
    rest = [c for c in DECK if c not in top and c not in kept]
    deal = Deal(top + tuple(rest[:22]), kept + tuple(rest[22:]), Rules(recycles=2, stock_waste_pairs=True))
    return deal, Position((1 << 6) - 1, (1 << len(kept)) - 1, 0, 0, False)


def test_the_estimate_sees_pairs_that_can_never_be_free_together() -> None:
    """The removals the estimate counts are the fewest in an order the pyramid allows (each card free when it
    goes), not a matching of cards that do not lie on each other: with no partner for them outside, the knot in
    :data:`TOP_ROWS` cannot be cleared at all, and with an ace and a queen outside it takes five removals, not
    four (the kings, QC with the ace, the 2C+JC pair, AC with the queen). The matching alone said four both
    times."""
    deal, start = _top_rows_left("3D 4D 5D 6D")
    estimate = _Estimate(deal, Bounds(deal))
    assert estimate._inside(start.present)[0] == 4, "what a matching allows"
    assert estimate.of(start_state(deal, start)) >= DEAD
    assert shortest_line(deal, start, 100_000, time.perf_counter() + 30) is None
    deal, start = _top_rows_left("AD QD 3D 4D")
    estimate = _Estimate(deal, Bounds(deal))
    assert estimate.of(start_state(deal, start)) == 5
    line = shortest_line(deal, start, 100_000, time.perf_counter() + 30)
    assert line is not None and len(line) == 7  # the five removals and a draw for each card from the stock


def test_the_bound_counts_only_the_cards_that_can_ever_go() -> None:
    """Of "9H / AS KH / 7C KS QD", with no 6 or 4 anywhere, only KS can ever go: 7C has no partner, so AS beneath
    it never comes free, QD (whose only partner is AS) never goes, nor KH beneath QD. The bound counts value
    classes among those cards only (counting AS+QD as a pair, and KH, it said two more)."""
    top = cards("9H / AS KH / 7C KS QD")
    kept = cards("2H 2D")
    rest = [c for c in DECK if c not in top and c not in kept and card_value(c) not in (4, 6)]
    rest += [c for c in DECK if card_value(c) in (4, 6)]
    deal = Deal(top + tuple(rest[:22]), kept + tuple(rest[22:24]), Rules(recycles=1))
    start = Position((1 << 6) - 1, (1 << len(kept)) - 1, 0, 0, False)
    assert Bounds(deal).removable(start.present, start.left) == SLOTS - 6 + 1
    assert _explore(deal, start, 10**6, float("inf"), prune=False).best == SLOTS - 6 + 1


@given(st.integers(0, DEAL_COUNT - 1), st.integers(0, (1 << 24) - 1))
def test_the_values_of_a_set_of_cards_read_by_byte_are_the_values_counted(number: int, cards_mask: int) -> None:
    """:meth:`Bounds.signature` reads a set of stock cards' values from a table per byte of the mask: the same
    values as counting the set's cards of each value (:meth:`Bounds.outside`)."""
    deal, _ = from_game(Game(DealCode(Rules(recycles=1), number=number)))
    bounds = Bounds(deal)
    assert bounds.signature(cards_mask) == bounds.outside(cards_mask)[1]


def test_the_strict_win_estimate_counts_a_card_dug_out_of_the_waste_once() -> None:
    """Under the strict win the estimate's removals count every card left already, the king on the waste among
    them: digging the 8 needed from under it costs nothing more. The king, then 5H+8H, win in two moves; the
    estimate once added the king's removal again and said three (too many: A* could then miss the shortest line)."""
    rows = "5H / 6C 7C / KD 5C 8C / 3C 10C 4C 9C / KH AC QC 2C JC / 4D 9D 5D 8D 6D 7D / KS AD QD 2D JD 3D 10D"
    stock = "AH QH 2H JH 3H 10H 4H 9H 6H 7H AS QS 2S JS 3S 10S 4S 9S 5S 8S 6S 7S"
    game = Game.from_layout(make_layout(rows, "8H KC", stock), Rules(stock_waste_pairs=True, strict_win=True))
    for notation in EASY_CLEARING.split()[:-1]:  # all but the apex, which here is 5H
        game.play(next(m for m in game.legal_moves() if m.notation() == notation))
    while game.stock:  # drawn, the stock pairs off card by card, each fresh card with the one beneath it
        game.play(DRAW)
        pairs = [m for m in game.legal_moves() if "+" in m.notation() and "5H" not in m.notation()]
        if pairs:
            game.play(pairs[0])
    assert [card_code(c) for c in game.waste] == ["8H", "KC"] and game.present.bit_count() == 1
    deal, start = from_game(game, pooled=False)
    assert fewest_moves_to_win(game) == 2
    assert _Estimate(deal, Bounds(deal)).of(start_state(deal, start)) <= 2


@settings(max_examples=200, deadline=None)
@given(game=late_games(rules=EVERY_RULE_SET, removals_left=(6, 14)))
def test_waste_cards_counted_blocked_never_leave_before_a_turn_over(game: Game) -> None:
    """A waste card whose every pyramid partner stays covered (by cards that only it or the cards beneath it could
    take) cannot leave, nor can any card beneath it. Every line of play without a turn-over must leave each card
    counted so in the waste."""
    assert _blocked_cards(game) <= _never_leave_before_a_turn_over(game)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(game=late_games(rules=EVERY_RULE_SET, removals_left=(6, 12), draws=(0, 40)))
def test_the_counting_bound_is_never_below_what_a_line_removes(game: Game) -> None:
    """The counting bound (pairs inside the pyramid by a maximum matching of the cards that may pair, the rest
    against the partner values outside it, and the dead cards' bound) is at least the most any line removes."""
    try:
        _, best = brute_force(game, limit=60_000)
    except OracleTooBigError:
        reject()
    deal, start = from_game(game, pooled=False)
    assert Bounds(deal).removable(start.present, start.left) >= best, game.code


def test_the_matching_counts_no_pair_of_cards_where_one_lies_on_the_other() -> None:
    """Here the pyramid's one nine is its apex and its one four lies beneath it: they can never pair, so the class
    makes no pair inside the pyramid (the smaller count said one); of its two aces and three queens only one pair
    can be made inside it (the smaller count said two). The bound is lower for it."""
    game = _late_position(DealCode.parse("PY1-S-BXDYCLF"), 222, 16)
    deal, start = from_game(game, pooled=False)
    bounds = Bounds(deal)
    reach = bounds.reach(start.present, bounds.signature(start.left))
    inside, slots_of_value = bounds.pyramid(reach)
    outside = bounds.outside(start.left)[0]
    matched = pyramid_pairs(slots_of_value, cover_pairs=False)
    assert (inside[4], inside[9], matched[4]) == (1, 1, 0)
    assert (inside[1], inside[12], matched[1]) == (2, 3, 1)
    assert class_bound(reach, inside, outside, matched) < class_bound(reach, inside, outside)


def test_the_matching_never_counts_more_than_the_smaller_count() -> None:
    """On late positions of every rule set the bound with the matching is never above the one without."""
    rng = random.Random(3)
    for _ in range(200):
        code = DealCode(rng.choice(RULE_SETS), number=rng.randrange(DEAL_COUNT))
        game = _late_position(code, rng.randrange(1000), rng.randint(8, 28))
        deal, start = from_game(game, pooled=False)
        bounds = Bounds(deal)
        reach = bounds.reach(start.present, bounds.signature(start.left))
        inside, slots_of_value = bounds.pyramid(reach)
        outside = bounds.outside(start.left)[0]
        matched = pyramid_pairs(slots_of_value, deal.rules.cover_pairs)
        assert class_bound(reach, inside, outside, matched) <= class_bound(reach, inside, outside)


TURN_OVER_LIMITS = [r for r in RULE_SETS if r.recycles is not None]


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(game=late_games(rules=st.sampled_from(TURN_OVER_LIMITS), removals_left=(6, 12), draws=(0, 40)))
def test_every_pyramid_card_a_line_removes_lies_in_the_phased_reach(game: Game) -> None:
    """Cards outside the pyramid that can never leave split the rest into runs that come up one after another,
    each until the next turn-over: every pyramid card that some line of play (turn-overs too) removes must be in
    the reach worked out run by run, which is never more than the reach of all the values left."""
    phased, reach = _phased_and_plain_reach(game)
    assert phased & ~reach == 0
    removed = _removed_on_some_line(game)
    if removed is None:
        reject()
    assert removed & ~phased == 0, game.code


def test_the_runs_reach_less_than_the_values_alone() -> None:
    """On positions drawn from the rule sets without stock–waste pairing, the reach run by run is often smaller
    than the reach of all the values left, and what it leaves out no line removes."""
    rng = random.Random(11)
    smaller = 0
    rule_sets = [r for r in TURN_OVER_LIMITS if not r.stock_waste_pairs]
    for _ in range(60):
        code = DealCode(rng.choice(rule_sets), number=rng.randrange(DEAL_COUNT))
        game = _late_position(code, rng.randrange(1000), rng.randint(8, 12))
        _draw(game, rng.randint(0, 30))
        phased, reach = _phased_and_plain_reach(game)
        if phased != reach:
            smaller += 1
            removed = _removed_on_some_line(game)
            assert removed is not None and removed & ~phased == 0, game.code
    assert smaller >= 10


@pytest.mark.parametrize(
    ("code", "seed", "removals_left", "draws"),
    [
        # Under stock–waste pairing a card with no pyramid partner left may still leave with a stock card drawn
        # onto it, and so does not bury the waste beneath it for good.
        ("PY1-2S-VZDMYFG", 788, 6, 20),
        # The jack drawn late takes the two once a six from an earlier run took the seven on it: the values of a
        # run among those of one worked out before (the jack and queen on the waste) may still reach more, when
        # the reach grew in between.
        ("PY1-1C-AAAAAAG", 0, 6, 0),
    ],
)
def test_what_a_line_removes_lies_in_the_phased_reach_where_it_once_did_not(
    code: str, seed: int, removals_left: int, draws: int
) -> None:
    """Positions where an earlier form of :meth:`Bounds.phased_reach` left out a pyramid card some line removes."""
    game = _late_position(DealCode.parse(code), seed, removals_left)
    _draw(game, draws)
    phased, _ = _phased_and_plain_reach(game)
    removed = _removed_on_some_line(game)
    assert removed is not None and removed & ~phased == 0


def _phased_and_plain_reach(game: Game) -> tuple[int, int]:
    deal, start = from_game(game, pooled=False)
    bounds = Bounds(deal)
    turn_overs = (deal.rules.recycles or 0) - start.recycles
    reach = bounds.reach(start.present, bounds.signature(start.left))
    dead = start.left & bounds.dead_cards(start.present, start.left)
    if not dead:
        return reach, reach
    return bounds.phased_reach(start.present, start.left, start.drawn, turn_overs, dead=dead, most=SLOTS), reach


def _removed_on_some_line(game: Game, limit: int = 40_000) -> int | None:
    """The pyramid cards (by slot, as ``present``) that some state reachable from ``game`` has removed, by brute
    force over whole engine states (:func:`_reachable_states`); ``None`` when they are too many for it."""
    removed = 0
    try:
        for current in _reachable_states(game, limit):
            removed |= game.present & ~current.present
    except OracleTooBigError:
        return None
    return removed


def test_the_blocked_analysis_finds_what_counting_does_not() -> None:
    """On positions drawn from every rule set, cards counted blocked always stay in the waste, and in many of them
    they are more than counting partners alone finds (a value's cards from the top down outnumbering the pyramid
    cards of the partner value, and the stock's under stock–waste pairing, wherever those lie)."""
    rng = random.Random(5)
    beyond_counting = 0
    for _ in range(60):
        code = DealCode(rng.choice(RULE_SETS), number=rng.randrange(DEAL_COUNT))
        game = _late_position(code, rng.randrange(1000), rng.randint(8, 13))
        _draw(game, rng.randint(5, 30))
        blocked = _blocked_cards(game)
        assert blocked <= _never_leave_before_a_turn_over(game)
        beyond_counting += len(blocked) > len(_stuck_by_counting(game))
    assert beyond_counting >= 20  # 29 of the 60


def _stuck_by_counting(game: Game) -> list[Card]:
    """The waste from the first card whose value's cards, from the top down, outnumber their possible partners."""
    pyramid = [card_value(card) for card in game.pyramid if card is not None]
    outside = [card_value(card) for card in game.stock] if game.rules.stock_waste_pairs else []
    seen: dict[int, int] = {}
    waste = list(reversed(game.waste))  # the top first
    for depth, card in enumerate(waste):
        value = card_value(card)
        seen[value] = seen.get(value, 0) + 1
        partners = pyramid.count(PAIR_SUM - value) + outside.count(PAIR_SUM - value)
        if value != PAIR_SUM and seen[value] > partners:
            return waste[depth:]
    return []


LAST_PASS_WITHOUT_PAIRING = st.sampled_from(
    [r for r in RULE_SETS if r.recycles is not None and r.recycles <= 1 and not r.stock_waste_pairs]
)


@settings(max_examples=120, deadline=None)
@given(
    rules=LAST_PASS_WITHOUT_PAIRING,
    number=st.integers(0, DEAL_COUNT - 1),
    seed=st.integers(0, 1000),
    removals_left=st.integers(8, 12),
)
def test_waste_cards_counted_unusable_never_leave_on_the_last_pass(
    rules: Rules, number: int, seed: int, removals_left: int
) -> None:
    """On the last pass a waste card counted unusable (no window of the cards on it and the stock's first ones
    lets it and all of them go: :meth:`Bounds.unusable`) is in the waste in every state any line reaches, and so
    is every card beneath it. Checked on the first states reached from a late position (breadth first, any
    moves) that have such cards: about one example in four reaches some."""
    game = _late_position(DealCode(rules, number=number), seed, removals_left)
    checked = 0
    try:
        for state in _reachable_states(game, 20_000):
            unusable = _unusable_cards(state)
            if unusable:
                assert unusable <= _never_leave_before_a_turn_over(state), dump_game(state).hex()
                checked += 1
                if checked == 3:
                    break
    except OracleTooBigError:
        reject()


def test_a_waste_card_whose_pyramid_partner_needs_more_than_the_cards_on_it_is_counted_unusable() -> None:
    """Beyond :meth:`Bounds.blocked`: JC lies in the waste under 4D, its only partner 2H lies under two nines,
    and the only four left is 4D. Either card on 2H may go with 4D, but not both, so 2H never comes free: JC never
    leaves, nor 7D beneath it (whose partner, 6H at the top, is free only after 2H). Blocked counts neither (a
    four is there to take a nine, and 2H is in its reach); the engine confirms neither ever leaves."""
    game = _unusable_example()
    deal, start = from_game(game, pooled=False)
    waste = start.left & ((1 << start.drawn) - 1)
    assert not Bounds(deal).blocked(start.present, waste, start.left ^ waste, 0)
    assert _unusable_cards(game) == set(cards("7D JC"))
    assert _unusable_cards(game) <= _never_leave_before_a_turn_over(game)
    assert not solve(game).winnable


def _unusable_example() -> Game:
    """6H / 2H KD / 9H 9D 9C left in the pyramid; the waste, bottom to top, 7D JC 4D; the stock empty; no
    turn-over."""
    top, waste = cards("6H / 2H KD / 9H 9D 9C"), cards("7D JC 4D")
    rest = tuple(c for c in DECK if c not in top and c not in waste)
    game = Game.from_layout(Layout(top + rest[:22], waste, rest[22:]), Rules(recycles=0))
    game.present = (1 << len(top)) - 1
    game._stock = []
    return game


def _unusable_cards(game: Game) -> set[Card]:
    """The cards :meth:`Bounds.unusable` counts, on the position's cards still to play."""
    deal, start = from_game(game, pooled=False)
    if start.recycles != deal.limit:
        return set()
    bounds = Bounds(deal)
    waste = start.left & ((1 << start.drawn) - 1)
    playable = start.left & ~bounds.blocked(start.present, waste, start.left ^ waste, 0)
    unusable = bounds.unusable(start.present, playable, start.drawn)
    return {deal.order[i] for i in range(len(deal.order)) if unusable >> i & 1}


def _blocked_cards(game: Game) -> set[Card]:
    deal, start = from_game(game, pooled=False)
    waste = start.left & ((1 << start.drawn) - 1)
    fresh = int(start.fresh and deal.rules.stock_waste_pairs)
    blocked = Bounds(deal).blocked(start.present, waste, start.left ^ waste, fresh)
    return {deal.order[i] for i in range(start.drawn) if blocked >> i & 1}


def _never_leave_before_a_turn_over(game: Game, limit: int = 150_000) -> set[Card]:
    """The waste cards still in the waste in every state reached without a turn-over."""
    staying = set(game.waste)
    seen = {_key(game)}
    queue = deque([game])
    while queue:
        current = queue.popleft()
        staying &= set(current.waste)
        for move in current.legal_moves():
            if move == RECYCLE:
                continue
            after = current.copy()
            after.play(move)
            if _key(after) not in seen:
                seen.add(_key(after))
                queue.append(after)
        assert len(seen) < limit, "needs a smaller case"
    return staying


def _draw(game: Game, count: int) -> None:
    """Up to ``count`` draws, turning the waste over when the stock runs out."""
    for _ in range(count):
        legal = game.legal_moves()
        if DRAW in legal:
            game.play(DRAW)
        elif RECYCLE in legal:
            game.play(RECYCLE)


def test_the_a_star_takes_a_king_off_the_waste_when_that_is_shorter() -> None:
    """Taking a king off the waste uncovers the card beneath without turning the stock over. Here that makes the
    shortest line 27 moves (the breadth-first search over every engine move agrees); without the step the A* found
    39."""
    game = _late_position(DealCode(Rules(), number=7837701724), 732, removals_left=8)
    for _ in range(8):
        game.play(DRAW)
    deal, start = from_game(game, pooled=False)
    line = shortest_line(deal, start, 10**6, float("inf"))
    assert line is not None and len(line) == fewest_moves_to_win(game) == 27
    assert "KH" in [m.notation() for m in line]
    _replays_to(game, line, SLOTS)


def test_the_a_star_shortest_line_on_a_whole_deal() -> None:
    game = easy_game()
    deal, start = from_game(game, pooled=False)
    line = shortest_line(deal, start, 10**6, float("inf"))
    assert line is not None and len(line) == 16  # the sixteen removals, no draw needed
    _replays_to(game, line, SLOTS)


@pytest.mark.parametrize(
    "rules",
    [Rules(recycles=1), Rules(recycles=0, stock_waste_pairs=True), Rules(recycles=2, stock_waste_pairs=True)],
    ids=lambda r: r.segment,
)
@pytest.mark.parametrize("seed", range(10))
def test_the_shortest_line_under_limited_turn_overs_is_as_short_as_any(rules: Rules, seed: int) -> None:
    code = DealCode(rules, number=random.Random(200 + seed).randrange(DEAL_COUNT))
    game = _late_position(code, seed, removals_left=8)
    line = solve(game, shortest=True).shortest
    fewest = fewest_moves_to_win(game)
    assert (line is None) == (fewest is None), game.code
    if line is not None:
        assert len(line) == fewest, game.code
        _replays_to(game, line, SLOTS)


STRICT_RULES = st.sampled_from(
    [r for r in all_rule_sets() if r.strict_win and not r.stock_waste_pairs and r.recycles in (0, 1, 2)]
)


@settings(max_examples=150, deadline=None)
@given(game=late_games(rules=STRICT_RULES, removals_left=(4, 9), draws=(0, 40)))
def test_a_strict_win_counted_out_of_reach_is_lost(game: Game) -> None:
    """Counting outside cards against their pyramid partners answers "can it be won?" when the search runs out of
    time: it must never call a won game lost."""
    deal, start = from_game(game)
    if strict_win_out_of_reach(deal, start):
        assert brute_force(game)[0] is False, game.code


def test_a_strict_win_deal_is_decided_lost_even_when_the_search_runs_out_of_time() -> None:
    game = Game(DealCode(Rules(recycles=1, strict_win=True), number=0))
    deal, start = from_game(game)
    assert strict_win_out_of_reach(deal, start)
    analysis = solve(game, budget=10)
    assert analysis.winnable is False and analysis.max_removable is None


@pytest.mark.parametrize(
    ("segment", "letters", "budget", "winnable", "max_removable"),
    [
        ("0SW", "MRBJAMP", 100_000, False, 28),  # the pyramid clears, the waste keeps cards: lost
        ("0SCW", "FJSSONA", 100_000, False, None),  # lost; the most pyramid cards not found within the budget
        ("1SW", "NOXNASA", 20_000, True, 28),
        ("2W", "XRTNTJO", 50_000, True, 28),  # without stock–waste pairs every outside card needs a pyramid partner
        ("1CW", "JBOCVFV", 50_000, True, 28),
    ],
)
def test_a_strict_win_with_limited_turn_overs_is_decided_within_a_smaller_budget(
    segment: str, letters: str, budget: int, winnable: bool, max_removable: int | None
) -> None:
    """Under the strict win a card stuck in the waste on the last pass loses the game, and so (without stock–waste
    pairing) do more outside cards of a value than pyramid partners for them; asking "can it be won?" first cuts
    those positions and decides deals the search for the most pyramid cards left open at this budget."""
    game = Game(DealCode.parse(f"PY1-{segment}-{letters}"))
    analysis = solve(game, budget=budget)
    assert (analysis.winnable, analysis.max_removable) == (winnable, max_removable)
    assert _replay(game, analysis.line).is_won is winnable


STRICT_LIMITED_RULES = [r for r in RULE_SETS if r.strict_win and r.recycles is not None]
STRICT_WON_DEALS = ("PY1-2W-OHTCPQM", "PY1-1W-JBOCVFV", "PY1-1CW-JBOCVFV")  # strict wins without stock–waste pairs


@functools.cache
def _winning_line(code: str) -> tuple[Move, ...]:
    analysis = solve(Game(DealCode.parse(code)))
    assert analysis.winnable
    return tuple(analysis.line)


@st.composite
def strict_games(draw: st.DrawFn) -> Game:
    """Late positions under the strict win with limited turn-overs: random play, or (as random play almost never
    leaves a strict win without stock–waste pairing open) a winning line played part of the way, then drawn on."""
    if draw(st.booleans()):
        return draw(late_games(rules=st.sampled_from(STRICT_LIMITED_RULES), removals_left=(10, 16), draws=(0, 40)))
    code = draw(st.sampled_from(STRICT_WON_DEALS))
    game = Game(DealCode.parse(code))
    for move in _winning_line(code):
        if game.present.bit_count() <= draw(st.integers(8, 14)):
            break
        game.play(move)
    _draw(game, draw(st.integers(0, 6)))
    return game


@settings(max_examples=150, deadline=None)
@given(game=strict_games(), relaxed=st.booleans())
def test_the_search_for_a_strict_win_cuts_only_lost_positions(game: Game, relaxed: bool) -> None:
    """Asking only "can it be won?" under the strict win cuts positions with a card stuck in the waste on the last
    pass and, without stock–waste pairing, positions with more outside cards of a value than pyramid partners: on
    part-played deals it must answer as visiting every reachable position does."""
    deal, start = from_game(game)
    full = _every_position(deal, start)
    bound = RelaxedBound(deal, float("inf"), 10**7) if relaxed else None
    won_only = _explore(deal, start, 10**8, float("inf"), floor=SLOTS - 1, relaxed=bound, win_only=True)
    assert won_only.won == full.won, game.code
    if won_only.won:
        assert _replay(game, won_only.line).is_won


@settings(max_examples=200, deadline=None)
@given(game=late_games(rules=EVERY_RULE_SET, removals_left=(4, 20), draws=(0, 40)))
def test_the_full_search_steps_to_the_positions_the_moves_reach(game: Game) -> None:
    """The full search keeps positions as keys and steps between them without making moves: from every position
    a few moves on, it must reach exactly the positions the moves reach, in their order (it names the moves of the
    line it finds by them, and searches them in that order)."""
    deal, start = from_game(game, pooled=False)
    frontier = [start]
    for _ in range(6):
        further = []
        for position in frontier:
            reached = moves(deal, position)
            assert successors(deal, search_key(deal, position)) == [search_key(deal, a) for _, a in reached]
            further += [after for _, after in reached]
        frontier = further[:40]


def test_positions_that_play_the_same_are_one_to_the_full_search() -> None:
    """A waste top removed leaves the waste that drawing only up to the card beneath leaves; freshness matters only
    under stock–waste pairing. The full search keeps each such position once."""
    game = Game(DealCode(Rules(recycles=1), number=7))
    deal, start = from_game(game, pooled=False)
    without_third = start.left & ~(1 << 2)
    assert search_key(deal, Position(start.present, without_third, 3, 1, False)) == search_key(
        deal, Position(start.present, without_third, 2, 1, False)
    )
    assert search_key(deal, start._replace(fresh=True)) == search_key(deal, start._replace(fresh=False))
    pairs, _ = from_game(Game(DealCode(Rules(recycles=1, stock_waste_pairs=True), number=7)), pooled=False)
    assert search_key(pairs, start._replace(fresh=True)) != search_key(pairs, start._replace(fresh=False))


def test_positions_whose_cards_left_hold_the_same_values_in_the_same_order_are_one() -> None:
    """Suits never matter: whichever of two queens next to each other in the stock went, the game plays on alike,
    and the full search keeps it once; cards of equal value in another order are another position."""
    deal, start = from_game(Game(DealCode(Rules(recycles=1), number=1)), pooled=False)
    assert deal.order_values[9] == deal.order_values[10] == 12
    assert search_key(deal, start._replace(left=start.left & ~(1 << 9))) == search_key(
        deal, start._replace(left=start.left & ~(1 << 10))
    )
    assert deal.order_values[4] == deal.order_values[6] != deal.order_values[5]
    assert search_key(deal, start._replace(left=start.left & ~(1 << 4))) != search_key(
        deal, start._replace(left=start.left & ~(1 << 6))
    )


@settings(max_examples=200, deadline=None)
@given(game=late_games(rules=EVERY_RULE_SET, removals_left=(4, 20), draws=(0, 40)))
def test_a_search_key_holds_the_values_of_the_waste_and_the_stock_in_their_order(game: Game) -> None:
    """The key a position is kept by, read back, has the waste and the stock of the real position card value by
    card value (and the same pyramid, turn-overs used and freshness that counts), and is the key it is kept by."""
    deal, position = from_game(game, pooled=False)
    kept = position_of(search_key(deal, position))

    def values(at: Position) -> tuple[list[int], list[int]]:
        cards = [i for i in range(len(deal.order)) if at.left >> i & 1]
        return [deal.order_values[i] for i in cards if i < at.drawn], [
            deal.order_values[i] for i in cards if i >= at.drawn
        ]

    assert values(kept) == values(position)
    assert (kept.present, kept.recycles, kept.fresh) == (
        position.present,
        position.recycles,
        position.fresh and deal.waste_pairs,
    )
    assert search_key(deal, kept) == search_key(deal, position)


@given(mask=st.integers(0, 2**80))
def test_the_searches_count_the_cards_of_a_mask_as_python_does(mask: int) -> None:
    assert cards_in(mask) == mask.bit_count()
