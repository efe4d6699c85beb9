"""The par the service keeps (issue 46) agrees with an independent breadth-first search over engine states, with the
engine's own legal moves, on small deals: the hand-dealt easy layout, whose pyramid clears in a few moves, under
every rule set, and the same deal with its last moves already played."""

from __future__ import annotations

from collections import deque

import pytest

from pyramide.engine import Game, Rules, dump_game, parse_move
from pyramide.service.deals.analysis import HINT_BUDGET
from pyramide.service.deals.par import ParStatus, par_of
from pyramide.service.deals.schemas import DealAnalysis
from pyramide.solver.worker import analyse_state
from tests.support.layouts import EASY_CLEARING, easy_game

RULE_SETS = [
    Rules(recycles=recycles, stock_waste_pairs=pairs, cover_pairs=cover, strict_win=False)
    for recycles in (None, 0, 2)
    for pairs in (False, True)
    for cover in (False, True)
]
STATES_AT_MOST = 300_000


def bfs_moves_to_win(game: Game) -> int | None:
    """The fewest engine moves that win from ``game``, breadth first over whole states (None: none wins)."""

    def key(state: Game) -> tuple[object, ...]:
        return (state.present, state.stock, state.waste, state.recycles_used, state.fresh_draw)

    start = game.copy()
    start.selection = None
    depth = {key(start): 0}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        if current.is_won:
            return depth[key(current)]
        for move in current.legal_moves():
            after = current.copy()
            after.play(move)
            if key(after) not in depth:
                depth[key(after)] = depth[key(current)] + 1
                queue.append(after)
        assert len(depth) < STATES_AT_MOST, "the deal is too big for the breadth-first check"
    return None


def service_par(game: Game) -> tuple[int | None, ParStatus]:
    """The par as the service's background task works it out: the pool's search, then :func:`par_of`."""
    answer = analyse_state(dump_game(game), HINT_BUDGET, 30.0, True)
    par = par_of(DealAnalysis.model_validate({**answer, "code": "PY1-N-AAAAAAS"}))
    return par.moves, par.status


@pytest.mark.parametrize("played", [12, 8, 4])
@pytest.mark.parametrize("rules", RULE_SETS, ids=str)
def test_par_agrees_with_breadth_first_search(rules: Rules, played: int) -> None:
    game = easy_game(rules)
    for text in EASY_CLEARING.split()[:played]:
        game.play(parse_move(text))
    fewest = bfs_moves_to_win(game)
    moves, status = service_par(game)
    assert moves == fewest
    assert status is (ParStatus.KNOWN if fewest is not None else ParStatus.UNWINNABLE)
