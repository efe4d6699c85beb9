"""Players of a deal who never look ahead, and the bots they are measured against (issue 57): the foresight
screen's benchmark (``benchmarks/foresight.py``) and the fair-play tests play them.

Honest: ``greedy`` (the screen's own simplest player, :func:`pyramide.solver.foresight.greedy`),
``random_legal`` (any legal move), ``limited`` (a solver limited to the cards seen: it plans the shortest line for
a stock whose unseen cards are shuffled, and plans again whenever a card it did not expect is drawn). Bots: ``bot``
(the shortest line for the actual stock, learned elsewhere), ``through`` (draws the whole stock, turns it over,
then plays the shortest line: every card seen first, legally). Each returns a winning line, or ``None``.
"""

from __future__ import annotations

import random
from typing import Any

from pyramide.engine import DealCode, Game, Move
from pyramide.engine.layout import Layout
from pyramide.engine.moves import Draw, Recycle
from pyramide.solver import solve
from pyramide.solver.foresight import greedy

CAP = 600
"""Moves after which a player gives up."""


def random_legal(code: DealCode, rng: random.Random) -> list[Move] | None:
    game, line = Game(code), list[Move]()
    while not game.is_won and len(line) < CAP:
        legal = game.legal_moves()
        if not legal:
            return None
        move = rng.choice(legal)
        game.play(move)
        line.append(move)
    return line if game.is_won else None


def limited(code: DealCode, rng: random.Random) -> list[Move] | None:
    """The solver limited to the cards seen (see the module's docstring)."""
    game, line, plan = Game(code), list[Move](), list[Move]()
    stock = list(code.deal().stock)
    seen = 0
    expected: Game | None = None
    while not game.is_won and len(line) < CAP:
        if not plan or expected is None:
            expected = _imagined(code, stock, seen, line, rng)
            analysis = solve(expected, shortest=True, time_limit_s=10)
            if not analysis.winnable or analysis.shortest is None:
                return None
            plan = list(analysis.shortest)
        move = plan.pop(0)
        game.play(move)
        expected.play(move)
        line.append(move)
        if game.recycles_used > 0:
            seen = len(stock)
        elif isinstance(move, Draw):
            seen = max(seen, len(stock) - game.stock_count)
            if expected.waste_top != game.waste_top:
                plan = []
    return line if game.is_won else None


def _imagined(code: DealCode, stock: list[Any], seen: int, line: list[Move], rng: random.Random) -> Game:
    layout = code.deal()
    unseen = stock[seen:]
    rng.shuffle(unseen)
    game = Game.from_layout(Layout(layout.pyramid, layout.waste, (*stock[:seen], *unseen)), code.rules)
    for move in line:
        game.play(move)
    return game


def bot(code: DealCode, _rng: random.Random) -> list[Move] | None:
    analysis = solve(Game(code), shortest=True, time_limit_s=10)
    return None if analysis.shortest is None else list(analysis.shortest)


def through(code: DealCode, _rng: random.Random) -> list[Move] | None:
    """Draw the whole stock, turn it over, play the shortest line from there (no turn-over allowed: no line)."""
    game, line = Game(code), list[Move]()
    while game.stock_count:
        game.play(Draw())
        line.append(Draw())
    if not game.is_legal(Recycle()):
        return None
    game.play(Recycle())
    line.append(Recycle())
    analysis = solve(game, shortest=True, time_limit_s=10)
    return None if analysis.shortest is None else line + list(analysis.shortest)


def honest_line(code: DealCode) -> list[Move]:
    """A winning line chosen without looking ahead: greedy's first win over a few seeds, else the limited solver's."""
    for seed in range(40):
        line = greedy(code, random.Random(seed))
        if line is not None:
            return line
    for seed in range(10):
        line = limited(code, random.Random(seed))
        if line is not None:
            return line
    raise AssertionError(f"no honest win found for {code}")


__all__ = ["bot", "greedy", "honest_line", "limited", "random_legal", "through"]
