"""Solver: how long a shortest winning line takes under the app's rules.

Usage: .venv/bin/python benchmarks/shortest_lines.py [--deals 1000] [--seed 1] [--time-limit SECONDS]
       [--budget STATES] [--slow SECONDS]

Deals seeded random N deals, keeps the first ``--deals`` the solver proves winnable, and times the search for a
winning line with the fewest moves (removals, draws and turn-overs) on each, from the deal, on one core. Prints the
median, mean and worst time, how many ran past the time limit, and the lengths found. Every line is replayed in the
engine and must win. Each deal slower than ``--slow`` seconds is printed as it finishes (its number, time and
states), so a long run shows its worst cases before it ends.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from pyramide.engine import DealCode, Game, Rules
from pyramide.engine.deal_codes import DEAL_COUNT
from pyramide.solver import solve
from pyramide.solver.position import from_game
from pyramide.solver.search import DEFAULT_BUDGET
from pyramide.solver.shortest import shortest_line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per deal (then counted as over)")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET * 5, help="states per deal (then counted as over)")
    parser.add_argument("--slow", type=float, default=10.0, help="print each deal slower than this many seconds")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    times: list[float] = []
    lengths: list[int] = []
    over = 0
    while len(times) < args.deals:
        number = rng.randrange(DEAL_COUNT)
        game = Game(DealCode(Rules(), number=number))
        if not solve(game).winnable:
            continue
        deal, start = from_game(game, pooled=False)
        started = time.perf_counter()
        line = shortest_line(deal, start, args.budget, started + args.time_limit)
        times.append(time.perf_counter() - started)
        if times[-1] > args.slow:
            print(
                f"  deal {number}: {times[-1]:.1f} s, {'no line (a limit)' if line is None else len(line)}", flush=True
            )
        if line is None:
            over += 1
            continue
        replay = game.copy()
        for move in line:
            replay.play(move)
        assert replay.is_won, game.code
        lengths.append(len(line))
    print(f"{args.deals} winnable N deals (seed {args.seed}), time limit {args.time_limit:.0f} s a deal")
    print(
        f"shortest line: median {statistics.median(times):.2f} s, mean {statistics.fmean(times):.2f} s, "
        f"worst {max(times):.2f} s, over the limit {over}; "
        f"moves median {statistics.median(lengths) if lengths else float('nan'):.0f}, "
        f"range {min(lengths, default=0)}-{max(lengths, default=0)}"
    )


if __name__ == "__main__":
    main()
