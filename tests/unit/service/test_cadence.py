"""A challenge win's cadence (``stats.fairness``): what the floor ``PYRAMIDE_MIN_MOVE_MS`` is compared with."""

from __future__ import annotations

import uuid

from pyramide.service.stats import Cadence, FairPlay, GameResult, Verdict


def _win(times: list[int], moves: int | None = None) -> GameResult:
    """A challenge win whose operations arrived at ``times`` (ms after the first)."""
    return GameResult(
        player=uuid.uuid4(),
        game=uuid.uuid4(),
        code=None,
        won=True,
        elapsed_ms=times[-1],
        moves=len(times) if moves is None else moves,
        undos=0,
        score=0,
        finished_ms=0,
        challenge="2042-06-11-2S",
        board="c:2042-06-11-2S",
        times=times,
    )


def test_evenly_spaced_moves_are_judged_at_their_own_interval() -> None:
    """61 moves 152 ms apart span 60 intervals: the whole game's figure is 152 ms, as the median is, and a floor
    of 152 ms passes it (issue 57: it was 149.5 ms, the time divided by the moves, and held)."""
    win = _win([152 * i for i in range(61)])
    assert Cadence.of(win) == Cadence(median_interval_ms=152, per_move_ms=152)
    assert FairPlay("any", 152).verdict(win) is Verdict.ENTER
    assert FairPlay("any", 153).verdict(win) is Verdict.REVIEW


def test_undos_are_intervals_too() -> None:
    """The figure counts every operation's interval, an undo's included: 3 moves and 2 undos 100 ms apart."""
    win = _win([0, 100, 200, 300, 400], moves=3)
    assert Cadence.of(win).per_move_ms == 100
