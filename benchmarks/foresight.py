"""Fair play: how often the foresight screen holds honest wins (false positives) and bots' wins (its aim).

Usage: .venv/bin/python benchmarks/foresight.py [--rules N 2S] [--wins 100] [--seed 1] [--worlds 6]
       [--time-limit SECONDS] [--jobs 2]

For each rule set, deals seeded random deals the solver proves winnable and plays each with strategies that never
look ahead, until each rule set has ``--wins`` honest wins:

- ``greedy``: any removal there is (chosen at random), else a draw or a turn-over;
- ``random``: any legal move, at random (at most 600 moves);
- ``limited``: a solver limited to the cards seen: it plans the shortest line for a stock whose unseen cards are
  shuffled, and plans again whenever a card it did not expect is drawn.

and with the bots the screen is for: ``bot`` plays the deal's shortest line for the actual stock (the two-player
attack: the stock learned by another player), ``through`` draws the whole stock, turns it over and plays the
shortest line from there (every card seen first, legally). Every win is replayed by the engine and screened by
:func:`pyramide.solver.foresight.screen_win` with the time check off (``line_move_ms`` 0: the pace is judged apart,
see docs/fair-play.md), so the shares are the foresight check's alone. Prints per rule set and strategy the wins,
the share held (``foresight`` or ``not_decided``), the median and worst screen time (CPU seconds). Fails (exit 1)
when a screen raises or a line does not win.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from pyramide.engine import UNDO, DealCode, Game, Move, Rules
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.engine.layout import Layout
from pyramide.engine.moves import Draw, Recycle, RemoveKing, RemovePair
from pyramide.solver import solve
from pyramide.solver.foresight import screen_win

HONEST = ("greedy", "random", "limited")
BOTS = ("bot", "through")
CAP = 600


def greedy(code: DealCode, rng: random.Random) -> list[Move] | None:
    game, line = Game(code), list[Move]()
    while not game.is_won and len(line) < CAP:
        legal = game.legal_moves()
        removals = [m for m in legal if isinstance(m, RemovePair | RemoveKing)]
        others = [m for m in legal if isinstance(m, Draw | Recycle)]
        if not removals and not others:
            return None
        move = rng.choice(removals) if removals else others[0]
        game.play(move)
        line.append(move)
    return line if game.is_won else None


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


STRATEGIES = {"greedy": greedy, "random": random_legal, "limited": limited, "bot": bot, "through": through}


def screened(job: tuple[str, str, list[str], int, int, float]) -> dict[str, Any]:
    """One screen, in a worker: its answer and CPU seconds."""
    code, name, record, worlds, seed, limit = job
    started = time.process_time()
    answer = screen_win(code, record, 0, 0, worlds, seed, limit)
    return {"code": code, "name": name, "answer": answer, "cpu_s": time.process_time() - started}


def lines_for(segment: str, wins: int, seed: int) -> list[tuple[str, str, list[str]]]:
    """Each rule set's wins: ``wins`` honest ones in all, and both bots' on the same deals."""
    rules, rng = Rules.from_segment(segment), random.Random(seed)
    found: list[tuple[str, str, list[str]]] = []
    honest = 0
    while honest < wins:
        code = DealCode(rules, number=rng.randrange(DEAL_COUNT))
        if solve(Game(code), time_limit_s=10).winnable is not True:
            continue
        for name, play in STRATEGIES.items():
            line = play(code, random.Random(rng.random()))
            if line is None:
                continue
            replay = Game(code)
            for move in line:
                replay.play(move)
            if not replay.is_won:
                raise SystemExit(f"{name} on {code}: the line does not win")
            found.append((str(code), name, [m.notation() for m in line if m != UNDO]))
            honest += name in HONEST
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", nargs="+", default=["N", "2S"])
    parser.add_argument("--wins", type=int, default=100, help="honest wins per rule set")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worlds", type=int, default=6)
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    for segment in args.rules:
        lines = lines_for(segment, args.wins, args.seed)
        jobs = [
            (code, name, record, args.worlds, index, args.time_limit)
            for index, (code, name, record) in enumerate(lines)
        ]
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(screened, jobs))
        for name in (*HONEST, *BOTS):
            mine = [r for r in results if r["name"] == name]
            if not mine:
                continue
            held = [r for r in mine if r["answer"]["reasons"]]
            undecided = sum("not_decided" in r["answer"]["reasons"] for r in mine)
            cpu = [r["cpu_s"] for r in mine]
            print(
                f"{segment:3} {name:8} wins {len(mine):4}  held {len(held):4} ({100 * len(held) / len(mine):5.1f} %,"
                f" {undecided} not decided)  screen CPU median {statistics.median(cpu):.2f} s, worst {max(cpu):.2f} s",
                flush=True,
            )
        honest = [r for r in results if r["name"] in HONEST]
        share = 100 * sum(bool(r["answer"]["reasons"]) for r in honest) / len(honest)
        print(f"{segment:3} honest   wins {len(honest):4}  held {share:5.1f} %", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
